package bindless

// Layout. A Registry holds buckets (one per Key) and pages (slots in
// global index order, each a 2D-array texture or vacant). A page is live
// (it has a texture of capacity layers, 1 to its bucket's layers) or
// vacant (Shrink released its texture; the slot keeps its index and its
// bucket, and holds no layer). A bucket lists all its pages, live and
// vacant, in pages, in ascending index order. A layer below a live page's
// capacity is in one of four states; every layer at or above the
// capacity, and every layer of a vacant page, is unused:
//
//	unused      not handed out since the page's texture was made
//	free        handed out and given back
//	registered  owned by a source id: owner[layer] is the id, and
//	            bySource[id] is the layer's handle
//	builtin     one of the default textures
//
// Unused and free layers below the capacity are available: they are the
// members of the page's avail bitset, and a page with any is a member of
// its bucket's avail bitset (by global index). Allocating a layer takes
// the lowest available one (lowest page, then lowest layer: two
// trailing-zero scans), else grows or recreates the bucket's lowest page
// below full capacity (a trimmed page doubles, copying its layers in use;
// a vacant one is recreated at full capacity), else adds a page: doubling
// against trimming only at half empty keeps a Shrink right after a growth
// from trimming the page again. Shrink releases the texture of every live
// page with no layer in use and drops vacant pages from the end of the
// slot list, then trims every live page
// whose layers in use all lie in its lower half to exactly its layers
// 0..highest in use. Compact moves registered layers of each bucket
// from the top (highest page, then layer) into its lowest available
// layers (as alloc takes them: each move takes a layer, copies into it,
// then frees the old one, or gives the layer back when the copy fails),
// then shrinks as Shrink does, trimming every live page to exactly its
// layers 0..highest in use. Version changes exactly when the set of page
// textures does (a page added, recreated, grown, trimmed or released) or
// Compact moved a layer.
// A bucket is exact (Register's textures fill their layers) or sized
// (RegisterSized's images, each in the top-left of a layer of its size
// class, its size in the page's extent); buckets are filed by key and
// kind, so an exact and a sized bucket of one key are two. A sized
// bucket's pages start at one layer and grow as trimmed pages do.
// Lookups go through two direct indexes: bySource maps an id to its
// handle; pages[h.Page()].owner[h.Layer()] maps a handle back. Neither
// scans buckets.

import (
	"fmt"
	"sync/atomic"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/staging"
)

// Handle names a registered texture: its page's global index in the high
// 16 bits, its layer in the low 16.
type Handle uint32

// Page returns the global index of the handle's page.
func (h Handle) Page() int { return int(h >> 16) }

// Layer returns the handle's layer within its page.
func (h Handle) Layer() uint32 { return uint32(h & 0xffff) }

// String returns "page:layer".
func (h Handle) String() string { return fmt.Sprintf("%d:%d", h.Page(), h.Layer()) }

func makeHandle(page int, layer uint32) Handle { return Handle(uint32(page)<<16 | layer) }

// Key is what textures of one bucket share. The zero Mips and Samples
// mean 1.
type Key struct {
	Format        device.TextureFormat
	Width, Height uint32
	Mips          uint32
	Samples       uint32
}

// Normalized returns k with zero Mips and Samples set to 1: the key the
// registry files k under.
func (k Key) Normalized() Key {
	k.Mips = max(k.Mips, 1)
	k.Samples = max(k.Samples, 1)
	return k
}

// KeyOf returns the key of textures shaped like desc.
func KeyOf(desc device.TextureDesc) Key {
	desc = desc.Normalize()
	return Key{Format: desc.Format, Width: desc.Width, Height: desc.Height, Mips: desc.Mips, Samples: desc.Samples}
}

// String returns the key as "RGBA8Unorm 64x64", followed by ", 7 mips"
// or ", 4 samples" where there is more than one.
func (k Key) String() string {
	k = k.Normalized()
	s := fmt.Sprintf("%v %dx%d", k.Format, k.Width, k.Height)
	if k.Mips > 1 {
		s += fmt.Sprintf(", %d mips", k.Mips)
	}
	if k.Samples > 1 {
		s += fmt.Sprintf(", %d samples", k.Samples)
	}
	return s
}

