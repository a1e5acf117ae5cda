package arena

import "github.com/gpumem/gpumem/offset"

// The calls mesh and meshlet placed batches with before Place. They go
// once both use Place.

// AllocateIfFits is AllocateOwned without making room: it allocates elems
// elements for owner only when the arena serves the request as it is, and
// returns the handle and where its elements start (what Offset(h) says
// until the next move), or ErrNoFit, bare, and changes nothing.
//
// Invariants:
//   - It never grows, sweeps, compacts or arms a sweep, so it moves no
//     allocation, leaves Buffer as it is, calls no OnMove and counts no
//     refusal in Stats.
//   - Whenever Fits(elems) holds (for instance after Reserve, within the
//     batch Reserve promises), it succeeds, unless no allocation node is
//     free (ErrTooManyAllocations). Under offset.Exact it succeeds exactly
//     when Fits holds and a node is free; under offset.Fit it may also
//     succeed where Fits does not promise it (a tighter region of the bin
//     below).
//   - The allocation is what AllocateOwned would have made in the same
//     state: same offset, same margin (Options.GuardBytes, filled with
//     GuardPattern), same owner.
//
// Errors: ErrNoFit (no free region serves it, which includes a request
// above the capacity), ErrInvalidSize, ErrTooManyAllocations, ErrReleased,
// or a device error from filling the margin (then nothing is allocated).
// O(1); it does not allocate, and a refusal builds no error value.
func (a *Arena) AllocateIfFits(elems uint32, owner uint64) (h Handle, off uint32, err error) {
	if a.released {
		return Handle{}, 0, errReleased
	}
	size, err := a.size(elems)
	if err != nil {
		return Handle{}, 0, err
	}
	if size > a.alloc.Capacity() {
		return Handle{}, 0, ErrNoFit
	}
	al, err := a.alloc.Allocate(size)
	if err != nil {
		if err == offset.ErrOutOfSpace {
			return Handle{}, 0, ErrNoFit
		}
		return Handle{}, 0, a.refused(elems, err)
	}
	if h, err = a.place(al, elems, owner); err != nil {
		return Handle{}, 0, err
	}
	return h, al.Offset, nil
}

// Reserved returns how many elements a request of elems takes: elems, its
// margin (Options.GuardBytes) and, with RoundToBins, its bin's rounding.
// An allocation of elems spans exactly that many elements from its
// offset, so allocations placed end to end can be written as one range.
// ErrInvalidSize where Allocate would refuse elems as a size.
func (a *Arena) Reserved(elems uint32) (uint32, error) { return a.size(elems) }

// Fits reports whether Allocate(elems) would be served now without the
// arena making room (no growth, sweep or compaction): one free region is
// at least RoundUp(elems) long. An allocation node must be free too
// (MaxAllocs), which Fits does not check. False for a request Allocate
// refuses as ErrInvalidSize, and after Release. O(1).
func (a *Arena) Fits(elems uint32) bool {
	if a.released {
		return false
	}
	size, err := a.size(elems)
	return err == nil && a.fits(size)
}

// CanGrowFor reports whether growth alone could make room for a request of
// elems elements: its bin's size after the used range (up to the end of the
// last allocation) stays within MaxElems. When neither Fits nor CanGrowFor
// holds, only a compaction makes room, and a caller placing a batch may
// rather take it elsewhere and leave the holes to Sweep (as the mesh
// allocator does for a slab at its maximum). O(1).
func (a *Arena) CanGrowFor(elems uint32) bool {
	if a.released {
		return false
	}
	size, err := a.size(elems)
	if err != nil {
		return false
	}
	return a.canGrowFor(size)
}

// Reserve makes sure that a request of elems elements is served without
// the arena making room: when no free region serves it (Fits), the arena
// makes room as Allocate does on a refusal, by the same policy (grow when
// short; when the room is there in pieces, arm a sweep and grow a little,
// or compact), so it grows at most once. It allocates nothing.
//
// The room serves more than one request: requests whose RoundUp sizes sum
// to at most RoundUp(elems) are all served, in any order, without making
// room, if nothing else is allocated in between and allocation nodes are
// free. (Each takes at most its rounded size from whichever region serves
// it, so the reserved region keeps at least the rest of the sum, and a
// region at least a bin's size long is filed in that bin or above.) This
// is how a caller places a batch with one growth at most.
//
// Errors: ErrInvalidSize, ErrFull (wrapping the device's refusal, if any),
// ErrReleased, or a device error from a copy or move; after an error every
// live allocation is intact. A Reserve that makes room counts as a refusal
// in Stats. O(1) unless it grows or compacts.
func (a *Arena) Reserve(elems uint32) error {
	if a.released {
		return errReleased
	}
	size, err := a.size(elems)
	if err != nil {
		return err
	}
	if a.fits(size) {
		return nil
	}
	return a.makeRoom(size)
}
