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
func (a *Arena) Changes(dst []memory.Change) []memory.Change {
	a.logMoves()
	return a.changes.Take(dst)
}

// report gives the moves ms to OnMove or, without one, marks them for the
// change log: a batch of moves costs a flag and an id per allocation,
// and logMoves turns them into changes when the log needs them (Changes,
// a buffer replaced or released), by then coalesced.
func (a *Arena) report(ms []Move) {
	if a.opts.OnMove != nil {
		for _, m := range ms {
			a.opts.OnMove(m)
		}
		return
	}
	for _, m := range ms {
		a.mark(m.Handle.id, m.From)
	}
	a.boundLog()
}

// mark marks allocation id, which was at from before this move, as moved
// for the change log, unless a move not yet logged marked it already.
func (a *Arena) mark(id, from uint32) {
	if s := &a.slots[id]; !s.moved {
		s.moved, s.from = true, from
		a.movedIDs = append(a.movedIDs, id)
	}
}

// boundLog enters the marked moves into the change log once they pass
// memory.MaxPendingChanges.
func (a *Arena) boundLog() {
	if len(a.movedIDs) > memory.MaxPendingChanges {
		// A consumer that never asks: the log bounds what is kept (it
		// overflows), and freed ids do not pile up here.
		a.logMoves()
	}
}

// logMoves enters the marked moves into the change log, each from where
// it was when first marked to where it is now, in the current buffer:
// every buffer replacement and release calls it first, so the moves it
// enters all happened in a.buf.
func (a *Arena) logMoves() {
	if len(a.movedIDs) == 0 {
		return
	}
	e := uint64(a.opts.ElemSize)
	in := a.changes.Within(a.buf, nil)
	for _, id := range a.movedIDs {
		s := &a.slots[id]
		if !s.moved { // freed since (and perhaps marked again later in the list)
			continue
		}
		s.moved = false
		a.changes.MovedWithin(&s.change, uint64(id), in, s.owner, 0,
			uint64(s.from)*e, uint64(s.alloc.Offset)*e, uint64(s.elems)*e)
	}
	a.movedIDs = a.movedIDs[:0]
}
