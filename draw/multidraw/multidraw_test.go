//go:build cgo && !js

package multidraw_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gpumem/gpumem/draw"
	"github.com/gpumem/gpumem/draw/multidraw"
)

// TestSameImage draws a world of a few hundred meshes every way (own
// buffers; the slabs with Direct, MultiDraw and Indirect) before and
// after churn (removals, additions, a sweep, a compaction, a shrink, each
// handed to the table), and requires the images to be equal pixel for
// pixel and to show every mesh. Direct is the fallback of a device
// without indirect first instance, Indirect the loop of a device without
// multi-draw: both are forced here.
func TestSameImage(t *testing.T) {
	g := openGPU(t)
	if multidraw.Best(g.wd) < multidraw.MultiDraw {
		t.Logf("the adapter lacks indirect first instance: only ways a and b run")
	}
	w := newWorld(t, g, 400, 200, 200, 128)
	for round := range 3 {
		if round > 0 {
			if err := w.churn(round); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.tab.Check(); err != nil {
			t.Fatal(err)
		}
		imgs, err := w.images(nil)
		if err != nil {
			t.Fatal(err)
		}
		if covered := countNonBlack(imgs["a"]); covered < 400*20 {
			t.Fatalf("round %d: the reference image covers %d pixels", round, covered)
		}
		if err := compare(imgs); err != nil {
			t.Errorf("round %d: %v", round, err)
		}
		t.Logf("round %d: %d ways equal; table %+v", round, len(imgs), w.tab.Stats())
		if st := w.tab.Stats(); st.Groups < 3 {
			t.Fatalf("round %d: %d groups: the test wants several spans", round, st.Groups)
		}
	}
	if st := w.tab.Stats(); st.Patched == 0 || st.Moved == 0 {
		t.Fatalf("the churn moved nothing: %+v", st)
	}
}

// TestModes: a mode the device lacks is refused, and a list whose
// records are not applied yet is an error, not a draw of garbage.
func TestModes(t *testing.T) {
	g := openGPU(t)
	w := newWorld(t, g, 10, 16, 16, 0)
	if _, err := multidraw.New(g.dev, w.tab, 7); !errors.Is(err, draw.ErrInvalidOptions) {
		t.Errorf("mode 7: %v", err)
	}
	if multidraw.Best(g.wd) < multidraw.MultiDraw {
		if _, err := multidraw.New(g.dev, w.tab, multidraw.MultiDraw); !errors.Is(err, multidraw.ErrUnsupported) {
			t.Errorf("MultiDraw without the feature: %v", err)
		}
		return
	}
	d, err := multidraw.New(g.dev, w.tab, multidraw.MultiDraw)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	// Track a mesh without applying: its record is not on the device.
	w.list.Reset()
	for range 5000 {
		if err := w.add(0); err != nil {
			t.Fatal(err)
		}
		if err := w.meshes.Flush(); err != nil {
			t.Fatal(err)
		}
		id, err := w.tab.Track(w.hs[0], 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.list.Add(id, 1, 0); err != nil && !errors.Is(err, draw.ErrFull) {
			t.Fatal(err)
		}
	}
	enc, err := g.wd.TryCreateCommandEncoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Release()
	w.list.Reset()
	id, _ := w.tab.Lookup(w.hs[0])
	if err := w.list.Add(id, 1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Prepare(enc, w.list); !errors.Is(err, multidraw.ErrNotApplied) {
		t.Errorf("prepare before apply: %v", err)
	}
	d.Release()
	d.Release()
	if _, err := d.Prepare(enc, w.list); err == nil {
		t.Error("prepare after release: no error")
	}
}

func countNonBlack(px []byte) int {
	n := 0
	for p := 0; p < len(px); p += 4 {
		if px[p] != 0 || px[p+1] != 0 || px[p+2] != 0 {
			n++
		}
	}
	return n
}

func countDiff(a, b []byte) int {
	n := 0
	for p := 0; p+4 <= len(a) && p+4 <= len(b); p += 4 {
		if !bytes.Equal(a[p:p+4], b[p:p+4]) {
			n++
		}
	}
	return n
}

// TestKeptList keeps one list across frames in MultiDrawCount mode: a
// frame of a still scene neither encodes nor uploads it and draws the
// same image; a list filled again alike keeps its version and is not
// even compared with what was sent; another list of the same draws is
// compared, neither encoded nor uploaded; a list of other draws, or of as many in another order, is uploaded and
// draws what MultiDraw draws of them.
// A frame whose encoder is dropped after Prepare leaves nothing stale for
// the next (the expansion runs every frame), and after a compaction
// handed to the table the kept list draws what a list filled anew draws.
func TestKeptList(t *testing.T) {
	g := openGPU(t)
	if multidraw.Best(g.wd) < multidraw.MultiDrawCount {
		t.Skip("the adapter lacks multi-draw indirect count")
	}
	w := newWorld(t, g, 400, 200, 200, 128)
	kept := way{name: "c-kept", mode: multidraw.MultiDrawCount, kept: true}
	fresh := way{name: "c-count", mode: multidraw.MultiDrawCount}
	image := func(wy way) []byte {
		t.Helper()
		if err := w.frame(wy); err != nil {
			t.Fatal(err)
		}
		px, err := w.pixels()
		if err != nil {
			t.Fatal(err)
		}
		return px
	}
	first := image(kept)
	d := w.drawer[multidraw.MultiDrawCount]
	work := func(what string, encodes, held, uploads int) {
		t.Helper()
		e, h, u := multidraw.Work(d)
		if e != encodes || h != held || u != uploads {
			t.Fatalf("%s: %d encodes, %d lists held and %d uploads in all, want %d, %d and %d", what, e, h, u, encodes, held, uploads)
		}
	}
	enc, held, up := multidraw.Work(d)
	if again := image(kept); !bytes.Equal(again, first) {
		t.Fatalf("a still frame differs in %d pixels", countDiff(again, first))
	}
	work("a still frame", enc, held, up)
	if again := image(fresh); !bytes.Equal(again, first) {
		t.Fatalf("a list filled again alike differs in %d pixels", countDiff(again, first))
	}
	work("a list filled again alike", enc, held, up)
	other, err := draw.NewList(w.tab, w.n)
	if err != nil {
		t.Fatal(err)
	}
	mine := w.list
	w.list = other
	if again := image(fresh); !bytes.Equal(again, first) {
		t.Fatalf("another list of the same draws differs in %d pixels", countDiff(again, first))
	}
	w.list = mine
	w.filled = ""
	work("another list of the same draws", enc, held+1, up)
	sub := image(way{name: "c-count-visible", mode: multidraw.MultiDrawCount, only: true})
	work("a list of other draws", enc+1, held+1, up+1)
	if want := image(way{name: "d-ref", mode: multidraw.MultiDraw, only: true}); !bytes.Equal(sub, want) {
		t.Fatalf("the visible draws differ from MultiDraw's in %d pixels", countDiff(sub, want))
	}
	// Every draw again, then in the opposite order: as many draws in the
	// same spans, in another order within them.
	image(fresh)
	enc, held, up = multidraw.Work(d)
	w.list.Reset()
	for k := len(w.ids) - 1; k >= 0; k-- {
		if err := w.list.Add(w.ids[k], 1, uint32(k)); err != nil {
			t.Fatal(err)
		}
	}
	w.filled = fillOf(kept)
	if again := image(kept); !bytes.Equal(again, first) {
		t.Fatalf("the draws in the opposite order differ in %d pixels", countDiff(again, first))
	}
	work("the draws in the opposite order", enc+1, held, up+1)
	// Removals, then a frame dropped after its Prepare, then the kept
	// list's next frame at the same version.
	for k := 0; k < w.n; k += 4 {
		if err := w.remove(k); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.apply(); err != nil {
		t.Fatal(err)
	}
	if err := w.fill(kept); err != nil {
		t.Fatal(err)
	}
	dropped, err := g.wd.TryCreateCommandEncoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Prepare(dropped, w.list); err != nil {
		t.Fatal(err)
	}
	dropped.Release()
	got := image(kept)
	if want := image(fresh); !bytes.Equal(got, want) {
		t.Fatalf("after a dropped frame the kept list differs from a list filled anew in %d pixels", countDiff(got, want))
	}
	moved := w.tab.Stats().Moved
	if err := w.meshes.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := w.apply(); err != nil {
		t.Fatal(err)
	}
	if w.tab.Stats().Moved == moved {
		t.Fatal("the compaction moved no tracked mesh")
	}
	enc, held, up = multidraw.Work(d)
	got = image(kept)
	work("the kept list after moves (the same slots)", enc, held+1, up)
	if want := image(fresh); !bytes.Equal(got, want) {
		t.Fatalf("the kept list differs from a list filled anew in %d pixels", countDiff(got, want))
	}
	if err := w.tab.Check(); err != nil {
		t.Fatal(err)
	}
}
