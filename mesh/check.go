package mesh

import (
	"fmt"
)

// check verifies the allocator's bookkeeping against its slabs: every
// placed array's range carries its record's owner tag, and is of its
// size; the arenas' counts and the slab lists agree; resident meshes are
// placed whole; free records are dead. O(meshes + slabs). Tests
// run it after every operation (export_test.go); it reads no device memory.
func (a *Allocator) check() error {
	if a.released {
		return nil
	}
	for i := range a.recs {
		// A handle live without a record is a Loader's, not taken yet.
		if r := &a.recs[i]; r.live && !a.ids.Live(Handle{uint32(i), r.gen}.id()) {
			return fmt.Errorf("record %d: live, its handle not", i)
		}
	}
	inSlabs := map[*slab]bool{}
	for _, s := range a.slabs {
		inSlabs[s] = true
	}
	n := 0
	for l, list := range a.byLayout {
		for _, s := range list {
			if !inSlabs[s] || s.layout != l {
				return fmt.Errorf("slab of %v listed under %v or not alive", s.layout, l)
			}
			n++
		}
	}
	if n != len(a.slabs) {
		return fmt.Errorf("%d slabs by layout, %d alive", n, len(a.slabs))
	}
	owned := map[*slab]int{}
	live, own, staged := 0, 0, 0
	var ownBytes uint64
	for i := range a.recs {
		r := &a.recs[i]
		if !r.live {
			if r.parts[0].placed() || r.parts[1].placed() || r.prev != nil || r.parts[0].elems+r.parts[1].elems > 0 {
				return fmt.Errorf("dead record %d holds arrays", i)
			}
			continue
		}
		live++
		if r.pending {
			staged++
		}
		if !r.pending && !r.resident {
			return fmt.Errorf("mesh %d neither staged nor resident", i)
		}
		for k := range 2 * len(r.parts) {
			p := &r.parts[k%2]
			if k >= 2 {
				p = r.old(Kind(k % 2))
				if !p.placed() {
					continue
				}
				if !r.resident || !r.pending {
					return fmt.Errorf("mesh %d: an old %v array kept, resident %v, staged %v", i, Kind(k%2), r.resident, r.pending)
				}
			}
			k %= 2
			if p.elems == 0 && p.placed() {
				return fmt.Errorf("mesh %d: empty %v array placed", i, Kind(k))
			}
			if r.resident && p.elems > 0 && !p.placed() && !r.pending { // a staged one draws the old
				return fmt.Errorf("mesh %d resident, its %v array not placed", i, Kind(k))
			}
			if p.elems > 0 && p.layout.Kind != Kind(k) {
				return fmt.Errorf("mesh %d: %v array of layout %v", i, Kind(k), p.layout)
			}
			switch {
			case p.slab != nil && p.own != nil:
				return fmt.Errorf("mesh %d: %v array in a slab and a buffer of its own", i, Kind(k))
			case p.slab != nil:
				if !inSlabs[p.slab] || p.slab.layout != p.layout {
					return fmt.Errorf("mesh %d: %v array in a dead or foreign slab", i, Kind(k))
				}
				if tag, err := p.slab.ar.Owner(p.h); err != nil || tag != owner(uint32(i), Kind(k)) {
					return fmt.Errorf("mesh %d: %v range not owned by it (owner %#x, %v)", i, Kind(k), tag, err)
				}
				slots, err := p.slab.ar.Elems(p.h)
				if err != nil || slots != p.layout.Slots(p.elems) {
					return fmt.Errorf("mesh %d: %v range of %d slots, want %d (%v)", i, Kind(k), slots, p.layout.Slots(p.elems), err)
				}
				owned[p.slab]++
			case p.own != nil:
				if len(p.own.bufs) != p.layout.Streams() {
					return fmt.Errorf("mesh %d: %d own buffers for %d streams", i, len(p.own.bufs), p.layout.Streams())
				}
				for s, b := range p.own.bufs {
					if b.Size() != a.streamBytes(p, s) {
						return fmt.Errorf("mesh %d: stream %d's own buffer of %d bytes, want %d", i, s, b.Size(), a.streamBytes(p, s))
					}
					ownBytes += b.Size()
				}
				own++
			}
		}
	}
	if staged != a.staged {
		return fmt.Errorf("%d meshes staged, counted %d", staged, a.staged)
	}
	queued := 0
	for _, h := range a.pending[a.head:] {
		if r := &a.recs[h.idx]; r.live && r.gen == h.gen && r.pending {
			queued++
		}
	}
	if queued != staged {
		return fmt.Errorf("%d staged meshes queued for a Flush, %d staged", queued, staged)
	}
	if live != a.live || own != a.own || ownBytes != a.ownBytes {
		return fmt.Errorf("counts: %d live (want %d), %d own buffers (%d), %d own bytes (%d)", live, a.live, own, a.own, ownBytes, a.ownBytes)
	}
	for _, s := range a.slabs {
		if st := s.ar.Stats(); owned[s] != s.ar.Len() || st.Allocations != s.ar.Len() {
			return fmt.Errorf("slab of %v: %d arrays placed, %d allocations (Len %d)", s.layout, owned[s], st.Allocations, s.ar.Len())
		}
	}
	return nil
}
