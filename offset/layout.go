package offset

import (
	"fmt"
	"iter"
)

// Grow extends the range at its tail to capacity units; the new units join
// the free region at the tail, or become one if the tail is allocated. Live
// allocations keep their offsets. O(1). It returns ErrInvalidCapacity for a
// capacity below the current one and ErrNodeLimit when a new free region
// needs a node and none is left.
func (a *Allocator) Grow(capacity uint32) error {
	if capacity < a.capacity {
		return fmt.Errorf("%w: grow to %d from %d", ErrInvalidCapacity, capacity, a.capacity)
	}
	extra := capacity - a.capacity
	if extra == 0 {
		return nil
	}
	last := a.last()
	if a.at(last).used() {
		if a.nfree == 0 {
			return fmt.Errorf("%w: %d nodes", ErrNodeLimit, a.maxAllocs())
		}
		a.replace(last, end, a.capacity, extra)
	} else {
		n := a.absorb(last)
		a.replace(n.prev, end, n.off, n.size+extra)
	}
	a.capacity = capacity
	return nil
}

// SlideDown moves a live allocation down over the free region just before
// it, so that free region ends up after it (merged with any free region
// there). It returns the allocation's new value and how many units it moved;
// it moves nothing and returns 0 when the region before it is allocated or
// it sits at offset 0. Copies of h keep identifying the allocation. This is
// the step of an in-place compaction: the caller moves the data, from the
// old offset to the new, before reusing the space. O(1).
func (a *Allocator) SlideDown(h Allocation) (Allocation, uint32, error) {
	idx, err := a.resolve(h)
	if err != nil {
		return Allocation{}, 0, err
	}
	n := a.at(idx)
	prev := n.prev
	if a.at(prev).used() { // end reads as used: the allocation is at 0
		return a.handle(idx), 0, nil
	}
	p := a.absorb(prev)
	dist, before := p.size, p.prev
	n.prev = before
	a.at(before).next = idx
	n.off -= dist
	off, size, next := n.off+n.size, dist, n.next
	if !a.at(next).used() {
		q := a.absorb(next)
		size += q.size
		next = q.next
	}
	a.replace(idx, next, off, size)
	return a.handle(idx), dist, nil
}

// Region is a stretch of the range: a live allocation or a free region.
type Region struct {
	Offset, Size uint32
	// Used reports whether the region is a live allocation.
	Used bool
}

// Regions yields every region in address order, allocations and free
// regions alike; together they tile [0, Capacity). The allocator must not
// change during the walk. O(n).
func (a *Allocator) Regions() iter.Seq[Region] {
	return func(yield func(Region) bool) {
		for i := a.first(); i != end; i = a.at(i).next {
			n := a.at(i)
			if !yield(Region{Offset: n.off, Size: n.size, Used: n.used()}) {
				return
			}
		}
	}
}

// All yields the live allocations in address order. The allocator must not
// change during the walk; to change it while walking (as a compaction does),
// step with First and Next. O(n).
func (a *Allocator) All() iter.Seq[Allocation] {
	return func(yield func(Allocation) bool) {
		for i := a.first(); i != end; i = a.at(i).next {
			if a.at(i).used() && !yield(a.handle(i)) {
				return
			}
		}
	}
}

// First returns the live allocation with the lowest offset. O(1): the region
// at offset 0 is either it or a free region followed by it.
func (a *Allocator) First() (Allocation, bool) {
	return a.usedFrom(a.first())
}

// Next returns the live allocation that follows h in address order. O(1):
// free regions never sit side by side, so at most one is skipped.
func (a *Allocator) Next(h Allocation) (Allocation, bool, error) {
	idx, err := a.resolve(h)
	if err != nil {
		return Allocation{}, false, err
	}
	next, ok := a.usedFrom(a.at(idx).next)
	return next, ok, nil
}

func (a *Allocator) usedFrom(i uint32) (Allocation, bool) {
	if !a.at(i).used() { // end reads as used
		i = a.at(i).next
	}
	if i == end {
		return Allocation{}, false
	}
	return a.handle(i), true
}