// Options configure a Registry. The zero value is 8 pages at most, of the
// device's maximum layer count each.
type Options struct {
	// Label prefixes the pages' labels.
	Label string
	// LayersPerPage is the layer count of a page; 0 means the device's
	// MaxArrayLayers, which is also the most it may be.
	LayersPerPage uint32
	// MaxPages caps the page count over all buckets: the number of
	// texture bindings a shader declares. 0 means 8. It leaves room for
	// the three built-in textures and one texture more (New checks): one
	// page will do with 4 layers a page or more.
	MaxPages int
	// MaxPagesPerBucket caps each bucket's pages; 0 means MaxPages. It
	// holds the built-in textures' pages (New checks).
	MaxPagesPerBucket int
	// Belt, if set, carries the texels of Register, RegisterSized and
	// Update: each image is written into the belt's mapped staging chunks
	// and copied into its layer on the GPU (staging.Belt.UploadTexture),
	// instead of being a queue write. The belt must be on the registry's
	// device; the caller ends every frame on it and releases it after the
	// registry.
	Belt *staging.Belt
	// PageAhead, when above 0, makes a bucket's next page ahead of need,
	// off the caller's goroutine on a device that can, once the layers
	// its pages have available fall below this fraction of a page's
	// layers (see ahead.go). Below 1; 0.25 leaves the creation a quarter
	// of a page of registrations to finish in. Off (0) by default: the
	// page holds its memory from then on.
	PageAhead float64
}

// roomForBuiltins checks that o (defaults filled in, LayersPerPage at
// least 1) leaves room for the three built-in textures, which take the
// first pages of their bucket, and for one texture more: a layer left on
// their last page, or a page beyond theirs.
func (o Options) roomForBuiltins() error {
	pages := int((3 + o.LayersPerPage - 1) / o.LayersPerPage)
	switch {
	case o.MaxPages < pages || o.MaxPagesPerBucket < pages:
		return fmt.Errorf("the 3 built-in textures take %d pages of %d layers; MaxPages is %d, MaxPagesPerBucket %d",
			pages, o.LayersPerPage, o.MaxPages, o.MaxPagesPerBucket)
	case o.MaxPages == pages && uint32(pages)*o.LayersPerPage == 3:
		return fmt.Errorf("the 3 built-in textures fill all %d pages of %d layers (MaxPages): no room for another texture",
			pages, o.LayersPerPage)
	}
	return nil
}

// Default texel values of the built-in textures, RGBA8Unorm.
var (
	whiteTexel  = []byte{255, 255, 255, 255}
	blackTexel  = []byte{0, 0, 0, 255}
	normalTexel = []byte{128, 128, 255, 255}
)

// Layer states; see the layout comment.
const (
	layerUnused uint8 = iota
	layerFree
	layerRegistered
	layerBuiltin
)

// bucketKey files a bucket: its key, and whether it holds sized
// textures (RegisterSized), which never share a bucket with exact ones.
type bucketKey struct {
	key   Key
	sized bool
}

type bucket struct {
	key    Key
	sized  bool   // its textures are images placed in a size class (sized.go)
	layers uint32 // layers of a page at full capacity
	pages  []int  // global indices of its pages, live and vacant, ascending
	avail  bitset // global indices of its live pages with an available layer
	free   int    // its free layers, for Stats
	// ahead is its next page being made ahead of need (ahead.go), nil
	// when none is; aheadBytes what it holds until taken (0 when it is
	// made at the take).
	ahead      *device.PendingTexture
	aheadBytes uint64
}

type page[K comparable] struct {
	tex      device.Texture // nil when the page is vacant
	label    string         // the texture's label, kept while vacant
	b        *bucket
	capacity uint32  // the texture's layers; 0 when vacant
	avail    bitset  // its available (unused or free) layers below capacity
	state    []uint8 // per layer, b.layers of them
	owner    []K     // per layer; the zero K unless registered
	// extent is, per layer of a sized bucket's page, the image size of
	// the registered texture there, and zero elsewhere; nil in an exact
	// bucket's page.
	extent []extent
}

// Registry is a bindless texture registry, keyed by the caller's source
// ids of type K. Create one with New. It is not safe for concurrent use.
type Registry[K comparable] struct {
	// changes is what Changes reports next (changes.go).
	changes  memory.ChangeLog
	dev      device.Device
	opts     Options
	layers   uint32
	buckets  map[bucketKey]*bucket
	pages    []*page[K] // by global index
	bySource map[K]Handle
	version  uint64
	builtin  [3]Handle // white, black, flat normal
	released bool
	// History for Stats: pages Shrink released, pages it trimmed, the
	// bytes of both, pages grown back, and textures Compact moved.
	pagesReleased, pagesTrimmed, bytesReleased, pagesGrown, texturesMoved uint64
	// usedBytes is the bytes of the textures in use, each as a texture of
	// its own (page.imageBytes), for Stats.
	usedBytes uint64
	// loaders are the Loaders made (loader.go), closed is released for
	// them to read, and loadOps the scratch their queues swap with.
	loaders []*Loader[K]
	closed  atomic.Bool
	loadOps []loadOp[K]
}

