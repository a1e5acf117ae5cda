package meshlet

import (
	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/memory"
)

// String returns the handle as "batch index.generation".
func (h BatchHandle) String() string { return "batch " + h.h.String() }

// Memory returns the manager's two arenas as they are now, read-only (a
// memory.Holder): the data arena (Options.Data.Label, kind memory.MeshletArena,
// regions of kind "meshlet-data") and the rows arena (regions of kind
// "meshlet-rows"), each allocation named by its batch's handle ("batch
// 3.1"), with the arenas' history, each followed by the buffer made ahead
// of its next growth, if any (arena.Arena.PreparedPlane). O(batches); it
// allocates the snapshot.
func (m *Manager) Memory() []memory.Buffer {
	if m.gone {
		return nil
	}
	owner := func(kind string) func(arena.Region) memory.Owner {
		return func(r arena.Region) memory.Owner {
			return memory.Owner{Kind: kind, Name: m.batches[r.Owner].h.String()}
		}
	}
	data := m.data.Snapshot(m.opts.Data.Label, owner("meshlet-data"))
	rows := m.rows.Snapshot(m.opts.Rows.Label, owner("meshlet-rows"))
	data.Kind, rows.Kind = memory.MeshletArena, memory.MeshletArena
	bufs := []memory.Buffer{data}
	if b, ok := m.data.PreparedPlane(0, data.Name); ok {
		bufs = append(bufs, b)
	}
	bufs = append(bufs, rows)
	if b, ok := m.rows.PreparedPlane(0, rows.Name); ok {
		bufs = append(bufs, b)
	}
	return bufs
}

var _ memory.Holder = (*Manager)(nil)
