package offset

import (
	"fmt"
	"math/bits"
)

// AllocateAligned returns a range of size units whose offset is a multiple
// of align, a power of two. The padding before the range goes back to the
// free space, so the caller need not over-allocate by hand. O(1); it never
// allocates memory.
//
// It serves the request from a region of size+align-1 units found as
// Allocate would, which always leaves room to align; if none exists it falls
// back to the region Allocate would pick for size alone, when that region
// happens to hold an aligned fit. It needs up to two spare nodes (the pad
// and the remainder). Errors are Allocate's plus ErrBadAlignment.
func (a *Allocator) AllocateAligned(size, align uint32) (Allocation, error) {
	if align == 0 || bits.OnesCount32(align) != 1 {
		return Allocation{}, fmt.Errorf("%w: %d", ErrBadAlignment, align)
	}
	if align == 1 {
		return a.Allocate(size)
	}
	if size-1 >= a.capacity || a.nfree <= 2 {
		return Allocation{}, a.refuse(size, 2)
	}
	if padded := uint64(size) + uint64(align) - 1; padded <= uint64(a.capacity) {
		if idx := a.search(uint32(padded)); idx != none {
			return a.take(idx, alignPad(a.at(idx).off, align), size), nil
		}
	}
	if idx := a.search(size); idx != none {
		n := a.at(idx)
		if pad := alignPad(n.off, align); uint64(pad)+uint64(size) <= uint64(n.size) {
			return a.take(idx, pad, size), nil
		}
	}
	return Allocation{}, ErrOutOfSpace
}

// alignPad returns how many units lift off to the next multiple of align.
func alignPad(off, align uint32) uint32 {
	return (align - off&(align-1)) & (align - 1)
}
