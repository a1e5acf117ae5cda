package bindless

import (
	"fmt"
	"slices"

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

// KeyOfHandle returns the key of h's bucket (for a sized texture, its
// class: Region gives the image's size), and ok false when h names no
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
// would return something else: a page added, recreated or grown (a
// registration), pages released or trimmed (Shrink, Compact), and when
// Compact moved a texture to a new handle. Rebuild bind groups (and,
// after a Compact, handle tables) when it differs from the one they were
// built at.
func (r *Registry[K]) Version() uint64 { return r.version }

// NumPages returns the number of pages over all buckets, vacant ones
// (Shrink) included: the binding slots in use, one past the highest
// index.
func (r *Registry[K]) NumPages() int { return len(r.pages) }

// Pages returns the page textures in global index order: bind page i at
// slot i. A vacant page (Shrink released its texture) is nil: no handle
// names it, so bind any page there; page 0 is never vacant. The slice is
// new (one allocation); the textures stay owned by the registry and valid
// until Shrink releases or trims them, a registration grows them, or
// Release (Version says when). A page texture has the layers its page
// holds now: fewer than LayersPerPage once trimmed.
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
	// PagesReleased counts the page textures Shrink (or Compact)
	// released, PagesTrimmed the pages it recreated with fewer layers,
	// and BytesReleased the bytes of both (as they return them), over the
	// registry's life. PagesGrown counts trimmed pages a registration
	// recreated with more layers, TexturesMoved the textures Compact
	// moved to another layer (each a new handle).
	PagesReleased uint64
	PagesTrimmed  uint64
	BytesReleased uint64
	PagesGrown    uint64
	TexturesMoved uint64
	// BytesHeld is what the live pages' textures hold, every layer and
	// mip (as a budget charges them); BytesUsed what the textures in use
	// (defaults included) would hold as textures of their own: an exact
	// texture its layer, a sized one its image with its mips. Their
	// ratio is the waste the package doc bounds.
	BytesHeld uint64
	BytesUsed uint64
	// PreparedBytes is what the pages being made ahead of need hold
	// (Options.PageAhead), beside BytesHeld, until a registration takes
	// them; 0 where the device makes them at the take.
	PreparedBytes uint64
}

// Stats counts the registry's buckets, pages and layers. O(pages).
func (r *Registry[K]) Stats() Stats {
	s := Stats{Buckets: len(r.buckets), Pages: len(r.pages), Registered: len(r.bySource), Builtin: len(r.builtin), Version: r.version,
		PagesReleased: r.pagesReleased, PagesTrimmed: r.pagesTrimmed, BytesReleased: r.bytesReleased, PagesGrown: r.pagesGrown,
		TexturesMoved: r.texturesMoved, BytesUsed: r.usedBytes}
	for _, p := range r.pages {
		if p.tex == nil {
			s.Vacant++
			continue
		}
		s.Layers += int(p.capacity)
		s.BytesHeld += p.tex.Desc().Bytes()
	}
	for _, b := range r.buckets {
		s.FreeLayers += b.free
		s.PreparedBytes += b.aheadBytes
	}
	return s
}

// Release releases every page; the device frees them once the GPU has
// finished the work recorded on them. Idempotent and nil-safe; later
// calls return device.ErrReleased, lookups find nothing.
func (r *Registry[K]) Release() {
	if r == nil || r.released {
		return
	}
	r.dropAhead()
	for _, p := range r.pages {
		if p.tex != nil {
			p.tex.Release()
		}
	}
	r.pages = nil
	r.buckets = map[bucketKey]*bucket{}
	r.bySource = map[K]Handle{}
	r.released = true
	r.closed.Store(true)
}

