package arena_test

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// TestGuards writes past the end of an allocation through the raw buffer,
// on every backend, with and without bin rounding: CheckGuards names that
// allocation and no other, before and after growth and compaction move
// everything, while writes inside the allocations and the allocations'
// own bytes are untouched by the margins.
func TestGuards(t *testing.T) {
	for _, o := range []arena.Options{
		{ElemSize: 4, GuardBytes: 16, InitialElems: 256},
		{ElemSize: 12, GuardBytes: 4, InitialElems: 64, RoundToBins: true},
	} {
		eachBackend(t, func(t *testing.T, dev device.Device) {
			a, err := arena.New(dev, o)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Release()
			es := uint64(o.ElemSize)
			type live struct {
				h    arena.Handle
				data []byte
			}
			var ls []live
			add := func(n uint32, seed byte) {
				h, err := a.Allocate(n)
				if err != nil {
					t.Fatal(err)
				}
				data := bytes.Repeat([]byte{seed, seed + 1, seed + 2, seed + 3}, int(uint64(n)*es/4))
				if err := a.Write(h, 0, data); err != nil {
					t.Fatal(err)
				}
				ls = append(ls, live{h, data})
			}
			check := func(want ...arena.Handle) {
				t.Helper()
				bad, err := a.CheckGuards()
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(bad, want) {
					t.Fatalf("CheckGuards: %v, want %v", bad, want)
				}
				for _, l := range ls {
					got := make([]byte, len(l.data))
					if err := a.Read(l.h, 0, got); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, l.data) {
						t.Fatalf("%v lost its bytes", l.h)
					}
				}
			}
			for i := range 12 {
				add(uint32(3+i*5%17), byte(16*i))
			}
			check()
			// One word past the end of allocation 5, through the buffer.
			off, err := a.Offset(ls[5].h)
			if err != nil {
				t.Fatal(err)
			}
			end := (uint64(off) + uint64(len(ls[5].data))/es) * es
			if err := dev.WriteBuffer(a.Buffer(), end, []byte{1, 2, 3, 4}); err != nil {
				t.Fatal(err)
			}
			check(ls[5].h)
			// Free every third, grow, compact: the margins move with their
			// allocations, the damaged one with it.
			damaged := ls[5].h
			var kept []live
			for i, l := range ls {
				if i%3 == 0 {
					if err := a.Free(l.h); err != nil {
						t.Fatal(err)
					}
					continue
				}
				kept = append(kept, l)
			}
			ls = kept
			for i := range 30 {
				add(uint32(4+i%9), byte(7*i))
			}
			if _, err := a.Compact(); err != nil {
				t.Fatal(err)
			}
			if a.Stats().Growths == 0 {
				t.Fatal("the arena never grew: the test must move margins through a growth")
			}
			check(damaged)
		})
	}
}

func TestGuardsOff(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	a, err := arena.New(dev, arena.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	h, err := a.Allocate(4)
	if err != nil {
		t.Fatal(err)
	}
	if off, _ := a.Offset(h); off != 0 || a.Stats().ReservedElems != 4 {
		t.Fatalf("without guards an allocation of 4 takes %d elements", a.Stats().ReservedElems)
	}
	if bad, err := a.CheckGuards(); bad != nil || err != nil {
		t.Fatalf("CheckGuards without guards: %v, %v", bad, err)
	}
	if _, err := arena.New(dev, arena.Options{GuardBytes: 1<<20 + 1}); !errors.Is(err, arena.ErrInvalidOptions) {
		t.Fatalf("GuardBytes over 1 MiB: %v", err)
	}
}

// TestGuardFillRefused: when the device refuses the write that fills a new
// margin, the allocation is given back and the arena stays as it was.
func TestGuardFillRefused(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	a, err := arena.New(dev, arena.Options{GuardBytes: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	if _, err := a.Allocate(4); err != nil {
		t.Fatal(err)
	}
	dev.Release() // every later device call fails
	if _, err := a.Allocate(4); err == nil {
		t.Fatal("Allocate on a released device succeeded")
	}
	if a.Len() != 1 {
		t.Fatalf("%d allocations after a refused fill, want 1", a.Len())
	}
}

// TestMarginElems: GuardBytes rounded up to whole elements, the default
// element size for a zero ElemSize, without overflow for any GuardBytes.
func TestMarginElems(t *testing.T) {
	for _, c := range []struct {
		elem, guard, want uint32
	}{
		{0, 0, 0}, {4, 0, 0}, {0, 1, 1}, {0, 4, 1}, {0, 5, 2}, {12, 16, 2}, {12, 24, 2},
		{4, math.MaxUint32, 1 << 30}, {8, math.MaxUint32, 1 << 29},
	} {
		if got := (arena.Options{ElemSize: c.elem, GuardBytes: c.guard}).MarginElems(); got != c.want {
			t.Errorf("ElemSize %d, GuardBytes %d: MarginElems %d, want %d", c.elem, c.guard, got, c.want)
		}
	}
}
