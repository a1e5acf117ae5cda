package offset

import "testing"

// TestZeroAllocationAfterIDWrap makes an allocator as the id counter wraps:
// it must not get id 0, under which the zero Allocation would pass for live
// (its node link names bin 0's sentinel, whose generation is 0).
func TestZeroAllocationAfterIDWrap(t *testing.T) {
	old := lastID.Load()
	defer lastID.Store(old)
	lastID.Store(1<<32 - 1) // as if 2^32-1 allocators had been made
	a, err := New(1000, 16)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Allocate(100); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Lookup(Allocation{}); err == nil {
		t.Errorf("Lookup of the zero Allocation succeeded: %+v", got)
	}
	if err := a.Free(Allocation{}); err == nil {
		t.Error("Free of the zero Allocation succeeded")
	}
	if err := a.Check(); err != nil {
		t.Error(err)
	}
}
