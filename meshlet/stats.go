package meshlet

import "github.com/gpumem/gpumem/arena"

// Stats is a snapshot of a manager's state and history: both arenas'
// statistics, batch counts, and what the manager did on top of them.
type Stats struct {
	// Batches is the number of live batches; Meshlets and DataWords sum
	// their rows and data words (what they asked for, before any bin
	// rounding).
	Batches   int
	Meshlets  uint64
	DataWords uint64

	// Data and Rows are the arenas' own statistics: the data arena's
	// elements are words, the rows arena's are rows.
	Data, Rows arena.Stats

	// CapacityBytes, OccupiedBytes and ReservedBytes add up both arenas'
	// capacity, occupied and reserved elements, in bytes.
	CapacityBytes, OccupiedBytes, ReservedBytes uint64

	// Shrinks counts the arenas' moves into smaller buffers
	// (Options.ShrinkBelow, Shrink): Data.Shrinks plus Rows.Shrinks.
	Shrinks uint64

	Sweeps       uint64 // Sweep calls
	Clones       uint64 // batches placed by Clone
	PatchedWords uint64 // address words patched on the device
	Changed      uint64 // changed batches reported (once per batch per call)
	// Writes counts the device writes (or belt uploads) that uploaded
	// batches: Data.Uploads plus Rows.Uploads, about two per Add and one
	// per run of adjacent allocations per arena for AddBatches.
	Writes uint64
}

// Stats returns the manager's statistics. O(1) but for the arenas' Stats
// (see arena.Arena.Stats); does not allocate. A released manager returns
// its counters only.
func (m *Manager) Stats() Stats {
	s := m.stats
	if m.gone {
		return s
	}
	s.Batches = m.live
	s.DataWords, s.Meshlets = m.words, m.meshlets
	s.Data, s.Rows = m.data.Stats(), m.rows.Stats()
	s.Shrinks = s.Data.Shrinks + s.Rows.Shrinks
	s.Writes = s.Data.Uploads + s.Rows.Uploads
	rb := uint64(m.rowLen)
	s.CapacityBytes = 4*uint64(s.Data.CapacityElems) + rb*uint64(s.Rows.CapacityElems)
	s.OccupiedBytes = 4*s.Data.OccupiedElems + rb*s.Rows.OccupiedElems
	s.ReservedBytes = 4*s.Data.ReservedElems + rb*s.Rows.ReservedElems
	return s
}
