package offset_test

import (
	"errors"
	"testing"

	"github.com/gpumem/gpumem/offset"
)

// TestExactWholeCapacity pins what Exact's documentation says: like the
// reference, it refuses a request of the whole of a capacity that is not
// a bin size (1000 files in the bin of 960, and is looked up from 1024),
// while Fit serves it and a bin-size capacity meets exactly.
func TestExactWholeCapacity(t *testing.T) {
	a, err := offset.NewPolicy(1000, 16, offset.Exact)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Allocate(1000); !errors.Is(err, offset.ErrOutOfSpace) {
		t.Errorf("Exact, capacity 1000: Allocate(1000) = %v, want ErrOutOfSpace", err)
	}
	f, _ := offset.NewPolicy(1000, 16, offset.Fit)
	if _, err := f.Allocate(1000); err != nil {
		t.Errorf("Fit, capacity 1000: Allocate(1000): %v", err)
	}
	b, _ := offset.NewPolicy(1024, 16, offset.Exact)
	if _, err := b.Allocate(1024); err != nil {
		t.Errorf("Exact, capacity 1024: Allocate(1024): %v", err)
	}
}
