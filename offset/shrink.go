package offset

import "fmt"

// Shrink cuts the range at its tail to capacity units: the cut units must
// all be free, at the end of the free region at the tail (compact first to
// gather the free space there). Live allocations keep their offsets. O(1).
// It returns ErrInvalidCapacity for zero, for a capacity above the current
// one, or when the cut would reach an allocation; the allocator is then
// unchanged.
func (a *Allocator) Shrink(capacity uint32) error {
	if capacity == 0 || capacity > a.capacity {
		return fmt.Errorf("%w: shrink to %d from %d", ErrInvalidCapacity, capacity, a.capacity)
	}
	cut := a.capacity - capacity
	if cut == 0 {
		return nil
	}
	last := a.last()
	if n := a.at(last); n.used() || n.size < cut {
		return fmt.Errorf("%w: shrink to %d cuts into the used range [0, %d)", ErrInvalidCapacity, capacity, a.capacity-a.Tail())
	}
	n := a.absorb(last)
	if n.size > cut {
		a.replace(n.prev, end, n.off, n.size-cut)
	} else {
		a.at(n.prev).next = end
		a.at(end).prev = n.prev
	}
	a.capacity = capacity
	return nil
}
