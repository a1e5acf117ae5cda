package arena

import "math"

// Shrinking gives memory back. With Options.ShrinkBelow set, Sweep watches
// occupancy: once the reserved elements have stayed at or below
// ShrinkBelow of the capacity for ShrinkAfter Sweep calls in a row, the
// arena moves into a smaller buffer, of the reserved elements plus a
// sixteenth (never below MinElems). The allocations must sit below that
// size first: when the used range (up to the end of the last allocation)
// reaches past it, Sweep arms a sweep episode, whose budgeted steps
// gather the free space at the tail over the next calls, and shrinks once
// the used range fits. A shrink is one new buffer and one copy of the
// used range, like a growth; Buffer changes (watch Stats().Growths and
// Stats().Shrinks).
//
// Hysteresis: a growth leaves the arena at most 1/GrowthFactor full of
// what it held, so ShrinkBelow should sit well below that (the default
// ShrinkBelow of 0.5 with the default GrowthFactor of 2 shrinks only
// after a quarter of the arena's contents went), and the ShrinkAfter
// calls in a row filter out a level that unloads for a moment.

// DefaultShrinkAfter is the ShrinkAfter a zero value means: 120 Sweep
// calls, two seconds of frames at 60 a second.
const DefaultShrinkAfter = 120

// shrinkSpare is the capacity a shrink leaves over the reserved
// elements: a sixteenth spare, so a shrunk arena holds at most 1.0625x
// what it uses and takes a few allocations before it grows again.
const shrinkSpare = 1.0625

// shrinkTarget returns the capacity a shrink of an arena holding reserved
// elements moves to.
func (a *Arena) shrinkTarget(reserved uint64) uint32 {
	t := uint64(math.Ceil(float64(reserved) * shrinkSpare))
	t = max(t, uint64(a.opts.MinElems), 1)
	return uint32(min(t, uint64(a.opts.MaxElems)))
}

// watchShrink runs at each Sweep call with ShrinkBelow set; see above.
func (a *Arena) watchShrink() error {
	capacity := a.alloc.Capacity()
	reserved := uint64(capacity - a.alloc.Report().Free)
	if float64(reserved) > a.opts.ShrinkBelow*float64(capacity) {
		a.lowSweeps = 0
		return nil
	}
	if a.lowSweeps < a.opts.ShrinkAfter {
		a.lowSweeps++
		return nil
	}
	target := a.shrinkTarget(reserved)
	if target >= capacity {
		return nil
	}
	if used := capacity - a.alloc.Tail(); used > target {
		a.arm() // gather the free space at the tail first
		return nil
	}
	if err := a.shrink(target); err != nil {
		return err
	}
	a.lowSweeps = 0
	return nil
}

// shrink moves the arena to a new buffer of capacity elements, which the
// used range fits. The arena is unchanged when it fails.
func (a *Arena) shrink(capacity uint32) error {
	a.dropAhead()
	if err := a.rebuffer("shrink", capacity, a.alloc.Shrink, nil); err != nil {
		return err
	}
	a.stats.Shrinks++
	return nil
}

// Shrink gives memory back now, whatever Options.ShrinkBelow, and returns
// the bytes given back: it compacts fully (the moves go to Changes or
// OnMove) and moves the arena into a buffer of its reserved elements plus
// a sixteenth, never below MinElems; when that is not smaller than the
// capacity it only compacts. A budget.Reclaimer as it is. Errors are
// Compact's, or the device's refusal of the smaller buffer, after which
// the arena is compacted and keeps its buffer.
func (a *Arena) Shrink() (freedBytes uint64, err error) {
	if _, err := a.Compact(); err != nil {
		return 0, err
	}
	capacity := a.alloc.Capacity()
	if target := a.shrinkTarget(uint64(capacity - a.alloc.Report().Free)); target < capacity {
		if err := a.shrink(target); err != nil {
			return 0, err
		}
		freedBytes = uint64(capacity-target) * uint64(a.opts.ElemSize)
	}
	a.lowSweeps = 0
	return freedBytes, nil
}
