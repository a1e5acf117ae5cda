package arena_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/staging"
)

// planeModel is what every plane of every live allocation must hold.
type planeModel struct {
	a     *arena.Arena
	dev   device.Device
	sizes []uint32 // element size per plane
	data  map[arena.Handle][][]byte
}

// check reads every live allocation's bytes in every plane at its one
// offset, and checks that the planes have one capacity in elements.
func (m *planeModel) check(t *testing.T, step string) {
	t.Helper()
	capElems := uint64(m.a.Stats().CapacityElems)
	for p, es := range m.sizes {
		if got := m.a.PlaneBuffer(p).Size(); got != capElems*uint64(es) {
			t.Fatalf("%s: plane %d holds %d bytes, want %d elements of %d", step, p, got, capElems, es)
		}
	}
	whole := make([][]byte, len(m.sizes)) // every plane, read once
	for p := range whole {
		whole[p] = make([]byte, m.a.PlaneBuffer(p).Size())
		if err := m.dev.ReadBuffer(m.a.PlaneBuffer(p), 0, whole[p]); err != nil {
			t.Fatalf("%s: read plane %d: %v", step, p, err)
		}
	}
	for h, planes := range m.data {
		off, err := m.a.Offset(h)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		for p, want := range planes {
			at := uint64(off) * uint64(m.sizes[p])
			if got := whole[p][at : at+uint64(len(want))]; !bytes.Equal(got, want) {
				t.Fatalf("%s: plane %d of %v at element %d: bytes differ", step, p, h, off)
			}
		}
	}
}

// TestPlanes: allocations of an arena with planes start at one element
// offset in every plane, and Place, Rewrite, growth, sweeps, compaction
// and shrinking keep every plane's bytes where that offset says.
func TestPlanes(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		for _, useBelt := range []bool{false, true} {
			var up arena.Uploader
			if useBelt {
				b, err := staging.New(dev, staging.Options{ChunkBytes: 4 << 10})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Release()
				up = b
			}
			guard := uint32(0)
			if useBelt {
				guard = 16 // guards take elements in every plane
			}
			a, err := arena.New(dev, arena.Options{Label: "planes", ElemSize: 12, Planes: []uint32{4, 8},
				InitialElems: 64, MinElems: 64, ShrinkBelow: 0.3, ShrinkAfter: 1, GuardBytes: guard})
			if err != nil {
				t.Fatal(err)
			}
			m := &planeModel{a: a, dev: dev, sizes: []uint32{12, 4, 8}, data: map[arena.Handle][][]byte{}}
			r := rand.New(rand.NewPCG(3, 4))
			fill := func(n int) []byte {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				return b
			}
			for step := range 120 {
				switch op := r.IntN(10); {
				case op < 4:
					reqs := make([]arena.Request, 1+r.IntN(6))
					want := make([][][]byte, len(reqs))
					for i := range reqs {
						n := 1 + r.Uint32N(40)
						w := [][]byte{fill(int(n) * 12), fill(int(n) * 4), fill(int(n) * 8)}
						reqs[i] = arena.Request{Owner: uint64(step), Elems: n, Data: w[0], Planes: [][]byte{w[1], w[2]}}
						if i%3 == 1 { // a plane left out reads as zeros
							reqs[i].Planes = reqs[i].Planes[:1]
							clear(w[2])
						}
						want[i] = w
					}
					ps, _, err := a.Place(nil, reqs, up)
					if err != nil {
						t.Fatalf("step %d: place: %v", step, err)
					}
					for i, p := range ps {
						m.data[p.Handle] = want[i]
					}
				case op < 6:
					for h := range m.data {
						if err := a.Free(h); err != nil {
							t.Fatal(err)
						}
						delete(m.data, h)
						if r.IntN(2) == 0 {
							break
						}
					}
				case op == 6:
					for h, w := range m.data {
						w[1] = fill(len(w[1]))
						if err := a.RewritePlane(h, 1, w[1], up); err != nil {
							t.Fatal(err)
						}
						break
					}
				case op == 7:
					if _, err := a.Sweep(arena.SweepLimits{Moves: 3}); err != nil {
						t.Fatal(err)
					}
				case op == 8:
					if _, err := a.Compact(); err != nil {
						t.Fatal(err)
					}
				default:
					if _, err := a.Shrink(); err != nil {
						t.Fatal(err)
					}
				}
				if useBelt {
					f, err := dev.Fence()
					if err == nil {
						err = up.(*staging.Belt).EndFrame(f)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				m.check(t, "step")
				if bad, err := a.CheckGuards(); err != nil || len(bad) != 0 {
					t.Fatalf("step %d: guards %v broken (%v)", step, bad, err)
				}
			}
			a.Release()
		}
	})
}

