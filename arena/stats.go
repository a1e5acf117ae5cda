package arena

import "time"

// Stats is a snapshot of an arena's state and history. Elements are in
// elements, bytes in bytes.
type Stats struct {
	// CapacityElems is the buffer's size in elements.
	CapacityElems uint32
	// Allocations is the number of live allocations.
	Allocations int
	// OccupiedElems is the sum of the elements live allocations asked for.
	OccupiedElems uint64
	// ReservedElems is what the allocator holds for them: OccupiedElems
	// plus bin rounding (with RoundToBins) and margins (with GuardBytes).
	ReservedElems uint64
	// FreeElems is CapacityElems - ReservedElems.
	FreeElems uint32
	// LargestFreeElems is the largest free region.
	LargestFreeElems uint32

	Refusals           uint64 // allocator refusals (and Reserve calls) that made the arena make room
	FragmentedRefusals uint64 // those refused with enough free space in pieces
	Growths            uint64 // new buffers made for growth
	Shrinks            uint64 // new, smaller buffers made to give memory back (shrink.go)
	BytesCopied        uint64 // bytes copied by growths and shrinks
	FullCompactions    uint64 // full compactions, by Compact or on refusal
	SweepSteps         uint64 // allocations visited by sweeps and compactions, moved or not (SweepLimits.Steps spends these)
	Moves              uint64 // allocations moved by sweeps and compactions
	BytesMoved         uint64 // bytes those moves moved
	SweepsArmed        uint64 // sweep episodes started
	SweepsCompleted    uint64 // sweep episodes that reached the end
	Uploads            uint64 // writes and uploads made by Place and Rewrite
	// PreparedBytes is the bytes of the next growth's buffers, created
	// ahead of need (Options.GrowAhead) and not taken yet: 0 where the
	// growth makes them (device.Pending.Ahead).
	PreparedBytes uint64

	// With Options.TimeMoves on a device with a Timer: the batches of
	// moves whose GPU time has come back, and the sum of that time
	// (timing.go). Results come back after the GPU ran the batch.
	TimedBatches uint64
	MoveGPUTime  time.Duration
}

// Stats returns the arena's statistics. O(k) for the free regions in the
// top bin (see offset.Allocator.LargestFree), O(1) otherwise; with
// Options.TimeMoves, it first collects the GPU times that have come back
// (without waiting; it may poll the device).
func (a *Arena) Stats() Stats {
	if a.timing.timer != nil && !a.released {
		a.collect()
	}
	s := a.stats
	r := a.alloc.Report()
	s.CapacityElems = a.alloc.Capacity()
	s.Allocations = int(r.Allocations)
	s.OccupiedElems = a.occupied
	s.FreeElems = r.Free
	s.ReservedElems = uint64(s.CapacityElems - r.Free)
	s.LargestFreeElems = a.alloc.LargestFree()
	if a.ahead != nil {
		s.PreparedBytes = a.ahead.bytes
	}
	return s
}
