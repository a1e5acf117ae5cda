package arena_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/offset"
)

// ifFits calls AllocateIfFits and checks what it must keep whatever it
// returns: it never makes room (no refusal, growth, move, sweep, new
// buffer, OnMove), a refusal (ErrNoFit) changes no statistic, and a
// success returns the offset Offset reports, the owner Owner reports, and
// is served exactly when Fits said so (under the Exact policy).
func ifFits(t *testing.T, a *arena.Arena, exact bool, elems uint32, owner uint64, moves *int) (arena.Handle, error) {
	t.Helper()
	before, buf, fits, moved := a.Stats(), a.Buffer(), a.Fits(elems), *moves
	h, off, err := a.AllocateIfFits(elems, owner)
	st := a.Stats()
	if st.Refusals != before.Refusals || st.Growths != before.Growths || st.Moves != before.Moves ||
		st.FullCompactions != before.FullCompactions || st.SweepsArmed != before.SweepsArmed ||
		st.CapacityElems != before.CapacityElems || a.Buffer() != buf || *moves != moved {
		t.Fatalf("AllocateIfFits(%d) made room (%v): %+v, then %+v", elems, err, before, st)
	}
	switch {
	case err == nil:
		if got, err := a.Offset(h); err != nil || got != off {
			t.Fatalf("AllocateIfFits(%d) returned offset %d, Offset says %d, %v", elems, off, got, err)
		}
		if got, err := a.Owner(h); err != nil || got != owner {
			t.Fatalf("AllocateIfFits(%d): Owner %#x, %v; want %#x", elems, got, err, owner)
		}
		if got, _ := a.Elems(h); got != elems {
			t.Fatalf("AllocateIfFits(%d): Elems %d", elems, got)
		}
		if !fits && exact {
			t.Fatalf("AllocateIfFits(%d) served a request Fits refused", elems)
		}
	case err == arena.ErrNoFit:
		if fits {
			t.Fatalf("AllocateIfFits(%d) refused a request Fits promised", elems)
		}
		if st != before {
			t.Fatalf("a refused AllocateIfFits(%d) changed the stats: %+v, then %+v", elems, before, st)
		}
	}
	return h, err
}

