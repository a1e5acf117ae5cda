package offset

import (
	"math/rand/v2"
	"testing"
)

// TestTakeMatchesAllocate keeps search and take, the general helpers, in
// step with Allocate: for each policy, two allocators, one driven through
// Allocate and one through search and take, see the same random
// allocations and frees and must place every request at the same offset,
// with every invariant holding along the way. Under Exact this checks the
// copy of the search and split written out in Allocate; under Fit, any
// such copy written later. The
// sizes straddle bin bounds and the sizes left over, so remainders land in
// the bin their region came from, in other bins, and nowhere (exact fits),
// and bins empty and fill.
func TestTakeMatchesAllocate(t *testing.T) {
	for _, c := range []struct {
		p    Policy
		seed uint64
	}{{Exact, 1}, {Exact, 2}, {Fit, 1}, {Fit, 2}} {
		p, seed := c.p, c.seed
		r := rand.New(rand.NewPCG(seed, 16))
		const capacity = 1 << 16
		hot, _ := NewPolicy(capacity, 512, p)
		cold, _ := NewPolicy(capacity, 512, p)
		var hs, cs []Allocation
		for step := range 20_000 {
			if len(hs) > 0 && (r.IntN(2) == 0 || hot.nfree <= 2) {
				i := r.IntN(len(hs))
				if err := hot.Free(hs[i]); err != nil {
					t.Fatalf("%v seed %d step %d: Free: %v", p, seed, step, err)
				}
				if err := cold.Free(cs[i]); err != nil {
					t.Fatalf("%v seed %d step %d: Free: %v", p, seed, step, err)
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
					t.Fatalf("%v seed %d step %d: Allocate(%d): %v; search found %v", p, seed, step, size, err, idx != none)
				}
				if err == nil {
					if h.Offset != c.Offset || h.Size != c.Size {
						t.Fatalf("%v seed %d step %d: Allocate(%d) at %d, take at %d", p, seed, step, size, h.Offset, c.Offset)
					}
					hs, cs = append(hs, h), append(cs, c)
				}
			}
			if step%64 == 0 || step > 19_900 {
				for _, a := range []*Allocator{hot, cold} {
					if err := a.Check(); err != nil {
						t.Fatalf("%v seed %d step %d: %v", p, seed, step, err)
					}
				}
			}
		}
	}
}
