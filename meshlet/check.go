package meshlet

import (
	"fmt"

	"github.com/gpumem/gpumem/arena"
)

// check verifies the manager's bookkeeping against its arenas: every live
// batch's two allocations are live, of its sizes, and tagged with its slot
// as their owner; its handle is live in the table; the arenas hold nothing
// else; the counts and sums agree; empty slots hold nothing. O(batches). Tests run it after every operation
// (export_test.go); it reads no device memory.
func (m *Manager) check() error {
	if m.gone {
		return nil
	}
	live := 0
	var words, meshlets uint64
	for id := range m.batches {
		b := &m.batches[id]
		if b.data == (arena.Handle{}) {
			if b.words != 0 || b.meshlets != 0 || b.rows != (arena.Handle{}) || b.h != (BatchHandle{}) {
				return fmt.Errorf("empty slot %d holds a batch", id)
			}
			continue
		}
		if b.h.id() != uint32(id) || !m.ids.Live(b.h.h) {
			return fmt.Errorf("slot %d holds batch %v, not live in the handle table", id, b.h)
		}
		live++
		words += uint64(b.words)
		meshlets += uint64(b.meshlets)
		if n, err := m.data.Elems(b.data); err != nil || n != b.words {
			return fmt.Errorf("batch %d: data allocation of %d elements (%v), want %d", id, n, err, b.words)
		}
		if n, err := m.rows.Elems(b.rows); err != nil || n != b.meshlets {
			return fmt.Errorf("batch %d: rows allocation of %d elements (%v), want %d", id, n, err, b.meshlets)
		}
		if o, err := m.data.Owner(b.data); err != nil || o != uint64(id) {
			return fmt.Errorf("batch %d: data owner %d, %v", id, o, err)
		}
		if o, err := m.rows.Owner(b.rows); err != nil || o != uint64(id) {
			return fmt.Errorf("batch %d: rows owner %d, %v", id, o, err)
		}
	}
	if st := m.ids.Stats(); st.Live < uint64(live) {
		return fmt.Errorf("%d batches placed, %d handles live", live, st.Live)
	}
	switch {
	case live != m.live || m.data.Len() != live || m.rows.Len() != live:
		return fmt.Errorf("%d live batches, counted %d, allocations %d and %d", live, m.live, m.data.Len(), m.rows.Len())
	case words != m.words || meshlets != m.meshlets:
		return fmt.Errorf("sums %d words, %d rows; counted %d, %d", words, meshlets, m.words, m.meshlets)
	case len(m.pending) != 0:
		return fmt.Errorf("%d patches pending between calls", len(m.pending))
	}
	return nil
}