// New creates a registry on dev with its three default textures. It fails
// with ErrInvalidOptions (a nil dev too), or the device's error creating
// the first page.
func New[K comparable](dev device.Device, opts Options) (*Registry[K], error) {
	if dev == nil {
		return nil, fmt.Errorf("bindless.New: nil device: %w", ErrInvalidOptions)
	}
	maxLayers := dev.Limits().MaxArrayLayers
	if opts.LayersPerPage == 0 {
		opts.LayersPerPage = maxLayers
	}
	if opts.MaxPages == 0 {
		opts.MaxPages = 8
	}
	if opts.MaxPagesPerBucket == 0 {
		opts.MaxPagesPerBucket = opts.MaxPages
	}
	switch {
	case opts.LayersPerPage == 0 || opts.LayersPerPage > maxLayers || opts.LayersPerPage > 1<<16:
		return nil, fmt.Errorf("bindless.New: %d layers per page, device allows %d, a handle 65536: %w", opts.LayersPerPage, maxLayers, ErrInvalidOptions)
	case opts.MaxPages < 0 || opts.MaxPages > 1<<16 || opts.MaxPagesPerBucket < 0:
		return nil, fmt.Errorf("bindless.New: %d pages, %d per bucket; a handle names at most 65536: %w", opts.MaxPages, opts.MaxPagesPerBucket, ErrInvalidOptions)
	case !(opts.PageAhead >= 0 && opts.PageAhead < 1):
		return nil, fmt.Errorf("bindless.New: PageAhead %v (want 0 to below 1): %w", opts.PageAhead, ErrInvalidOptions)
	}
	if err := opts.roomForBuiltins(); err != nil {
		return nil, fmt.Errorf("bindless.New: %w: %w", ErrInvalidOptions, err)
	}
	r := &Registry[K]{
		dev:      dev,
		opts:     opts,
		layers:   opts.LayersPerPage,
		buckets:  map[bucketKey]*bucket{},
		bySource: map[K]Handle{},
	}
	key := Key{Format: device.RGBA8Unorm, Width: 1, Height: 1, Mips: 1, Samples: 1}
	for i, texel := range [][]byte{whiteTexel, blackTexel, normalTexel} {
		s, err := r.alloc(key, false)
		h := s.h
		if err == nil {
			r.commit(s)
			p := r.pages[h.Page()]
			p.state[h.Layer()] = layerBuiltin
			r.usedBytes += p.imageBytes(h.Layer())
			err = dev.WriteTexture(p.tex, h.Layer(), 0, texel)
		}
		if err != nil {
			r.Release()
			return nil, fmt.Errorf("bindless.New: default textures: %w", err)
		}
		r.builtin[i] = h
	}
	return r, nil
}

// White returns the handle of the 1x1 white texture: 0.
func (r *Registry[K]) White() Handle { return r.builtin[0] }

// Black returns the handle of the 1x1 opaque black texture.
func (r *Registry[K]) Black() Handle { return r.builtin[1] }

// FlatNormal returns the handle of the 1x1 normal map texel (128, 128,
// 255, 255): the unperturbed tangent-space normal.
func (r *Registry[K]) FlatNormal() Handle { return r.builtin[2] }

// layersFor returns the layers per page of a bucket of key.
func (r *Registry[K]) layersFor(key Key) uint32 {
	if key.Samples > 1 {
		return 1
	}
	return r.layers
}

// desc returns the descriptor of page index of key's bucket (of sized
// textures when sized), with layers layers.
func (r *Registry[K]) desc(key Key, sized bool, index int, layers uint32) device.TextureDesc {
	usage := device.TextureBinding | device.TextureCopySrc | device.TextureCopyDst
	if key.Samples > 1 {
		usage |= device.TextureRenderAttachment
	}
	class := ""
	if sized {
		class = ", sized"
	}
	return device.TextureDesc{
		Label:   fmt.Sprintf("%sbindless page %d (%v%s)", r.opts.Label, index, key, class),
		Format:  key.Format,
		Width:   key.Width,
		Height:  key.Height,
		Layers:  layers,
		Mips:    key.Mips,
		Samples: key.Samples,
		Usage:   usage,
	}
}

