//go:build cgo && !js

package multidraw_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/draw"
	"github.com/gpumem/gpumem/draw/multidraw"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// culledWays are the ways that cull on the GPU; each must draw what
// d-ref, c over the list culled on the CPU, draws.
var culledWays = []string{"d", "d-zero", "d-indirect"}

// drawWays draws the named ways the device allows and returns their
// images by name.
func (w *world) drawWays(names ...string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, wy := range ways {
		if !slicesContains(names, wy.name) || !wy.allowed(w.g.wd) {
			continue
		}
		if err := w.frame(wy); err != nil {
			return nil, err
		}
		px, err := w.pixels()
		if err != nil {
			return nil, err
		}
		out[wy.name] = px
	}
	return out, nil
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestCull culls a world of a few hundred meshes against a table of
// frustums, before and after churn, and requires every culling way's
// image to equal c's image of the draws the frustum keeps, culled on the
// CPU: spheres that straddle a plane are kept (some with their centre
// outside), the others inside kept, the rest culled. With every sphere inside, the image is c's of the
// whole world; with none, it is empty. In MultiDrawCount mode the
// counts the GPU wrote are the CPU's, span by span.
func TestCull(t *testing.T) {
	g := openGPU(t)
	if multidraw.Best(g.wd) < multidraw.MultiDraw {
		t.Skip("the adapter lacks indirect first instance: no culling")
	}
	if multidraw.Best(g.wd) < multidraw.MultiDrawCount {
		t.Logf("the adapter lacks multi-draw indirect count: the fallbacks run alone")
	}
	w := newWorld(t, g, 400, 200, 200, 128)
	s := float32(1) / float32(w.side)
	mid := -1 + s*(2*float32(w.side/2)+1) // a column's and a row's centre
	box := multidraw.Frustum{{X: 1, D: 1}, {X: -1, D: 1}, {Y: 1, D: 1}, {Y: -1, D: 1}, {Z: 1, D: 1}, {Z: -1, D: 1}}
	corner := box
	corner[0] = multidraw.Plane{X: -2, D: 2*mid - s} // x <= mid - s/2, not of length 1
	corner[2] = multidraw.Plane{Y: 1, D: -mid - s/2} // y >= mid + s/2
	corner[4] = multidraw.Plane{X: 1, Y: 1, D: 0.5 + s/4}
	none := box
	none[1] = multidraw.Plane{X: -1, D: -2} // x <= -2
	tests := []struct {
		name     string
		f        multidraw.Frustum
		min, max float64 // the fraction culled
		straddle bool    // some kept sphere's centre is outside a plane
	}{
		{"half", w.half(), 0.3, 0.7, true},
		{"corner", corner, 0.5, 0.95, true},
		{"all", box, 0, 0, false},
		{"none", none, 1, 1, false},
		{"projected", multidraw.FrustumOf([16]float32{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0.5, 0, 0.5 + s, 0, 0.5, 1}), 0.5, 0.95, true},
	}
	for round := range 2 {
		if round > 0 {
			if err := w.churn(round); err != nil {
				t.Fatal(err)
			}
		}
		for _, tt := range tests {
			w.frustum = tt.f
			frac, margin := w.culled()
			if frac < tt.min || frac > tt.max {
				t.Fatalf("round %d %s: %.2f culled, want %.2f to %.2f", round, tt.name, frac, tt.min, tt.max)
			}
			if margin < float64(s)/100 {
				t.Fatalf("round %d %s: a sphere %g from a plane's test: the GPU may decide it otherwise", round, tt.name, margin)
			}
			if got := w.straddles(); got != tt.straddle {
				t.Fatalf("round %d %s: straddling spheres kept %v, want %v", round, tt.name, got, tt.straddle)
			}
			imgs, err := w.drawWays(append([]string{"c", "d-ref"}, culledWays...)...)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range culledWays {
				if px, ok := imgs[name]; ok && !bytes.Equal(px, imgs["d-ref"]) {
					t.Errorf("round %d %s: way %s differs from d-ref in %d pixels", round, tt.name, name, countDiff(px, imgs["d-ref"]))
				}
			}
			switch tt.name {
			case "all":
				if !bytes.Equal(imgs["d-ref"], imgs["c"]) {
					t.Errorf("round %d: nothing culled, yet d-ref differs from c", round)
				}
			case "none":
				if n := countNonBlack(imgs["d-ref"]); n != 0 {
					t.Errorf("round %d: everything culled, yet %d pixels drawn", round, n)
				}
			}
			if _, ok := imgs["d"]; ok {
				// d was drawn last but for the fallbacks, which leave
				// its counts alone.
				if err := w.checkCounts(); err != nil {
					t.Errorf("round %d %s: %v", round, tt.name, err)
				}
			}
		}
	}
}

// straddles reports whether a sphere the frustum keeps has its centre
// outside a plane: kept for the part of it inside.
func (w *world) straddles() bool {
	for k, id := range w.ids {
		if id == (draw.ID{}) {
			continue
		}
		if vis, _ := w.visible(k); !vis {
			continue
		}
		c := w.spheres[k]
		for _, p := range w.frustum {
			if float64(p.X)*float64(c.X)+float64(p.Y)*float64(c.Y)+float64(p.Z)*float64(c.Z)+float64(p.D) < 0 {
				return true
			}
		}
	}
	return false
}

// checkCounts compares the counts of the MultiDrawCount drawer's last
// culled Prepare, read back, with the draws the frustum keeps in each
// span of the world's list.
func (w *world) checkCounts() error {
	d := w.drawer[multidraw.MultiDrawCount]
	spans, err := w.list.Pack()
	if err != nil {
		return err
	}
	got := make([]byte, 4*len(spans))
	if err := w.g.dev.ReadBuffer(multidraw.Counts(d), 0, got); err != nil {
		return err
	}
	draws := w.list.Draws()
	for k, sp := range spans {
		want := uint32(0)
		for _, dr := range draws[sp.First : sp.First+sp.Count] {
			if vis, _ := w.visible(int(dr.Object)); vis {
				want++
			}
		}
		if c := binary.LittleEndian.Uint32(got[4*k:]); c != want {
			return errors.New("span counts differ from the CPU's: " + spanString(k, c, want))
		}
	}
	return nil
}

func spanString(k int, got, want uint32) string {
	return "span " + itoa(k) + ": " + itoa(int(got)) + " visible, want " + itoa(int(want))
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestCullFallback forces the fallback of a device without multi-draw
// indirect count: Best says MultiDraw, MultiDrawCount is refused, and
// culled draws of no instances draw what the CPU's culling draws.
func TestCullFallback(t *testing.T) {
	g := openGPU(t, wgpu.NativeFeatureMultiDrawIndirectCount)
	if multidraw.Best(g.wd) != multidraw.MultiDraw {
		t.Skipf("best mode %v without the count feature", multidraw.Best(g.wd))
	}
	w := newWorld(t, g, 100, 64, 64, 32)
	if _, err := multidraw.New(g.dev, w.tab, multidraw.MultiDrawCount); !errors.Is(err, multidraw.ErrUnsupported) {
		t.Fatalf("MultiDrawCount without the feature: %v", err)
	}
	imgs, err := w.drawWays(append([]string{"d-ref"}, culledWays...)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := imgs["d"]; ok || len(imgs) != 3 {
		t.Fatalf("ways drawn: %d, d among them %v", len(imgs), ok)
	}
	if err := compare(imgs); err != nil {
		t.Fatal(err)
	}
}

// TestCullErrors: bad input to PrepareCulled is an error, never a panic
// or a draw of garbage, and leaves the drawer usable.
func TestCullErrors(t *testing.T) {
	g := openGPU(t)
	best := multidraw.Best(g.wd)
	if best < multidraw.MultiDraw {
		t.Skip("the adapter lacks indirect first instance: no culling")
	}
	w := newWorld(t, g, 50, 32, 32, 0)
	d, err := multidraw.New(g.dev, w.tab, best)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	direct, err := multidraw.New(g.dev, w.tab, multidraw.Direct)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Release()
	buffer := func(size uint64, usage device.Usage) device.Buffer {
		b, err := g.dev.CreateBuffer(device.BufferDesc{Label: "test bounds", Size: size, Usage: usage})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Release)
		return b
	}
	small := buffer(multidraw.SphereBytes*25, device.Storage|device.CopyDst)
	vertexOnly := buffer(multidraw.SphereBytes*50, device.Vertex|device.CopyDst)
	zero, nan := w.frustum, w.frustum
	zero[3] = multidraw.Plane{D: 1}
	nan[5].X = float32(math.NaN())
	fill := func(object uint32) {
		w.list.Reset()
		for k, id := range w.ids {
			o := uint32(k)
			if k == 0 && object > 0 {
				o = object
			}
			if err := w.list.Add(id, 1, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name   string
		d      *multidraw.Drawer
		bounds device.Buffer
		f      multidraw.Frustum
		object uint32 // the first draw's object, 0 for its own
		want   error
	}{
		{"direct", direct, w.bounds, w.frustum, 0, multidraw.ErrUnsupported},
		{"bounds too small", d, small, w.frustum, 0, multidraw.ErrNoBounds},
		{"object out of range", d, w.bounds, w.frustum, 50, multidraw.ErrNoBounds},
		{"object far out of range", d, w.bounds, w.frustum, math.MaxUint32, multidraw.ErrNoBounds},
		{"no bounds", d, nil, w.frustum, 0, draw.ErrInvalidOptions},
		{"bounds not storage", d, vertexOnly, w.frustum, 0, device.ErrInvalidUsage},
		{"plane of no direction", d, w.bounds, zero, 0, draw.ErrInvalidOptions},
		{"plane of NaN", d, w.bounds, nan, 0, draw.ErrInvalidOptions},
	}
	for _, tt := range tests {
		enc, err := g.wd.TryCreateCommandEncoder(nil)
		if err != nil {
			t.Fatal(err)
		}
		fill(tt.object)
		if _, err := tt.d.PrepareCulled(enc, w.list, tt.bounds, tt.f); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
		enc.Release()
	}
	// The drawer still culls right.
	imgs, err := w.drawWays("d-ref", "d", "d-zero")
	if err != nil {
		t.Fatal(err)
	}
	if err := compare(imgs); err != nil {
		t.Fatal(err)
	}
	d.Release()
	enc, err := g.wd.TryCreateCommandEncoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Release()
	if _, err := d.PrepareCulled(enc, w.list, w.bounds, w.frustum); !errors.Is(err, device.ErrReleased) {
		t.Errorf("after release: %v", err)
	}
}

// TestFrustumOf: a point is inside every plane of a matrix's frustum
// exactly when the matrix takes it inside WebGPU's clip volume.
func TestFrustumOf(t *testing.T) {
	// A perspective projection (near 0.5, far 10) after a rotation and a
	// translation, column by column.
	const n, f = 0.5, 10.0
	c, s := math.Cos(0.3), math.Sin(0.3)
	view := [16]float64{c, 0, -s, 0, 0, 1, 0, 0, s, 0, c, 0, 0.2, -0.1, -3, 1}
	proj := [16]float64{1.2, 0, 0, 0, 0, 1.6, 0, 0, 0, 0, f / (n - f), -1, 0, 0, n * f / (n - f), 0}
	var m [16]float32
	var m64 [16]float64
	for col := range 4 {
		for row := range 4 {
			var v float64
			for k := range 4 {
				v += proj[4*k+row] * view[4*col+k]
			}
			m64[4*col+row], m[4*col+row] = v, float32(v)
		}
	}
	planes := multidraw.FrustumOf(m)
	seed := uint64(1)
	rnd := func() float64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return float64(seed>>11)/(1<<53)*24 - 12
	}
	in := 0
	for range 20000 {
		p := [4]float64{rnd(), rnd(), rnd(), 1}
		var clip [4]float64
		for row := range 4 {
			for k := range 4 {
				clip[row] += m64[4*k+row] * p[k]
			}
		}
		w := clip[3]
		inClip := -w <= clip[0] && clip[0] <= w && -w <= clip[1] && clip[1] <= w && 0 <= clip[2] && clip[2] <= w
		inPlanes, near := true, false
		for _, pl := range planes {
			d := float64(pl.X)*p[0] + float64(pl.Y)*p[1] + float64(pl.Z)*p[2] + float64(pl.D)
			inPlanes = inPlanes && d >= 0
			near = near || math.Abs(d) < 1e-3
		}
		if near {
			continue // float32 planes may decide a point this close either way
		}
		if inClip != inPlanes {
			t.Fatalf("point %v: in clip %v, in planes %v", p, inClip, inPlanes)
		}
		if inClip {
			in++
		}
	}
	if in < 100 {
		t.Fatalf("%d points inside: the test draws too few", in)
	}
}
