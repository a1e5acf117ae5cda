package mesh

import "github.com/gpumem/gpumem/memory"

// Changes appends to dst what changed since the previous call, as
// memory.Change states: a Moved per vertex or index array a sweep or a
// compaction moved, or a Flush re-placed after a Modify to new sizes (its
// new data, SizeBytes its new size); Owner is the mesh's Handle (HandleOf
// reads it back), Part its Kind, offsets and size in bytes of the first
// stream's buffer. A Replaced per slab buffer grown or shrunk (one per
// stream), a Released per slab or buffer of its own released (a removed
// or modified mesh's). A new mesh is not a change: Slices says where it
// is once Flush placed it. O(changes + slabs); it allocates only when dst
// lacks room.
func (a *Allocator) Changes(dst []memory.Change) []memory.Change {
	for _, s := range a.slabs {
		a.forward(s)
	}
	return a.changes.Take(dst)
}

// forward moves the buffer changes of slab s's arena into a's log (the
// arena's moves come through onMove).
func (a *Allocator) forward(s *slab) {
	a.fromSlab = s.ar.Changes(a.fromSlab[:0])
	a.changes.Forward(a.fromSlab)
	clear(a.fromSlab)
}

// Owner returns h packed in a uint64, as memory.Change.Owner carries it.
func (h Handle) Owner() uint64 { return uint64(h.gen)<<32 | uint64(h.idx) }

// HandleOf returns the mesh a Moved change of an Allocator names.
func HandleOf(c memory.Change) Handle {
	return Handle{idx: uint32(c.Owner), gen: uint32(c.Owner >> 32)}
}