// validKey reports whether the device can make pages of key (normalized).
func (r *Registry[K]) validKey(key Key) error {
	if _, ok := r.buckets[bucketKey{key, false}]; ok {
		return nil
	}
	if err := r.desc(key, false, 0, r.layersFor(key)).Validate(r.dev.Limits()); err != nil {
		return fmt.Errorf("key %v: %w: %w", key, ErrInvalidKey, err)
	}
	return nil
}

// taken says where alloc took a layer from, so unalloc can put it back.
type taken uint8

const (
	takenLayer  taken = iota // an available layer of a live page
	takenGrow                // a trimmed page, grown
	takenVacant              // a vacant page, recreated
	takenPage                // a new page
)

// slot is a layer alloc took: its handle, where from, the layer's state
// before, and for a grown page its texture and capacity before (released
// by commit, put back by unalloc).
type slot struct {
	h      Handle
	from   taken
	prev   uint8
	old    device.Texture
	oldCap uint32
}

// alloc takes a layer of key's bucket (of sized textures when sized):
// the lowest available one (lowest page, then lowest layer), else the
// first new layer of the bucket's lowest page below full capacity, grown
// (a trimmed page, or a sized bucket's page that started small) or
// recreated (a vacant one), else the first of a new page. On error
// nothing changed. The caller fills the layer, then calls commit, or
// unalloc when the fill failed.
func (r *Registry[K]) alloc(key Key, sized bool) (slot, error) {
	b := r.buckets[bucketKey{key, sized}]
	if b == nil {
		return r.addPage(key, sized, nil)
	}
	if gi, ok := b.avail.first(); ok {
		return r.take(int(gi), takenLayer), nil
	}
	for _, gi := range b.pages {
		p := r.pages[gi]
		switch {
		case p.tex == nil:
			return r.recreate(gi)
		case p.capacity < b.layers:
			return r.grow(gi)
		}
	}
	return r.addPage(key, sized, b)
}

// take takes the lowest available layer of live page gi, which has one.
func (r *Registry[K]) take(gi int, from taken) slot {
	p := r.pages[gi]
	l, _ := p.avail.first()
	p.avail.unset(l)
	if p.avail.n == 0 {
		p.b.avail.unset(uint32(gi))
	}
	s := slot{h: makeHandle(gi, l), from: from, prev: p.state[l]}
	if s.prev == layerFree {
		p.b.free--
	}
	p.state[l] = layerUnused
	return s
}

// open makes layers from..to-1 of live page gi available (they are
// unused).
func (r *Registry[K]) open(gi int, from, to uint32) {
	p := r.pages[gi]
	for l := from; l < to; l++ {
		p.avail.set(l)
	}
	if p.avail.n > 0 {
		p.b.avail.set(uint32(gi))
	}
}

// copyInUse copies the layers in use (registered or default) of page p
// below n from its texture to dst.
func (r *Registry[K]) copyInUse(p *page[K], dst device.Texture, n uint32) error {
	for l := range n {
		if s := p.state[l]; s == layerRegistered || s == layerBuiltin {
			if err := r.dev.CopyTextureLayer(p.tex, l, dst, l); err != nil {
				return fmt.Errorf("copy layer %d: %w", l, err)
			}
		}
	}
	return nil
}

// grow recreates live page gi, below full capacity (trimmed, or a sized
// bucket's page that started small), every layer in use, with twice its layers (at most full capacity), its layers in
// use copied, and takes its first new layer. The old texture stays alive
// until commit releases it, or unalloc puts it back.
func (r *Registry[K]) grow(gi int) (slot, error) {
	p := r.pages[gi]
	b := p.b
	n := min(b.layers, 2*p.capacity)
	tex, err := r.dev.CreateTexture(r.desc(b.key, b.sized, gi, n))
	if err != nil {
		return slot{}, fmt.Errorf("page %d for %v, grown to %d layers: %w: %w", gi, b.key, n, ErrFull, err)
	}
	if err := r.copyInUse(p, tex, p.capacity); err != nil {
		tex.Release()
		return slot{}, fmt.Errorf("page %d for %v, grown to %d layers: %w", gi, b.key, n, err)
	}
	old, oldCap := p.tex, p.capacity
	p.tex, p.capacity = tex, n
	r.open(gi, oldCap, n)
	r.version++
	r.pagesGrown++
	s := r.take(gi, takenGrow)
	s.old, s.oldCap = old, oldCap
	return s, nil
}

