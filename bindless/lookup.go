package bindless

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Handle returns the handle of id, and whether id is registered. O(1), no
// allocation.
func (r *Registry[K]) Handle(id K) (Handle, bool) {
	h, ok := r.bySource[id]
	return h, ok
}

// Source returns the id registered at h, and whether there is one (the
// default textures have none). O(1), no allocation.
func (r *Registry[K]) Source(h Handle) (K, bool) {
	var zero K
	p := r.page(h)
	if p == nil || p.state[h.Layer()] != layerRegistered {
		return zero, false
	}
	return p.owner[h.Layer()], true
}

// Locate returns the page texture and layer of h, for a registered or a
// default texture, and ok false for any other handle. O(1).
func (r *Registry[K]) Locate(h Handle) (tex device.Texture, layer uint32, ok bool) {
	p := r.page(h)
	if p == nil {
		return nil, 0, false
	}
	if s := p.state[h.Layer()]; s != layerRegistered && s != layerBuiltin {
		return nil, 0, false
	}
	return p.tex, h.Layer(), true
}

// KeyOfHandle returns the key of h's bucket, and ok false when h names no
// page.
func (r *Registry[K]) KeyOfHandle(h Handle) (Key, bool) {
	p := r.page(h)
	if p == nil {
		return Key{}, false
	}
	return p.b.key, true
}

// page returns the page of h, or nil when h names no layer of a page.
func (r *Registry[K]) page(h Handle) *page[K] {
	if h.Page() >= len(r.pages) {
		return nil
	}
	p := r.pages[h.Page()]
	if h.Layer() >= uint32(len(p.state)) {
		return nil
	}
	return p
}

// Len returns the number of registered textures, defaults not counted.
func (r *Registry[K]) Len() int { return len(r.bySource) }

// Version returns the layout version: it changes exactly when Pages
// would return something else: a page added or recreated (a registration),
// pages released (Shrink). Rebuild bind groups when it differs from the
// one they were built at.
func (r *Registry[K]) Version() uint64 { return r.version }

// NumPages returns the number of pages over all buckets, vacant ones
// (Shrink) included: the binding slots in use, one past the highest
// index.
func (r *Registry[K]) NumPages() int { return len(r.pages) }

// Pages returns the page textures in global index order: bind page i at
// slot i. A vacant page (Shrink released its texture) is nil: no handle
// names it, so bind any page there; page 0 is never vacant. The slice is
// new (one allocation); the textures stay owned by the registry and valid
// until Shrink releases them or Release (Version says when).
func (r *Registry[K]) Pages() []device.Texture {
	out := make([]device.Texture, len(r.pages))
	for i, p := range r.pages {
		if p.tex != nil {
			out[i] = p.tex
		}
	}
	return out
}

// Stats is a snapshot of a registry's occupancy, and its history of
// releases.
type Stats struct {
	Buckets    int
	Pages      int // pages, vacant ones included: NumPages
	Vacant     int // pages whose texture Shrink released, not recreated yet
	Layers     int // layers of every page with a texture
	Registered int // layers owned by ids
	Builtin    int // default textures
	FreeLayers int // layers freed and waiting for reuse
	Version    uint64
	// PagesReleased counts the page textures Shrink released, and
	// BytesReleased their bytes (as Shrink returns them), over the
	// registry's life.
	PagesReleased uint64
	BytesReleased uint64
}

// Stats counts the registry's buckets, pages and layers. O(pages).
func (r *Registry[K]) Stats() Stats {
	s := Stats{Buckets: len(r.buckets), Pages: len(r.pages), Registered: len(r.bySource), Builtin: len(r.builtin), Version: r.version,
		PagesReleased: r.pagesReleased, BytesReleased: r.bytesReleased}
	for _, p := range r.pages {
		if p.tex == nil {
			s.Vacant++
			continue
		}
		s.Layers += len(p.state)
	}
	for _, b := range r.buckets {
		s.FreeLayers += len(b.free)
	}
	return s
}

// Release releases every page; the device frees them once the GPU has
// finished the work recorded on them. Idempotent and nil-safe; later
// calls return ErrReleased, lookups find nothing.
func (r *Registry[K]) Release() {
	if r == nil || r.released {
		return
	}
	for _, p := range r.pages {
		if p.tex != nil {
			p.tex.Release()
		}
	}
	r.pages = nil
	r.buckets = map[Key]*bucket{}
	r.bySource = map[K]Handle{}
	r.released = true
}

// check verifies the layout invariants (see registry.go); tests run it
// after every operation. O(layers).
func (r *Registry[K]) check() error {
	if r.released {
		return nil
	}
	seen := 0
	for key, b := range r.buckets {
		if b.key != key || len(b.pages)+len(b.vacant) == 0 {
			return fmt.Errorf("bucket %v: key %v, %d pages, %d vacant", key, b.key, len(b.pages), len(b.vacant))
		}
		for _, gi := range b.vacant {
			if gi >= len(r.pages) || r.pages[gi].b != b || r.pages[gi].tex != nil || !r.pages[gi].empty() {
				return fmt.Errorf("bucket %v: vacant page %d is not a vacant page of it", key, gi)
			}
			for l, st := range r.pages[gi].state {
				if st != layerUnused {
					return fmt.Errorf("vacant page %d layer %d: state %d", gi, l, st)
				}
			}
			seen++
		}
		if n := len(r.pages); n > 0 && r.pages[n-1].tex == nil {
			return fmt.Errorf("page %d, the last, is vacant", n-1)
		}
		if b.next > b.layers {
			return fmt.Errorf("bucket %v: next %d of %d", key, b.next, b.layers)
		}
		free := map[Handle]bool{}
		for _, h := range b.free {
			p := r.page(h)
			if p == nil || p.b != b || p.state[h.Layer()] != layerFree || free[h] {
				return fmt.Errorf("bucket %v: free handle %v is not a free layer of it, or listed twice", key, h)
			}
			free[h] = true
		}
		for i, gi := range b.pages {
			p := r.pages[gi]
			if p.tex == nil || p.b != b || uint32(len(p.state)) != b.layers {
				return fmt.Errorf("bucket %v: page %d belongs to %v, %d layers, texture %v", key, gi, p.b.key, len(p.state), p.tex)
			}
			if d := p.tex.Desc(); KeyOf(d) != key || d.Layers != b.layers {
				return fmt.Errorf("page %d: texture %+v for bucket %v", gi, d, key)
			}
			seen++
			last := i == len(b.pages)-1
			for l, st := range p.state {
				unused := last && uint32(l) >= b.next
				if (st == layerUnused) != unused {
					return fmt.Errorf("page %d layer %d: state %d, unused %v (next %d)", gi, l, st, unused, b.next)
				}
				if (st == layerFree) != free[makeHandle(gi, uint32(l))] {
					return fmt.Errorf("page %d layer %d: state %d, on the free list %v", gi, l, st, !free[makeHandle(gi, uint32(l))])
				}
				if st == layerRegistered {
					if h, ok := r.bySource[p.owner[l]]; !ok || h != makeHandle(gi, uint32(l)) {
						return fmt.Errorf("page %d layer %d: owner %v maps to %v", gi, l, p.owner[l], h)
					}
				}
			}
		}
	}
	if seen != len(r.pages) {
		return fmt.Errorf("%d pages, %d in buckets", len(r.pages), seen)
	}
	for id, h := range r.bySource {
		if got, ok := r.Source(h); !ok || got != id {
			return fmt.Errorf("id %v: handle %v names %v", id, h, got)
		}
	}
	return nil
}
