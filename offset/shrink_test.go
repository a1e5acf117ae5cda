package offset_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/offset"
)

// TestShrink grows and shrinks an allocator under churn: a shrink that
// would cut an allocation is refused with nothing changed, one that cuts
// free space only keeps every allocation where it was, and the structure
// stays consistent (Check) after each step.
func TestShrink(t *testing.T) {
	a, err := offset.New(1000, 64)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	var live []offset.Allocation
	var shrunk, refused int
	for step := range 2000 {
		switch k := r.IntN(10); {
		case k < 5:
			if h, err := a.Allocate(1 + r.Uint32N(40)); err == nil {
				live = append(live, h)
			}
		case k < 8 && len(live) > 0:
			i := r.IntN(len(live))
			if err := a.Free(live[i]); err != nil {
				t.Fatal(err)
			}
			live = append(live[:i], live[i+1:]...)
		case k == 8:
			if err := a.Grow(a.Capacity() + r.Uint32N(100)); err != nil && !errors.Is(err, offset.ErrNodeLimit) {
				t.Fatal(err)
			}
		default:
			before := a.Capacity()
			used := before - a.Tail()
			target := used + r.Uint32N(before-used+1)
			if r.IntN(3) == 0 && used > 0 {
				target = r.Uint32N(used) // into the used range, or zero
			}
			err := a.Shrink(target)
			if target < used || target == 0 {
				if !errors.Is(err, offset.ErrInvalidCapacity) || a.Capacity() != before {
					t.Fatalf("step %d: Shrink(%d) with %d used: %v, capacity %d", step, target, used, err, a.Capacity())
				}
				refused++
				break
			}
			if err != nil || a.Capacity() != target {
				t.Fatalf("step %d: Shrink(%d) with %d used of %d: %v, capacity %d", step, target, used, before, err, a.Capacity())
			}
			if target < before {
				shrunk++
			}
		}
		if err := a.Check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for _, h := range live {
			got, err := a.Lookup(h)
			if err != nil || got.Offset != h.Offset || got.Offset+got.Size > a.Capacity() {
				t.Fatalf("step %d: %v became %v, %v (capacity %d)", step, h, got, err, a.Capacity())
			}
		}
	}
	if shrunk < 10 || refused < 10 {
		t.Fatalf("%d shrinks, %d refusals: the test must do both", shrunk, refused)
	}
	if err := a.Shrink(a.Capacity() + 1); !errors.Is(err, offset.ErrInvalidCapacity) {
		t.Fatalf("Shrink above the capacity: %v", err)
	}
	if err := a.Shrink(0); !errors.Is(err, offset.ErrInvalidCapacity) {
		t.Fatalf("Shrink(0): %v", err)
	}
}
