package bindless

import (
	"fmt"
	"slices"
)

// Shrink gives memory back now, without moving a texture, and returns
// the bytes given back (as package budget charges them). It releases the
// texture of every page but page 0 that holds no texture in use: the page
// is vacant (it keeps its index and bucket; Pages has nil there), or is
// dropped when it ends the page list. Then it trims every live page whose
// layers in use all lie in its lower half to exactly those layers; a trim
// the device refuses leaves that page as it was. A page being made ahead
// of need (Options.PageAhead) is given up, its bytes counted. Version
// changes when a page was released or trimmed. O(layers) plus the
// copies. It fails only with device.ErrReleased.
func (r *Registry[K]) Shrink() (freedBytes uint64, err error) {
	if r.released {
		return 0, fmt.Errorf("bindless: Shrink: %w", errReleased)
	}
	return r.shrink(false), nil
}

// shrink is Shrink, trimming every live page to exactly its layers in
// use when exact (Compact), else only those half empty or less. It
// returns the bytes given back.
func (r *Registry[K]) shrink(exact bool) uint64 {
	freed := r.dropAhead()
	changed := false
	for i, p := range r.pages {
		if p.tex == nil || p.highest() >= 0 {
			continue
		}
		freed += p.tex.Desc().Bytes()
		r.vacateTexture(i)
		r.pagesReleased++
		changed = true
	}
	for n := len(r.pages); n > 0 && r.pages[n-1].tex == nil; n-- {
		r.drop(n - 1)
		changed = true
	}
	for i, p := range r.pages {
		if p.tex == nil {
			continue
		}
		if n := uint32(p.highest() + 1); n <= p.capacity/2 || (exact && n < p.capacity) {
			if bytes, ok := r.trim(i, n); ok {
				freed += bytes
				changed = true
			}
		}
	}
	if changed {
		r.version++
	}
	r.bytesReleased += freed
	return freed
}

// highest returns the highest layer of p in use (registered or a
// default), or -1 when there is none.
func (p *page[K]) highest() int {
	for l := int(p.capacity) - 1; l >= 0; l-- {
		if s := p.state[l]; s == layerRegistered || s == layerBuiltin {
			return l
		}
	}
	return -1
}

// trim recreates live page gi with its first n layers, which hold every
// layer of it in use, and returns the bytes given back; ok is false, and
// nothing changed, when the device refused the texture or a copy.
func (r *Registry[K]) trim(gi int, n uint32) (uint64, bool) {
	p := r.pages[gi]
	b := p.b
	tex, err := r.dev.CreateTexture(r.desc(b.key, b.sized, gi, n))
	if err != nil {
		return 0, false
	}
	if err := r.copyInUse(p, tex, n); err != nil {
		tex.Release()
		return 0, false
	}
	freed := p.tex.Desc().Bytes() - tex.Desc().Bytes()
	for l := n; l < p.capacity; l++ {
		if p.state[l] == layerFree {
			b.free--
		}
		p.state[l] = layerUnused
		p.avail.unset(l)
	}
	if p.avail.n == 0 {
		b.avail.unset(uint32(gi))
	}
	r.changes.Replaced(nil, nil, p.tex, tex)
	p.tex.Release()
	p.tex, p.capacity = tex, n
	r.pagesTrimmed++
	return freed, true
}

// drop removes vacant page index, the last of the page list, from it and
// from its bucket (where it is the last too), and the bucket when it has
// no page left.
func (r *Registry[K]) drop(index int) {
	p := r.pages[index]
	b := p.b
	b.pages = slices.DeleteFunc(b.pages, func(i int) bool { return i == index })
	r.pages[index] = nil
	r.pages = r.pages[:index]
	if len(b.pages) == 0 {
		delete(r.buckets, bucketKey{b.key, b.sized})
	}
}