// TestPlanesRefused: bad plane options and data are refused, and a
// refused plane buffer leaves the arena as it was.
func TestPlanesRefused(t *testing.T) {
	dev := openHost(t)
	for _, o := range []arena.Options{
		{ElemSize: 4, Planes: []uint32{6}},
		{ElemSize: 4, Planes: []uint32{0}},
		{ElemSize: 4, Planes: make([]uint32, arena.MaxPlanes)},
	} {
		if _, err := arena.New(dev, o); !errors.Is(err, arena.ErrInvalidOptions) {
			t.Errorf("%+v: got %v, want ErrInvalidOptions", o, err)
		}
	}
	a, err := arena.New(dev, arena.Options{ElemSize: 4, Planes: []uint32{8}, InitialElems: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	for _, r := range []arena.Request{
		{Elems: 2, Planes: [][]byte{make([]byte, 17)}},
		{Elems: 2, Planes: [][]byte{nil, nil}},
	} {
		if _, _, err := a.Place(nil, []arena.Request{r}, nil); !errors.Is(err, arena.ErrInvalidSize) {
			t.Errorf("planes %d: got %v, want ErrInvalidSize", len(r.Planes), err)
		}
	}
	h, err := a.Allocate(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.RewritePlane(h, 2, nil, nil); !errors.Is(err, arena.ErrInvalidSize) {
		t.Errorf("plane 2 of 2: got %v, want ErrInvalidSize", err)
	}
	if a.PlaneBuffer(2) != nil || a.PlaneBuffer(-1) != nil || a.Planes() != 2 {
		t.Errorf("PlaneBuffer out of range, or Planes() = %d", a.Planes())
	}
}

// TestPlaceSplitGather: runs of megabytes gathered by several goroutines
// (Options.Workers) land byte for byte where one goroutine puts them, in
// every plane, margins included, through a belt and through queue
// writes; a batch holding a Fill is gathered with its Fill never called
// concurrently.
func TestPlaceSplitGather(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		for _, workers := range []int{1, 3, 7} {
			for _, guard := range []uint32{0, 24} {
				for _, useBelt := range []bool{false, true} {
					placeSplit(t, dev, workers, guard, useBelt)
				}
			}
		}
	})
}

func placeSplit(t *testing.T, dev device.Device, workers int, guard uint32, useBelt bool) {
	var up arena.Uploader
	if useBelt {
		b, err := staging.New(dev, staging.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Release()
		up = b
	}
	a, err := arena.New(dev, arena.Options{ElemSize: 12, Planes: []uint32{4}, InitialElems: 1 << 20,
		GuardBytes: guard, Workers: workers, RoundToBins: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	m := &planeModel{a: a, dev: dev, sizes: []uint32{12, 4}, data: map[arena.Handle][][]byte{}}
	r := rand.New(rand.NewPCG(uint64(workers), uint64(guard)))
	var inFill, overlaps atomic.Int32
	for round := range 3 {
		reqs := make([]arena.Request, 3000)
		want := make([][][]byte, len(reqs))
		for i := range reqs {
			n := 1 + r.Uint32N(300)
			w := [][]byte{make([]byte, n*12), make([]byte, n*4)}
			for _, b := range w {
				for j := range b {
					b[j] = byte(r.Uint32())
				}
			}
			reqs[i] = arena.Request{Owner: uint64(i), Elems: n, Data: w[0], Planes: [][]byte{w[1]}}
			switch {
			case i%5 == 1: // data short of the elements: zeros after it
				reqs[i].Data = w[0][:len(w[0])/2]
				clear(w[0][len(w[0])/2:])
			case i%5 == 2:
				reqs[i].Planes = nil
				clear(w[1])
			case round == 2 && i%500 == 3: // the last batch's runs gather with Fills
				src := w[0]
				reqs[i].Data, reqs[i].Fill = nil, func(dst []byte) {
					if inFill.Add(1) > 1 {
						overlaps.Add(1)
					}
					copy(dst, src)
					inFill.Add(-1)
				}
			}
			want[i] = w
		}
		ps, _, err := a.Place(nil, reqs, up)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range ps {
			m.data[p.Handle] = want[i]
		}
		if err := dev.Submit(); err != nil {
			t.Fatal(err)
		}
		m.check(t, fmt.Sprintf("workers %d, guard %d, belt %v, round %d", workers, guard, useBelt, round))
		if bad, err := a.CheckGuards(); err != nil || len(bad) != 0 {
			t.Fatalf("guards %v broken (%v)", bad, err)
		}
		n := 0
		for h := range m.data { // free a third, so the next batch fills holes too
			if n++; n%3 == 0 {
				must(t, a.Free(h))
				delete(m.data, h)
			}
		}
	}
	if overlaps.Load() != 0 {
		t.Errorf("a Fill ran beside another %d times", overlaps.Load())
	}
}
