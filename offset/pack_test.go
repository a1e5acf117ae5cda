package offset_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/offset"
)

// TestPackEqualsSlides checks Pack against SlideDown applied to every
// allocation in address order, on random layouts: the same offsets, the
// same moves in the same order, one free region at the tail, Check clean,
// and the allocator working on after it (allocations fill the tail, and
// frees merge).
func TestPackEqualsSlides(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 300 {
		capacity := uint32(64 + r.IntN(1<<16))
		build := func() (*offset.Allocator, []offset.Allocation) {
			a, err := offset.New(capacity, 512)
			if err != nil {
				t.Fatal(err)
			}
			var hs []offset.Allocation
			rr := rand.New(rand.NewPCG(uint64(iter), 9))
			for range 300 {
				if len(hs) > 0 && rr.IntN(3) == 0 {
					k := rr.IntN(len(hs))
					if err := a.Free(hs[k]); err != nil {
						t.Fatal(err)
					}
					hs = slices.Delete(hs, k, k+1)
					continue
				}
				if h, err := a.Allocate(1 + rr.Uint32N(capacity/16)); err == nil {
					hs = append(hs, h)
				}
			}
			return a, hs
		}
		type move struct{ id, from, to uint32 }
		ref, _ := build()
		var want []move
		for h, ok := ref.First(); ok; {
			moved, dist, err := ref.SlideDown(h)
			if err != nil {
				t.Fatal(err)
			}
			if dist > 0 {
				want = append(want, move{moved.ID(), moved.Offset + dist, moved.Offset})
			}
			if h, ok, err = ref.Next(moved); err != nil {
				t.Fatal(err)
			}
		}
		a, hs := build()
		var got []move
		a.Pack(func(h offset.Allocation, from uint32) { got = append(got, move{h.ID(), from, h.Offset}) })
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d: Pack moved %v, slides moved %v", iter, got, want)
		}
		if err := a.Check(); err != nil {
			t.Fatalf("iteration %d: after Pack: %v", iter, err)
		}
		sa, sr := a.Report(), ref.Report()
		if sa != sr {
			t.Fatalf("iteration %d: Pack's report %+v, slides' %+v", iter, sa, sr)
		}
		var regions []offset.Region
		for rg := range a.Regions() {
			regions = append(regions, rg)
		}
		for k, rg := range regions {
			if !rg.Used && k != len(regions)-1 {
				t.Fatalf("iteration %d: a free region %+v before the tail", iter, rg)
			}
		}
		for _, h := range hs {
			if _, err := a.Lookup(h); err != nil {
				t.Fatalf("iteration %d: %v", iter, err)
			}
		}
		for len(hs) > 0 {
			if err := a.Free(hs[0]); err != nil {
				t.Fatal(err)
			}
			hs = hs[1:]
			if _, err := a.Allocate(1 + r.Uint32N(capacity/8)); err != nil && !errors.Is(err, offset.ErrOutOfSpace) {
				t.Fatal(err)
			}
			if err := a.Check(); err != nil {
				t.Fatalf("iteration %d: after Pack, free and allocate: %v", iter, err)
			}
		}
	}
}
