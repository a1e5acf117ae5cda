package meshlet

import (
	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/handle"
	"github.com/gpumem/gpumem/memory"
)

// The Parts of a batch, as memory.Change.Part names them.
const (
	PartData uint8 = 0 // the batch's data words, in the data buffer
	PartRows uint8 = 1 // the batch's rows, in the rows buffer
)

// Changes appends to dst what changed since the previous call, as
// memory.Change states: a Moved per batch part a sweep, a compaction or a
// placement moved (Owner is the BatchHandle, HandleOf reads it back; Part
// is PartData or PartRows; offsets and size in bytes of that buffer), a
// Replaced per arena buffer grown or shrunk, a Released for each buffer
// Release released. O(changes); it
// allocates only when dst lacks room.
func (m *Manager) Changes(dst []memory.Change) []memory.Change {
	for _, a := range [2]*arena.Arena{m.data, m.rows} {
		m.fromArena = a.Changes(m.fromArena[:0])
		m.changes.Forward(m.fromArena)
		clear(m.fromArena)
	}
	return m.changes.Take(dst)
}

// logMove records the move mv of part of its batch in arena a.
func (m *Manager) logMove(a *arena.Arena, part uint8, mv arena.Move) {
	e, buf := uint64(a.ElemSize()), a.Buffer()
	m.changes.Moved(mv.Owner<<1|uint64(part), memory.Change{Owner: uint64(m.batches[mv.Owner].h.h), Part: part,
		Old: buf, Buffer: buf, FromBytes: uint64(mv.From) * e, ToBytes: uint64(mv.To) * e, SizeBytes: uint64(mv.Elems) * e})
}

// HandleOf returns the batch a Moved change of a Manager names.
func HandleOf(c memory.Change) BatchHandle { return BatchHandle{handle.Handle(c.Owner)} }
