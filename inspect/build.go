package inspect

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/offset"
)

// Owner says who holds an allocation, for a dump: Kind is what the maps
// color by ("vertex", "index", "meshlet-data", ...), Name tells it apart
// ("zone3/mesh12"). Moving marks an allocation whose move is in flight.
type Owner struct {
	Kind, Name string
	Moving     bool
}

func (o Owner) state() State {
	if o.Moving {
		return StateMoving
	}
	return StateUsed
}

// FromArena returns a Buffer of kind "arena" named name, holding a's
// regions (converted to bytes with a's element size) and statistics.
// owner names the owner of each live handle; nil names every allocation
// of kind "arena". O(regions); it allocates the regions.
func FromArena(name string, a *arena.Arena, owner func(arena.Handle) Owner) Buffer {
	st := a.Stats()
	e := uint64(a.ElemSize())
	b := Buffer{Name: name, Kind: "arena", ElemBytes: a.ElemSize(), CapacityBytes: uint64(st.CapacityElems) * e,
		Stats: ArenaHistory(st)}
	b.Regions = make([]Region, 0, 2*st.Allocations+1)
	for r := range a.Regions() {
		reg := Region{Offset: uint64(r.Offset) * e, Size: uint64(r.Size) * e, State: StateFree}
		if r.Used() {
			o := Owner{Kind: "arena"}
			if owner != nil {
				o = owner(r.Handle)
			}
			reg.Used, reg.State, reg.Kind, reg.Name = uint64(r.Elems)*e, o.state(), o.Kind, o.Name
		}
		b.Regions = append(b.Regions, reg)
	}
	b.measure()
	return b
}

// FromAllocator returns a Buffer of kind "offset" named name, holding a's
// regions, each unit unitBytes bytes. owner names the owner of the
// allocation at each region (in units); nil names every allocation of
// kind "offset". An allocator knows no requested sizes: Used is Size.
// O(regions); it allocates the regions.
func FromAllocator(name string, a *offset.Allocator, unitBytes uint32, owner func(offset.Region) Owner) Buffer {
	u := uint64(unitBytes)
	b := Buffer{Name: name, Kind: "offset", ElemBytes: unitBytes, CapacityBytes: uint64(a.Capacity()) * u,
		Regions: make([]Region, 0, 2*a.Len()+1)}
	for r := range a.Regions() {
		reg := Region{Offset: uint64(r.Offset) * u, Size: uint64(r.Size) * u, State: StateFree}
		if r.Used {
			o := Owner{Kind: "offset"}
			if owner != nil {
				o = owner(r)
			}
			reg.Used, reg.State, reg.Kind, reg.Name = reg.Size, o.state(), o.Kind, o.Name
		}
		b.Regions = append(b.Regions, reg)
	}
	b.measure()
	return b
}

// NewBuffer returns a Buffer of capacityBytes bytes from its live regions
// alone, in any order: the gaps between them become free regions. It is
// how a manager that keeps its own records (mesh slabs, texture pages, a
// ring) contributes a buffer. A region's State defaults to StateUsed and
// its Used, when 0, to its Size. Errors wrap ErrInvalidRegion: a region
// that is empty, free, passes the capacity or overlaps another.
// O(n log n) for n regions; it does not keep used.
func NewBuffer(name, kind string, capacityBytes uint64, used []Region) (Buffer, error) {
	live := slices.Clone(used)
	slices.SortFunc(live, func(a, b Region) int { return cmp.Compare(a.Offset, b.Offset) })
	b := Buffer{Name: name, Kind: kind, CapacityBytes: capacityBytes, Regions: make([]Region, 0, 2*len(live)+1)}
	var end uint64
	for _, r := range live {
		switch {
		case r.State == "":
			r.State = StateUsed
		case !r.Live():
			return Buffer{}, fmt.Errorf("%w: %s region at %d given as live", ErrInvalidRegion, r.State, r.Offset)
		}
		if r.Used == 0 {
			r.Used = r.Size
		}
		switch {
		case r.Size == 0 || r.Used > r.Size:
			return Buffer{}, fmt.Errorf("%w: region at %d: size %d, used %d", ErrInvalidRegion, r.Offset, r.Size, r.Used)
		case r.Offset < end:
			return Buffer{}, fmt.Errorf("%w: region at %d overlaps the one ending at %d", ErrInvalidRegion, r.Offset, end)
		case r.Offset > capacityBytes || r.Size > capacityBytes-r.Offset:
			return Buffer{}, fmt.Errorf("%w: region [%d, +%d) passes the capacity %d", ErrInvalidRegion, r.Offset, r.Size, capacityBytes)
		}
		if r.Offset > end {
			b.Regions = append(b.Regions, Region{Offset: end, Size: r.Offset - end, State: StateFree})
		}
		b.Regions = append(b.Regions, r)
		end = r.Offset + r.Size
	}
	if capacityBytes > end {
		b.Regions = append(b.Regions, Region{Offset: end, Size: capacityBytes - end, State: StateFree})
	}
	b.measure()
	return b, nil
}

// WithHistory returns b with the history counters of h (growths, moves,
// bytes moved and copied, sweeps completed, full compactions), for a
// manager that counts them, and History set. O(1).
func (b Buffer) WithHistory(h Stats) Buffer {
	s := &b.Stats
	s.History = true
	s.Growths, s.Moves, s.BytesMoved, s.BytesCopied = h.Growths, h.Moves, h.BytesMoved, h.BytesCopied
	s.SweepsCompleted, s.FullCompactions = h.SweepsCompleted, h.FullCompactions
	return b
}

// WithFrame returns b with the moves recorded during the dump's frame and
// the bytes they moved (Stats.FrameMoves, FrameBytesMoved). O(1).
func (b Buffer) WithFrame(moves, bytesMoved uint64) Buffer {
	b.Stats.FrameMoves, b.Stats.FrameBytesMoved = moves, bytesMoved
	return b
}

// ArenaHistory returns an arena's history counters as Stats, for
// WithHistory. O(1).
func ArenaHistory(st arena.Stats) Stats {
	return Stats{History: true, Growths: st.Growths, Moves: st.Moves, BytesMoved: st.BytesMoved, BytesCopied: st.BytesCopied,
		SweepsCompleted: st.SweepsCompleted, FullCompactions: st.FullCompactions}
}
