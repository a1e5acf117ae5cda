package arena

import "iter"

// Region is a stretch of an arena's buffer, in elements: a live allocation
// or a free region. Regions yields them for inspection (package inspect).
type Region struct {
	// Offset and Size place the region. For an allocation Size is what the
	// allocator holds for it: Elems plus any bin rounding (RoundToBins).
	Offset, Size uint32
	// Handle names the allocation; the zero Handle for a free region.
	Handle Handle
	// Owner is the allocation's tag (AllocateOwned); 0 for a free region.
	Owner uint64
	// Elems is the elements the allocation asked for; 0 for a free region.
	Elems uint32
}

// Used reports whether the region is a live allocation.
func (r Region) Used() bool { return r.Handle != Handle{} }

// Regions yields every region of the arena in address order, allocations
// and free regions alike; together they tile [0, Stats().CapacityElems).
// The arena must not change during the walk. A released arena yields
// nothing. O(n) for n regions; it does not allocate.
func (a *Arena) Regions() iter.Seq[Region] {
	return func(yield func(Region) bool) {
		if a.released {
			return
		}
		var end uint32 // end of the last region yielded
		for h := range a.alloc.All() {
			if h.Offset > end && !yield(Region{Offset: end, Size: h.Offset - end}) {
				return
			}
			s := &a.slots[h.ID()]
			if !yield(Region{Offset: h.Offset, Size: h.Size, Handle: a.handle(h.ID()), Owner: s.owner, Elems: s.elems}) {
				return
			}
			end = h.Offset + h.Size
		}
		if c := a.alloc.Capacity(); c > end {
			yield(Region{Offset: end, Size: c - end})
		}
	}
}
