package arena_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
)

// shrinkWorld is an arena filled with known data, most of it then freed.
type shrinkWorld struct {
	a    *arena.Arena
	dev  device.Device
	live map[arena.Handle][]byte
}

func newShrinkWorld(t *testing.T, dev device.Device, o arena.Options, keep float64) *shrinkWorld {
	t.Helper()
	a, err := arena.New(dev, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Release)
	w := &shrinkWorld{a: a, dev: dev, live: map[arena.Handle][]byte{}}
	r := rand.New(rand.NewPCG(8, 9))
	for i := range 400 {
		n := 1 + r.Uint32N(16)
		h, err := a.Allocate(n)
		if err != nil {
			t.Fatal(err)
		}
		data := bytes.Repeat([]byte{byte(i), byte(i >> 8), 5, 7}, int(n))
		if err := a.Write(h, 0, data); err != nil {
			t.Fatal(err)
		}
		w.live[h] = data
	}
	for h := range w.live {
		if r.Float64() >= keep {
			if err := a.Free(h); err != nil {
				t.Fatal(err)
			}
			delete(w.live, h)
		}
	}
	return w
}

// verify reads every live allocation back.
func (w *shrinkWorld) verify(t *testing.T) {
	t.Helper()
	for h, want := range w.live {
		got := make([]byte, len(want))
		if err := w.a.Read(h, 0, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%v lost its bytes", h)
		}
	}
}

// TestShrinkWatch: with ShrinkBelow, an arena of which a fifth stays live
// shrinks within a few dozen Sweep calls to at most its reserved elements
// plus a sixteenth, sweeping the free space to the tail first, with every
// byte kept; one that stays more than ShrinkBelow full never shrinks.
func TestShrinkWatch(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		o := arena.Options{InitialElems: 64, ShrinkBelow: 0.5, ShrinkAfter: 5, SweepLimits: arena.SweepLimits{Moves: 16}}
		w := newShrinkWorld(t, dev, o, 0.2)
		before := w.a.Stats()
		calls := 0
		for ; calls < 200 && w.a.Stats().Shrinks == 0; calls++ {
			if _, err := w.a.Sweep(arena.SweepLimits{}); err != nil {
				t.Fatal(err)
			}
		}
		st := w.a.Stats()
		if st.Shrinks != 1 {
			t.Fatalf("no shrink after %d Sweep calls: %+v", calls, st)
		}
		if float64(st.CapacityElems) > 1.0625*float64(st.ReservedElems)+1 || st.CapacityElems < uint32(st.ReservedElems) {
			t.Fatalf("capacity %d for %d reserved (was %d)", st.CapacityElems, st.ReservedElems, before.CapacityElems)
		}
		t.Logf("%d calls: capacity %d -> %d for %d reserved, %d moves", calls, before.CapacityElems, st.CapacityElems, st.ReservedElems, st.Moves)
		w.verify(t)
		// The arena keeps working: it grows again as it fills.
		for i := range 50 {
			h, err := w.a.Allocate(8)
			if err != nil {
				t.Fatal(err)
			}
			data := bytes.Repeat([]byte{byte(i), 1, 2, 3}, 8)
			if err := w.a.Write(h, 0, data); err != nil {
				t.Fatal(err)
			}
			w.live[h] = data
		}
		w.verify(t)

		full := newShrinkWorld(t, dev, o, 0.7)
		for range 200 {
			if _, err := full.a.Sweep(arena.SweepLimits{}); err != nil {
				t.Fatal(err)
			}
		}
		if s := full.a.Stats(); s.Shrinks != 0 {
			t.Fatalf("an arena %d of %d full shrank", s.ReservedElems, s.CapacityElems)
		}
	})
}

// TestShrinkNow: Shrink compacts and shrinks at once, returning the bytes
// given back and reporting the moves and the new buffer in Changes, and a
// device that refuses the smaller buffer leaves the arena compacted,
// whole and usable.
func TestShrinkNow(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		w := newShrinkWorld(t, dev, arena.Options{InitialElems: 64}, 0.3)
		w.a.Changes(nil) // the growths of the world's making
		before, old := w.a.Stats(), w.a.Buffer()
		freed, err := w.a.Shrink()
		if err != nil {
			t.Fatal(err)
		}
		st := w.a.Stats()
		if st.Shrinks != 1 || float64(st.CapacityElems) > 1.0625*float64(st.ReservedElems)+1 {
			t.Fatalf("stats %+v", st)
		}
		if want := uint64(before.CapacityElems-st.CapacityElems) * uint64(w.a.ElemSize()); freed != want {
			t.Errorf("Shrink freed %d bytes, want %d", freed, want)
		}
		var moved, replaced int
		for _, c := range w.a.Changes(nil) {
			switch {
			case c.Kind == memory.Moved && c.Buffer == w.a.Buffer():
				moved++
			case c.Kind == memory.Replaced && c.Old == old && c.Buffer == w.a.Buffer():
				replaced++
			default:
				t.Errorf("unexpected change %+v", c)
			}
		}
		if moved == 0 || replaced != 1 {
			t.Errorf("Changes: %d moves, %d replacements; want some and 1", moved, replaced)
		}
		w.verify(t)
	})
	// The same world again, on a device that refuses the next creation.
	dry := testdevice.Host(t, host.Options{})
	newShrinkWorld(t, dry, arena.Options{InitialElems: 64}, 0.3)
	dev := testdevice.Host(t, host.Options{FailCreateAt: dry.Stats().Creates + 1})
	w := newShrinkWorld(t, dev, arena.Options{InitialElems: 64}, 0.3)
	before := w.a.Stats()
	if _, err := w.a.Shrink(); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("Shrink on a refusing device: %v", err)
	}
	if st := w.a.Stats(); st.CapacityElems != before.CapacityElems || st.Shrinks != 0 {
		t.Fatalf("after a refused shrink: %+v", st)
	}
	w.verify(t)
	if _, err := w.a.Allocate(4); err != nil {
		t.Fatal(err)
	}
}

// TestPlaceSomeGrowth: PlaceSome takes a request while growth can serve
// it: its bin's size after the used range stays within MaxElems.
func TestPlaceSomeGrowth(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	for _, c := range []struct {
		elems uint32
		want  bool
	}{{1, true}, {144, true}, {150, false}, {300, false}} { // 150's bin is 160 long
		a, err := arena.New(dev, arena.Options{InitialElems: 64, MaxElems: 256})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Allocate(100); err != nil { // grows to hold it
			t.Fatal(err)
		}
		ps, _, err := a.PlaceSome(nil, []arena.Request{{Elems: c.elems}}, nil)
		if got := err == nil && ps[0].Handle != (arena.Handle{}); got != c.want || err != nil {
			t.Errorf("PlaceSome(%d) with 100 used of at most 256: %v (%v), want %v", c.elems, got, err, c.want)
		}
		a.Release()
	}
}
