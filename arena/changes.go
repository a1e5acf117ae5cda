package arena

import "github.com/gpumem/gpumem/memory"

// Changes appends to dst what changed in the arena since the previous
// call, as memory.Change states: a Moved per allocation a sweep, a
// compaction or Place moved (Owner is its owner tag, the place its byte
// offsets in the buffer), a Replaced per growth or shrink of the buffer
// (coalesced: the buffer the caller last saw, the one now), a Released
// for the buffer Release released. With Options.OnMove set, moves go
// there instead and Changes reports only the buffer. O(changes); it
// allocates only when dst lacks room.
func (a *Arena) Changes(dst []memory.Change) []memory.Change { return a.changes.Take(dst) }

// report gives the moves ms to OnMove or, without one, to the change log.
func (a *Arena) report(ms []Move) {
	if a.opts.OnMove != nil {
		for _, m := range ms {
			a.opts.OnMove(m)
		}
		return
	}
	e := uint64(a.opts.ElemSize)
	in := a.changes.Within(a.buf, nil)
	for _, m := range ms {
		a.changes.MovedWithin(&a.slots[m.Handle.id].change, uint64(m.Handle.id), in, m.Owner, 0,
			uint64(m.From)*e, uint64(m.To)*e, uint64(m.Elems)*e)
	}
}
