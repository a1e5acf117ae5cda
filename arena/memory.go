package arena

import (
	"strconv"

	"github.com/gpumem/gpumem/memory"
)

// Snapshot returns the arena as a memory.Buffer of kind
// memory.ArenaBuffer named name: its regions (converted to bytes with its
// element size), usage and statistics, history included. owner names the
// owner of each live region (its Owner tag says whose it is); nil gives
// region kind "arena" and the tag in decimal as the name. A manager built
// on arenas sets its own Kind. O(regions); it allocates the regions.
func (a *Arena) Snapshot(name string, owner func(Region) memory.Owner) memory.Buffer {
	return a.SnapshotPlane(0, name, owner)
}

// SnapshotPlane is Snapshot of plane p's buffer (see Options.Planes), in
// its element size; p out of range is plane 0.
func (a *Arena) SnapshotPlane(p int, name string, owner func(Region) memory.Owner) memory.Buffer {
	if p < 0 || p >= a.Planes() {
		p = 0
	}
	st := a.Stats()
	es := a.opts.planeElemSize(p)
	e := uint64(es)
	b := memory.Buffer{Name: name, Kind: memory.ArenaBuffer, ElemBytes: es,
		CapacityBytes: uint64(st.CapacityElems) * e, Stats: st.History()}
	if buf := a.PlaneBuffer(p); buf != nil {
		b.Usage = buf.Desc().Usage
	}
	b.Regions = make([]memory.Region, 0, 2*st.Allocations+1)
	for r := range a.Regions() {
		reg := memory.Region{Offset: uint64(r.Offset) * e, Size: uint64(r.Size) * e, State: memory.StateFree}
		if r.Used() {
			o := memory.Owner{Kind: "arena", Name: strconv.FormatUint(r.Owner, 10)}
			if owner != nil {
				o = owner(r)
			}
			reg.Used, reg.State, reg.Kind, reg.Name = uint64(r.Elems)*e, memory.StateUsed, o.Kind, o.Name
		}
		b.Regions = append(b.Regions, reg)
	}
	b.Measure()
	return b
}

// PreparedPlane returns the buffer of plane p (see Options.Planes) made
// ahead of the next growth (Options.GrowAhead), as the arena's memory.Holder
// shows it: named name + " (next growth)", of kind memory.PreparedBuffer,
// all free; false when none holds memory (device.Pending.Ahead).
func (a *Arena) PreparedPlane(p int, name string) (memory.Buffer, bool) {
	ah := a.ahead
	if ah == nil || p < 0 || p >= len(ah.pending) || !ah.pending[p].Ahead() {
		return memory.Buffer{}, false
	}
	desc := a.opts.bufferDesc(p, ah.elems)
	b := memory.Block(name+" (next growth)", memory.PreparedBuffer, desc.Size, 0, memory.Region{}, desc.Usage)
	b.ElemBytes = a.opts.planeElemSize(p)
	return b, true
}

// Holder returns a memory.Holder that shows the arena as its Snapshot(name,
// owner), then the buffer made ahead of its next growth, if any
// (PreparedPlane).
func (a *Arena) Holder(name string, owner func(Region) memory.Owner) memory.Holder {
	return holder{name, a, owner}
}

// holder is Holder's memory.Holder.
type holder struct {
	name  string
	a     *Arena
	owner func(Region) memory.Owner
}

// Memory returns the arena's Snapshot and its prepared buffer.
func (h holder) Memory() []memory.Buffer {
	bufs := []memory.Buffer{h.a.Snapshot(h.name, h.owner)}
	if b, ok := h.a.PreparedPlane(0, h.name); ok {
		bufs = append(bufs, b)
	}
	return bufs
}

// History returns the history counters of s as memory.Stats, for
// memory.Buffer.WithHistory. O(1).
func (s Stats) History() memory.Stats {
	return memory.Stats{History: true, Growths: s.Growths, Moves: s.Moves, BytesMoved: s.BytesMoved, BytesCopied: s.BytesCopied,
		SweepsCompleted: s.SweepsCompleted, FullCompactions: s.FullCompactions}
}