// TestAllocateIfFits drives AllocateIfFits through holes, a full arena,
// Reserve, growth, compaction and shrinking, with bytes written to every
// allocation and read back after each step, on every backend, with and
// without guards and bin rounding.
func TestAllocateIfFits(t *testing.T) {
	for _, o := range []arena.Options{
		{InitialElems: 256},
		{ElemSize: 12, InitialElems: 200, RoundToBins: true},
		{ElemSize: 8, InitialElems: 256, GuardBytes: 12},
		{InitialElems: 256, ShrinkBelow: 0.5, ShrinkAfter: 2, MinElems: 64},
	} {
		eachBackend(t, func(t *testing.T, dev device.Device) {
			moves := 0
			o.OnMove = func(arena.Move) { moves++ }
			a, err := arena.New(dev, o)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Release()
			es := int(a.ElemSize())
			live := map[arena.Handle][]byte{}
			tags := map[arena.Handle]uint64{}
			r := rand.New(rand.NewPCG(3, 4))
			put := func(h arena.Handle, elems uint32, owner uint64) {
				t.Helper()
				data := make([]byte, int(elems)*es)
				for i := range data {
					data[i] = byte(r.Uint32())
				}
				if err := a.Write(h, 0, data); err != nil {
					t.Fatal(err)
				}
				live[h], tags[h] = data, owner
			}
			verify := func(when string) {
				t.Helper()
				for h, want := range live {
					got := make([]byte, len(want))
					if err := a.Read(h, 0, got); err != nil {
						t.Fatalf("%s: %v", when, err)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("%s: %v lost its bytes", when, h)
					}
					if w, _ := a.Owner(h); w != tags[h] {
						t.Fatalf("%s: %v owner %#x, want %#x", when, h, w, tags[h])
					}
				}
				if bad, err := a.CheckGuards(); err != nil || bad != nil {
					t.Fatalf("%s: CheckGuards %v, %v", when, bad, err)
				}
			}
			// Fill the arena as it is, until it refuses.
			served, refused := 0, 0
			for i := range 200 {
				n := 1 + r.Uint32N(24)
				tag := uint64(i)<<40 | uint64(n)
				h, err := ifFits(t, a, true, n, tag, &moves)
				if err == arena.ErrNoFit {
					refused++
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				served++
				put(h, n, tag)
			}
			if served == 0 || refused == 0 {
				t.Fatalf("served %d, refused %d: the test must see both", served, refused)
			}
			verify("filled")
			// Free every other allocation: the holes serve what fits in
			// them, and nothing else.
			hs := slices.Collect(func(yield func(arena.Handle) bool) {
				for h := range live {
					if !yield(h) {
						return
					}
				}
			})
			slices.SortFunc(hs, func(x, y arena.Handle) int {
				ox, _ := a.Offset(x)
				oy, _ := a.Offset(y)
				return int(ox) - int(oy)
			})
			for i, h := range hs {
				if i%2 == 0 {
					if err := a.Free(h); err != nil {
						t.Fatal(err)
					}
					delete(live, h)
				}
			}
			for i := range 100 {
				n := 1 + r.Uint32N(40)
				if h, err := ifFits(t, a, true, n, uint64(1000+i), &moves); err == nil {
					put(h, n, uint64(1000+i))
				} else if err != arena.ErrNoFit {
					t.Fatal(err)
				}
			}
			verify("holes filled")
			// After Reserve, a batch within its sum is served as it is.
			batch := []uint32{30, 17, 9, 60, 5}
			var sum uint32
			for _, n := range batch {
				need, _ := arena.RoundUp(n + uint32((int(o.GuardBytes)+es-1)/es))
				sum += need
			}
			if err := a.Reserve(sum); err != nil {
				t.Fatal(err)
			}
			verify("reserved")
			for i, n := range batch {
				h, err := ifFits(t, a, true, n, uint64(2000+i), &moves)
				if err != nil {
					t.Fatalf("AllocateIfFits(%d) within a Reserve: %v", n, err)
				}
				put(h, n, uint64(2000+i))
			}
			verify("batch")
			// Larger than the capacity: refused as not fitting, not as
			// an invalid size.
			if _, err := ifFits(t, a, true, a.Stats().CapacityElems+1, 7, &moves); err != arena.ErrNoFit {
				t.Fatalf("AllocateIfFits above the capacity: %v, want ErrNoFit", err)
			}
			// Compaction moves what AllocateIfFits placed, with its owner.
			if _, err := a.Compact(); err != nil {
				t.Fatal(err)
			}
			verify("compacted")
			if o.ShrinkBelow > 0 {
				for h := range live {
					if len(live) <= 4 {
						break
					}
					if err := a.Free(h); err != nil {
						t.Fatal(err)
					}
					delete(live, h)
				}
				for range 4 {
					if _, err := a.Sweep(arena.Budget{}); err != nil {
						t.Fatal(err)
					}
				}
				if a.Stats().Shrinks == 0 {
					t.Fatalf("no shrink: %+v", a.Stats())
				}
				verify("shrunk")
				for i := range 40 {
					n := 1 + r.Uint32N(8)
					if h, err := ifFits(t, a, true, n, uint64(3000+i), &moves); err == nil {
						put(h, n, uint64(3000+i))
					} else if err != arena.ErrNoFit {
						t.Fatal(err)
					}
				}
				verify("filled after the shrink")
			}
		})
	}
}

// TestAllocateIfFitsGuards: the margin of an allocation AllocateIfFits
// makes holds the pattern, and a write past the allocation's end is
// caught; a request whose elements fit a hole but whose margin does not
// is refused.
func TestAllocateIfFitsGuards(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	a, err := arena.New(dev, arena.Options{ElemSize: 4, InitialElems: 64, GuardBytes: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	// Three allocations of 4 elements and their margins of 4.
	var hs []arena.Handle
	for range 3 {
		h, _, err := a.AllocateIfFits(4, 1)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if bad, err := a.CheckGuards(); err != nil || bad != nil {
		t.Fatalf("CheckGuards: %v, %v", bad, err)
	}
	off, _ := a.Offset(hs[1])
	if err := dev.WriteBuffer(a.Buffer(), uint64(off+4)*4, []byte{9, 9, 9, 9}); err != nil {
		t.Fatal(err)
	}
	if bad, err := a.CheckGuards(); err != nil || !slices.Equal(bad, hs[1:2]) {
		t.Fatalf("CheckGuards after a write past %v: %v, %v", hs[1], bad, err)
	}
	// The rest of the capacity, then a hole of 16 elements at 0.
	if _, _, err := a.AllocateIfFits(64-3*8-4, 2); err != nil {
		t.Fatal(err)
	}
	if err := a.Free(hs[0]); err != nil {
		t.Fatal(err)
	}
	if err := a.Free(hs[1]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.AllocateIfFits(13, 3); err != arena.ErrNoFit {
		t.Fatalf("13 elements and a margin of 4 in a hole of 16: %v, want ErrNoFit", err)
	}
	h, off, err := a.AllocateIfFits(12, 3)
	if err != nil {
		t.Fatalf("12 elements and a margin of 4 in a hole of 16: %v", err)
	}
	if off != 0 {
		t.Fatalf("placed at %d, want the hole at 0", off)
	}
	if bad, err := a.CheckGuards(); err != nil || bad != nil {
		t.Fatalf("CheckGuards after refilling the hole: %v, %v (the new margin must be written over the old damage)", bad, err)
	}
	_ = h
}

// TestAllocateIfFitsErrors: the refusals other than ErrNoFit.
func TestAllocateIfFitsErrors(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	a, err := arena.New(dev, arena.Options{InitialElems: 64, MaxElems: 1 << 16, MaxAllocs: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.AllocateIfFits(0, 1); !errors.Is(err, arena.ErrInvalidSize) {
		t.Errorf("AllocateIfFits(0): %v", err)
	}
	if _, _, err := a.AllocateIfFits(1<<16+1, 1); !errors.Is(err, arena.ErrInvalidSize) {
		t.Errorf("AllocateIfFits above MaxElems: %v", err)
	}
	n := 0
	for ; n < 10; n++ {
		if _, _, err = a.AllocateIfFits(1, 1); err != nil {
			break
		}
	}
	if !errors.Is(err, arena.ErrTooManyAllocations) || n != 2 {
		t.Errorf("after %d allocations: %v, want ErrTooManyAllocations after 2 (4 nodes, one kept)", n, err)
	}
	a.Release()
	if _, _, err := a.AllocateIfFits(1, 1); !errors.Is(err, device.ErrReleased) {
		t.Errorf("AllocateIfFits after Release: %v", err)
	}
}

// TestAllocateIfFitsPolicyFit: under offset.Fit, AllocateIfFits serves a
// request Fits does not promise when a region of the bin below holds it,
// as AllocateOwned would, without growing.
func TestAllocateIfFitsPolicyFit(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	for _, p := range []offset.Policy{offset.Exact, offset.Fit} {
		a, err := arena.New(dev, arena.Options{InitialElems: 1000, MaxElems: 1000, Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		// 1000 elements free in one region, filed in the bin of 960:
		// Fits(1000) does not promise it.
		if a.Fits(1000) {
			t.Fatal("Fits(1000) in an arena of 1000: the test needs a request Fits does not promise")
		}
		moves := 0
		_, err = ifFits(t, a, p == offset.Exact, 1000, 5, &moves)
		switch {
		case p == offset.Exact && err != arena.ErrNoFit:
			t.Errorf("Exact: AllocateIfFits(1000): %v, want ErrNoFit", err)
		case p == offset.Fit && err != nil:
			t.Errorf("Fit: AllocateIfFits(1000): %v, want it served", err)
		}
		a.Release()
	}
}