// recreate gives vacant page gi a texture again, at full capacity (a
// sized bucket's at one layer, as addPage starts it), and takes its
// layer 0.
func (r *Registry[K]) recreate(gi int) (slot, error) {
	p := r.pages[gi]
	b := p.b
	n := b.layers
	if b.sized {
		n = 1
	}
	tex, err := r.createPage(b, r.desc(b.key, b.sized, gi, n))
	if err != nil {
		return slot{}, fmt.Errorf("page %d for %v: %w: %w", gi, b.key, ErrFull, err)
	}
	p.tex, p.capacity = tex, n
	r.open(gi, 0, n)
	r.version++
	return r.take(gi, takenVacant), nil
}

// addPage creates a page for key's bucket b (nil when there is none yet;
// of sized textures when sized) and takes its layer 0. An exact bucket's
// page starts at full capacity, a sized bucket's at one layer, grown by
// doubling as it fills (sized.go says why).
func (r *Registry[K]) addPage(key Key, sized bool, b *bucket) (slot, error) {
	switch {
	case len(r.pages) >= r.opts.MaxPages:
		return slot{}, fmt.Errorf("bucket %v needs page %d, MaxPages is %d: %w", key, len(r.pages), r.opts.MaxPages, ErrFull)
	case b != nil && len(b.pages) >= r.opts.MaxPagesPerBucket:
		return slot{}, fmt.Errorf("bucket %v has %d pages, MaxPagesPerBucket is %d: %w", key, len(b.pages), r.opts.MaxPagesPerBucket, ErrFull)
	}
	index := len(r.pages)
	layers := r.layersFor(key)
	capacity := layers
	if sized {
		capacity = 1
	}
	desc := r.desc(key, sized, index, capacity)
	tex, err := r.createPage(b, desc)
	if err != nil {
		return slot{}, fmt.Errorf("page for %v: %w: %w", key, ErrFull, err)
	}
	if b == nil {
		b = &bucket{key: key, sized: sized, layers: layers}
		r.buckets[bucketKey{key, sized}] = b
	}
	p := &page[K]{
		tex:      tex,
		label:    desc.Label,
		b:        b,
		capacity: capacity,
		avail:    bitset{w: make([]uint64, (layers+63)/64)},
		state:    make([]uint8, layers),
		owner:    make([]K, layers),
	}
	if sized {
		p.extent = make([]extent, layers)
	}
	r.pages = append(r.pages, p)
	b.pages = append(b.pages, index)
	r.open(index, 0, capacity)
	r.version++
	return r.take(index, takenPage), nil
}

// commit finishes an alloc whose layer was filled: a grown page's old
// texture is released.
func (r *Registry[K]) commit(s slot) {
	if s.old != nil {
		r.changes.Replaced(nil, nil, s.old, r.pages[s.h.Page()].tex)
		s.old.Release()
	}
}

// unalloc undoes alloc of s when what followed failed: the layer is
// available again in the state it had, a grown page has its old texture
// and capacity back, a page alloc recreated is vacant again and one it
// added is removed again, each with the version it raised, so a failed
// call leaves no trace (Stats included).
func (r *Registry[K]) unalloc(s slot) {
	gi, l := s.h.Page(), s.h.Layer()
	p := r.pages[gi]
	b := p.b
	p.state[l] = s.prev
	if s.prev == layerFree {
		b.free++
	}
	switch s.from {
	case takenLayer:
		r.open(gi, l, l+1)
	case takenGrow:
		p.tex.Release()
		for k := s.oldCap; k < p.capacity; k++ {
			p.avail.unset(k)
		}
		p.tex, p.capacity = s.old, s.oldCap
		b.avail.unset(uint32(gi)) // every layer of a grown page was in use
		r.version--
		r.pagesGrown--
	case takenVacant:
		r.vacateTexture(gi)
		r.version--
	case takenPage:
		p.tex.Release()
		b.avail.unset(uint32(gi))
		r.pages[gi] = nil
		r.pages = r.pages[:gi]
		b.pages = b.pages[:len(b.pages)-1]
		if len(b.pages) == 0 {
			r.takeAhead(b).Release()
			delete(r.buckets, bucketKey{b.key, b.sized})
		}
		r.version--
	}
}

// vacateTexture releases the texture of live page gi, which has no layer
// in use, and leaves it vacant: every layer unused, none available.
func (r *Registry[K]) vacateTexture(gi int) {
	p := r.pages[gi]
	for l := range p.capacity {
		if p.state[l] == layerFree {
			p.b.free--
		}
	}
	clear(p.state) // layerUnused
	p.avail.reset()
	p.b.avail.unset(uint32(gi))
	r.changes.Released(nil, p.tex)
	p.tex.Release()
	p.tex, p.capacity = nil, 0
}
