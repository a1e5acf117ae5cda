package offset

import (
	"math/rand/v2"
	"testing"
)

// TestTakeMatchesAllocate keeps take, the split the cold paths and Fit use,
// in step with the copy written out in Allocate's Exact path: two Exact
// allocators, one driven through Allocate and one through search and take,
// see the same random allocations and frees and must place every request
// at the same offset, with every invariant holding after each step. The
// sizes straddle bin bounds and the sizes left over, so remainders land in
// the bin their region came from, in other bins, and nowhere (exact fits),
// and bins empty and fill.
func TestTakeMatchesAllocate(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		r := rand.New(rand.NewPCG(seed, 16))
		const capacity = 1 << 16
		hot, _ := New(capacity, 512)
		cold, _ := New(capacity, 512)
		var hs, cs []Allocation
		for step := range 20_000 {
			if len(hs) > 0 && (r.IntN(2) == 0 || hot.nfree <= 2) {
				i := r.IntN(len(hs))
				if err := hot.Free(hs[i]); err != nil {
					t.Fatalf("seed %d step %d: Free: %v", seed, step, err)
				}
				if err := cold.Free(cs[i]); err != nil {
					t.Fatalf("seed %d step %d: Free: %v", seed, step, err)
				}
				hs[i], cs[i] = hs[len(hs)-1], cs[len(cs)-1]
				hs, cs = hs[:len(hs)-1], cs[:len(cs)-1]
			} else {
				size := 1 + r.Uint32N(1<<(1+r.IntN(12)))
				h, err := hot.Allocate(size)
				var c Allocation
				idx := cold.search(size)
				if idx != none {
					c = cold.take(idx, 0, size)
				}
				if (err == nil) != (idx != none) {
					t.Fatalf("seed %d step %d: Allocate(%d): %v; search found %v", seed, step, size, err, idx != none)
				}
				if err == nil {
					if h.Offset != c.Offset || h.Size != c.Size {
						t.Fatalf("seed %d step %d: Allocate(%d) at %d, take at %d", seed, step, size, h.Offset, c.Offset)
					}
					hs, cs = append(hs, h), append(cs, c)
				}
			}
			if step%64 == 0 || step > 19_900 {
				for _, a := range []*Allocator{hot, cold} {
					if err := a.Check(); err != nil {
						t.Fatalf("seed %d step %d: %v", seed, step, err)
					}
				}
			}
		}
	}
}
