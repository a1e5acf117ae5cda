package mesh

import (
	"fmt"

	"github.com/gpumem/gpumem/arena"
)

// Sweep takes one bounded step of compaction over the slabs: it arms the
// sweep of each slab whose free space is in pieces (holes outside its
// largest free region adding up to an eighth of what it holds, or more),
// and runs the armed slabs' sweeps, starting from a different slab each
// call so none starves, until limits are spent. Zero fields of limits take
// arena.DefaultSweepLimits's; the limits bound the whole call, not each
// slab: moves, bytes and steps (ranges visited) alike. Moved ranges are
// reported by Changes. O(slabs + limits); it does not allocate but to grow
// the change log.
func (a *Allocator) Sweep(limits arena.SweepLimits) error {
	if a.released {
		return errReleased
	}
	b := limits
	if b.Moves <= 0 {
		b.Moves = arena.DefaultSweepLimits.Moves
	}
	if b.Bytes == 0 {
		b.Bytes = arena.DefaultSweepLimits.Bytes
	}
	if b.Steps <= 0 {
		b.Steps = arena.DefaultSweepLimits.Steps
	}
	// Each slab's sweep gets what the slabs before it left of every
	// field: a field spent ends the call (a zero field passed on would
	// mean the arena's default, not nothing).
	n := len(a.slabs)
	for i := 0; i < n && b.Moves > 0 && b.Bytes > 0 && b.Steps > 0; i++ {
		s := a.slabs[(a.sweepNext+i)%n]
		if !s.ar.Armed() {
			st := s.ar.Stats()
			// Free space outside the largest region (most often the
			// tail) is in holes between ranges.
			holes := uint64(st.FreeElems - st.LargestFreeElems)
			switch {
			case holes > 0 && holes*8 >= st.ReservedElems:
				s.ar.Arm()
			case a.set.ShrinkBelow == 0:
				continue
			}
			// With ShrinkBelow, every slab's Sweep runs: it watches
			// occupancy, and may arm itself or shrink.
		}
		steps := s.ar.Stats().SweepSteps
		moves, err := s.ar.Sweep(b)
		if err != nil {
			return fmt.Errorf("mesh: sweep slab of %v: %w", s.layout, err)
		}
		var bytes uint64
		for _, m := range moves {
			bytes += uint64(m.Elems) * uint64(s.layout.SlotBytes())
		}
		b.Moves -= len(moves)
		b.Bytes -= min(bytes, b.Bytes)
		b.Steps -= int(min(s.ar.Stats().SweepSteps-steps, uint64(b.Steps)))
	}
	if n > 0 {
		a.sweepNext = (a.sweepNext + 1) % n
	}
	return nil
}

// Shrink gives memory back now: it compacts every slab and moves it into a
// buffer of what it holds plus a sixteenth (arena.Arena.Shrink), whatever
// Options.ShrinkBelow, and returns the bytes given back. Moved ranges and
// replaced buffers are reported by Changes. A budget.Reclaimer as it is.
// After an error (a device refusal) every mesh is intact.
func (a *Allocator) Shrink() (freedBytes uint64, err error) {
	if a.released {
		return 0, errReleased
	}
	for _, s := range a.slabs {
		n, err := s.ar.Shrink()
		freedBytes += n
		if err != nil {
			return freedBytes, fmt.Errorf("mesh: shrink slab of %v: %w", s.layout, err)
		}
	}
	return freedBytes, nil
}

// Compact packs every slab fully: all its free space becomes one region at
// its tail. Moved ranges are reported as by Sweep. O(placed arrays).
func (a *Allocator) Compact() error {
	if a.released {
		return errReleased
	}
	for _, s := range a.slabs {
		if _, err := s.ar.Compact(); err != nil {
			return fmt.Errorf("mesh: compact slab of %v: %w", s.layout, err)
		}
	}
	return nil
}
