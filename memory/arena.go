package memory

import (
	"strconv"

	"github.com/gpumem/gpumem/arena"
)

// Owner says who holds an allocation: Kind is what its bytes are
// ("vertex", "meshlet-data", ...), Name who holds them ("mesh 12.1").
type Owner struct {
	Kind, Name string
}

// FromArena returns a Buffer of kind ArenaBuffer named name, holding a's
// regions (converted to bytes with a's element size), usage and
// statistics, history included. owner names the owner of each live
// region (its Owner tag says whose it is); nil gives region kind "arena"
// and the tag in decimal as the name. A manager built on arenas sets its
// own Kind.
// O(regions); it allocates the regions.
func FromArena(name string, a *arena.Arena, owner func(arena.Region) Owner) Buffer {
	st := a.Stats()
	e := uint64(a.ElemSize())
	b := Buffer{Name: name, Kind: ArenaBuffer, ElemBytes: a.ElemSize(), CapacityBytes: uint64(st.CapacityElems) * e,
		Stats: ArenaHistory(st)}
	if buf := a.Buffer(); buf != nil {
		b.Usage = buf.Desc().Usage
	}
	b.Regions = make([]Region, 0, 2*st.Allocations+1)
	for r := range a.Regions() {
		reg := Region{Offset: uint64(r.Offset) * e, Size: uint64(r.Size) * e, State: StateFree}
		if r.Used() {
			o := Owner{Kind: "arena", Name: strconv.FormatUint(r.Owner, 10)}
			if owner != nil {
				o = owner(r)
			}
			reg.Used, reg.State, reg.Kind, reg.Name = uint64(r.Elems)*e, StateUsed, o.Kind, o.Name
		}
		b.Regions = append(b.Regions, reg)
	}
	b.Measure()
	return b
}

// Arena returns a Holder that shows a as one Buffer: FromArena(name, a,
// owner).
func Arena(name string, a *arena.Arena, owner func(arena.Region) Owner) Holder {
	return arenaHolder{name, a, owner}
}

// arenaHolder is Arena's Holder.
type arenaHolder struct {
	name  string
	a     *arena.Arena
	owner func(arena.Region) Owner
}

// Memory returns FromArena of h's arena.
func (h arenaHolder) Memory() []Buffer { return []Buffer{FromArena(h.name, h.a, h.owner)} }

// ArenaHistory returns an arena's history counters as Stats, for
// WithHistory. O(1).
func ArenaHistory(st arena.Stats) Stats {
	return Stats{History: true, Growths: st.Growths, Moves: st.Moves, BytesMoved: st.BytesMoved, BytesCopied: st.BytesCopied,
		SweepsCompleted: st.SweepsCompleted, FullCompactions: st.FullCompactions}
}
