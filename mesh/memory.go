package mesh

import (
	"fmt"

	"github.com/gpumem/gpumem/memory"
)

// Memory returns the allocator's buffers as they are now, read-only (a
// memory.Holder): each slab, in creation order, named by its layout and
// creation number ("slab of 12-byte vertices #3", after Options.Label),
// of kind memory.VertexSlab or IndexSlab, with a region per placed array of kind "vertex" or
// "index" named by its mesh's Handle ("handle 3.1"), whole slots (Used is
// the array's bytes, Size its slots'), and the slab's arena history, each
// followed by the buffer made ahead of its next growth, if any
// (Options.GrowAhead, arena.Arena.PreparedPlane); then
// each buffer of its own (kind memory.VertexBuffer or IndexBuffer), in
// handle order. Staged
// arrays are in no buffer. O(placed arrays + meshes); it allocates the
// snapshot.
func (a *Allocator) Memory() []memory.Buffer {
	if a.released {
		return nil
	}
	bufs := make([]memory.Buffer, 0, len(a.slabs)+a.own)
	for _, sl := range a.slabs {
		st := sl.ar.Stats()
		for plane := range sl.ar.Planes() {
			sb := uint64(sl.layout.StreamSlotBytes(plane))
			stride := sl.layout.Stride(plane)
			name := fmt.Sprintf("slab of %v #%d", sl.layout, sl.seq)
			if plane > 0 {
				name += fmt.Sprintf(" stream %d", plane)
			}
			b := memory.Buffer{Name: a.set.label(name), Kind: bufferKind(sl.layout.Kind, memory.VertexSlab, memory.IndexSlab),
				ElemBytes: stride, CapacityBytes: uint64(st.CapacityElems) * sb,
				Usage: sl.ar.PlaneBuffer(plane).Desc().Usage, Stats: st.History(),
				Regions: make([]memory.Region, 0, 2*st.Allocations+1)}
			for r := range sl.ar.Regions() {
				reg := memory.Region{Offset: uint64(r.Offset) * sb, Size: uint64(r.Size) * sb, State: memory.StateFree}
				if r.Used() {
					idx, k := ownerOf(r.Owner)
					rec := &a.recs[idx]
					reg.State, reg.Kind, reg.Name = memory.StateUsed, regionKind(k), Handle{idx, rec.gen}.String()
					p := &rec.parts[k]
					if q := rec.old(k); q.slab == sl {
						if off, err := sl.ar.Offset(q.h); err == nil && off == r.Offset {
							p = q // an old array, drawn until its new one is placed
						}
					}
					reg.Used = uint64(p.elems) * uint64(stride)
				}
				b.Regions = append(b.Regions, reg)
			}
			b.Measure()
			bufs = append(bufs, b)
			if pb, ok := sl.ar.PreparedPlane(plane, b.Name); ok {
				bufs = append(bufs, pb)
			}
		}
	}
	for idx := range a.recs {
		rec := &a.recs[idx]
		if !rec.live {
			continue
		}
		for k := range rec.parts {
			p := &rec.parts[k]
			if p.own == nil {
				continue
			}
			h := Handle{uint32(idx), rec.gen}
			for s, own := range p.own.bufs {
				stride := p.layout.Stride(s)
				used := uint64(p.elems) * uint64(stride)
				name := fmt.Sprintf("%v of %v", p.layout, h)
				if s > 0 {
					name += fmt.Sprintf(" stream %d", s)
				}
				b, err := memory.NewBuffer(a.set.label(name), bufferKind(p.layout.Kind, memory.VertexBuffer, memory.IndexBuffer), own.Size(),
					[]memory.Region{{Size: min((used+3)&^3, own.Size()), Used: used, Kind: regionKind(Kind(k)), Name: h.String()}})
				if err != nil {
					continue // an array larger than its own buffer: check reports it
				}
				b.ElemBytes, b.Usage = stride, own.Desc().Usage
				bufs = append(bufs, b)
			}
		}
	}
	return bufs
}

// bufferKind returns idx for a buffer of indices, vtx for one of
// vertices.
func bufferKind(k Kind, vtx, idx memory.Kind) memory.Kind {
	if k == Indices {
		return idx
	}
	return vtx
}

// regionKind is the memory region kind of a mesh's k array.
func regionKind(k Kind) string {
	if k == Indices {
		return "index"
	}
	return "vertex"
}

var _ memory.Holder = (*Allocator)(nil)
