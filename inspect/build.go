package inspect

import (
	"github.com/gpumem/gpumem/memory"
)

// Snapshot returns a dump of every buffer the holders hold, in the order
// given: the one call that maps a program's memory. Every gpumem manager
// is a memory.Holder (mesh.Allocator, meshlet.Manager, bindless.Registry,
// ring.Buffer, ring.Frame, staging.Belt, pool.Pool; arena.Arena.Holder makes
// one of an arena.Arena). device says what the memory is on, in words; label what
// the dump is of ("frame 300"). Allocations are named by their holders
// (handles, source ids): Rename gives them the program's own names.
// O(regions); it allocates them.
func Snapshot(device, label string, holders ...memory.Holder) Dump {
	var bufs []memory.Buffer
	for _, h := range holders {
		bufs = append(bufs, h.Memory()...)
	}
	return New(device, label, bufs...)
}

// Rename renames every allocation of d: name returns the new name of a
// region (its Kind and Name say whose it is); "" keeps the old name.
// O(regions).
func (d *Dump) Rename(name func(memory.Region) string) {
	for i := range d.Buffers {
		for j := range d.Buffers[i].Regions {
			r := &d.Buffers[i].Regions[j]
			if !r.Live() {
				continue
			}
			if n := name(*r); n != "" {
				r.Name = n
			}
		}
	}
}

// MarkMoved marks what moved since prev, a snapshot of the same holders
// taken earlier (a frame before, say): every allocation of d whose owner
// (the same Kind and Name) was in prev at another offset of a buffer of
// the same name, with the same Used bytes, is StateMoving (a new size is
// a new placement, not a move). Each buffer's FrameMoves and
// FrameBytesMoved become the moves its history counted since prev, where
// both snapshots count history, or else the allocations marked and their
// bytes, whichever is more. Totals are summed again. Names must tell
// owners apart within a Kind for the marks to be right. O(regions of d
// and prev).
func (d *Dump) MarkMoved(prev *Dump) {
	type key struct{ kind, name string }
	type at struct {
		buf          string
		offset, used uint64
	}
	was := make(map[key]at)
	hist := make(map[string]memory.Stats, len(prev.Buffers))
	for i := range prev.Buffers {
		b := &prev.Buffers[i]
		hist[b.Name] = b.Stats
		for _, r := range b.Regions {
			if r.Live() {
				was[key{r.Kind, r.Name}] = at{b.Name, r.Offset, r.Used}
			}
		}
	}
	for i := range d.Buffers {
		b := &d.Buffers[i]
		var moves, bytes uint64
		for j := range b.Regions {
			r := &b.Regions[j]
			if !r.Live() {
				continue
			}
			w, ok := was[key{r.Kind, r.Name}]
			if ok && w.buf == b.Name && w.used == r.Used && w.offset != r.Offset {
				r.State = memory.StateMoving
				moves++
				bytes += r.Size
			} else {
				r.State = memory.StateUsed
			}
		}
		if p, ok := hist[b.Name]; ok && p.History && b.Stats.History && b.Stats.Moves >= p.Moves {
			moves = max(moves, b.Stats.Moves-p.Moves)
			bytes = max(bytes, b.Stats.BytesMoved-p.BytesMoved)
		}
		b.Stats.FrameMoves, b.Stats.FrameBytesMoved = moves, bytes
		b.Measure()
	}
	d.Totals = memory.Totals(d.Buffers)
}
