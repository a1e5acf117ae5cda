// Package arena is one growable device buffer that an offset allocator
// hands out in elements, and that compacts itself incrementally, in budgets,
// so a frame's cost stays bounded.
//
// # Basics
//
// An Arena owns a device.Buffer and an offset.Allocator over it, in
// elements of ElemSize bytes (a multiple of 4). Allocate returns a Handle
// that names the allocation for its whole life; where its elements start,
// Offset, changes when the arena compacts, and the arena reports every such
// move with the old and new offsets: in Changes (memory.Change, the shape
// every manager shares), or to Options.OnMove when it is set. Write and
// Read reach an allocation's bytes through the device.
//
// An allocation may carry an owner tag, a uint64 the caller gives to
// AllocateOwned (an index into its own table, say): Owner returns it, and
// every Move and Region of the allocation carries it, so a manager on top
// translates the arena's reports into its own names without a map from
// handles.
//
// When the allocator refuses a request the arena makes room:
//
//   - Short of room (the free space would not serve the request and leave
//     a sixteenth of the capacity): grow. One new buffer, larger by the
//     growth factor (or by what the request needs), one copy of the used
//     part, the old buffer released once the device is done with it.
//     Offsets do not change, but Buffer does.
//   - Room in pieces (by default; see Options.Fragmented): arm an
//     incremental sweep and grow once, a little, so the request gets
//     through now; the sweep gathers the pieces over the following Sweep
//     calls. A second such refusal before the sweep finishes compacts fully
//     instead.
//   - The device refuses to grow (out of memory, maximum size): compact
//     fully and retry; if that is not enough, ErrFull. Every live
//     allocation's contents are intact and the arena still works.
//
// Place takes a batch of requests (owner tag, elements, and the bytes or
// a function that fills them), makes room at most once for the whole
// batch, places every request and writes the bytes through an Uploader it
// is given (a staging belt; queue writes without one); it returns the
// placements with every move it made. Its doc comment holds the argument
// for why one growth serves the batch. PlaceSome takes what fits and
// leaves the rest, for a caller with other arenas to try; NewFor sizes a
// new arena for a batch.
//
// Sweep(budget) walks live allocations in address order, sliding each down
// over the free region before it, within a budget of moves, bytes and
// steps, and moves the bytes on the device as one batch. When a sweep
// completes, all free space is one region at the tail. Frees and
// allocations between Sweep calls keep the walk correct: a hole opened
// behind the walk is left for the next sweep, which starts there.
//
// # Two shapes for moves
//
// Changes is how a consumer learns what moved, as from every manager. The
// arena is also the layer the managers build on, and keeps two shapes for
// them: Options.OnMove, through which mesh and meshlet name each move in
// their own terms while the arena's call is under way (meshlet patches
// address words from it), and the []Move that Sweep, Compact, Place and
// PlaceSome return, which is exactly what that call spent, so that mesh
// and meshlet can split one SweepLimits across several arenas. Both carry
// the moves Changes reports when OnMove is not set.
//
// # Invariants
//
//   - Every live allocation's bytes are where Offset says, whatever growth,
//     sweep or compaction happened in between; a failed call changes none.
//   - Stats: OccupiedElems <= ReservedElems <= CapacityElems, and
//     ReservedElems + FreeElems == CapacityElems.
//   - After a completed sweep or a compaction, LargestFreeElems == FreeElems.
//   - Every Move and Region of an allocation, and Owner, report the owner
//     tag it was allocated with, whatever moved it.
//   - Place makes room at most once per batch and places every request
//     or none; its moves never include the batch's own allocations.
//
// # Caveats
//
// A device error other than a refusal to create a buffer (a lost device)
// leaves the contents unspecified. Growth replaces the buffer: anything
// bound to the old one (bind groups, vertex bindings) must be rebuilt:
// Changes reports it Replaced.
//
// An Arena is not safe for concurrent use.
package arena