// check verifies the layout invariants (see registry.go); tests run it
// after every operation. O(layers).
func (r *Registry[K]) check() error {
	if r.released {
		return nil
	}
	if n := len(r.pages); n > 0 && (r.pages[n-1].tex == nil || r.pages[0].tex == nil) {
		return fmt.Errorf("page 0 or %d, the last, is vacant", n-1)
	}
	seen := 0
	var used uint64
	for bk, b := range r.buckets {
		key := bk.key
		if b.key != key || b.sized != bk.sized || len(b.pages) == 0 || !slices.IsSorted(b.pages) {
			return fmt.Errorf("bucket %v (sized %v): key %v, sized %v, pages %v", key, bk.sized, b.key, b.sized, b.pages)
		}
		free, avail := 0, 0
		for _, gi := range b.pages {
			if gi >= len(r.pages) || r.pages[gi].b != b {
				return fmt.Errorf("bucket %v: page %d is not its", key, gi)
			}
			seen++
			p := r.pages[gi]
			if uint32(len(p.state)) != b.layers || uint32(len(p.owner)) != b.layers || (p.extent != nil) != b.sized ||
				(b.sized && uint32(len(p.extent)) != b.layers) {
				return fmt.Errorf("page %d: %d states, %d owners, %d extents, bucket of %d layers (sized %v)",
					gi, len(p.state), len(p.owner), len(p.extent), b.layers, b.sized)
			}
			if p.tex == nil {
				if p.capacity != 0 {
					return fmt.Errorf("vacant page %d: capacity %d", gi, p.capacity)
				}
			} else if d := p.tex.Desc(); KeyOf(d) != key || d.Layers != p.capacity || p.capacity == 0 || p.capacity > b.layers {
				return fmt.Errorf("page %d: texture %+v, capacity %d, for bucket %v of %d layers", gi, d, p.capacity, key, b.layers)
			}
			n := 0
			for l, st := range p.state {
				isAvail := uint32(l) < p.capacity && (st == layerUnused || st == layerFree)
				if uint32(l) >= p.capacity && st != layerUnused {
					return fmt.Errorf("page %d layer %d, at or past capacity %d: state %d", gi, l, p.capacity, st)
				}
				if p.avail.has(uint32(l)) != isAvail {
					return fmt.Errorf("page %d layer %d: state %d, available %v", gi, l, st, !isAvail)
				}
				if isAvail {
					n++
				}
				if st == layerFree {
					free++
				}
				if st == layerRegistered {
					if h, ok := r.bySource[p.owner[l]]; !ok || h != makeHandle(gi, uint32(l)) {
						return fmt.Errorf("page %d layer %d: owner %v maps to %v", gi, l, p.owner[l], h)
					}
				}
				if st == layerRegistered || st == layerBuiltin {
					used += p.imageBytes(uint32(l))
				}
				if err := r.checkExtent(p, uint32(l)); err != nil {
					return fmt.Errorf("page %d layer %d: %w", gi, l, err)
				}
			}
			if p.avail.n != n || b.avail.has(uint32(gi)) != (n > 0) {
				return fmt.Errorf("page %d: %d available layers, counted %d, in the bucket's set %v", gi, n, p.avail.n, b.avail.has(uint32(gi)))
			}
			if n > 0 {
				avail++
			}
		}
		if free != b.free || avail != b.avail.n {
			return fmt.Errorf("bucket %v: %d free layers, counted %d; %d pages with available layers, counted %d", key, free, b.free, avail, b.avail.n)
		}
		if (b.ahead == nil && b.aheadBytes != 0) || (b.ahead != nil && (b.sized || r.opts.PageAhead == 0)) {
			return fmt.Errorf("bucket %v (sized %v): a page made ahead %v of %d bytes, PageAhead %v", key, b.sized, b.ahead != nil, b.aheadBytes, r.opts.PageAhead)
		}
	}
	if seen != len(r.pages) {
		return fmt.Errorf("%d pages, %d in buckets", len(r.pages), seen)
	}
	if used != r.usedBytes {
		return fmt.Errorf("textures in use hold %d bytes as their own textures, counted %d", used, r.usedBytes)
	}
	for id, h := range r.bySource {
		if got, ok := r.Source(h); !ok || got != id {
			return fmt.Errorf("id %v: handle %v names %v", id, h, got)
		}
	}
	return nil
}
