package bindless

// Layout. A Registry holds buckets (one per Key) and pages (slots in
// global index order, each a 2D-array texture or vacant). A page is live
// (it has a texture) or vacant (Shrink released its texture; the slot
// keeps its index and its bucket, and holds no layer). A bucket lists its
// live pages in pages, in the order they were created or recreated, and
// its vacant ones in vacant. A layer of a live page is in one of four
// states; every layer of a vacant page is unused:
//
//	unused      never handed out: layers next..layers-1 of a bucket's
//	            last live page, and only there
//	free        handed out once and given back: on the bucket's free list
//	registered  owned by a source id: owner[layer] is the id, and
//	            bySource[id] is the layer's handle
//	builtin     one of the default textures
//
// Allocating a layer takes the free list's last entry, else the next
// unused layer, else recreates the bucket's lowest vacant page, else adds
// a page; Shrink releases the texture of every live page whose layers are
// all free or unused (their free entries leave the free list), and drops
// vacant pages from the end of the slot list. Version changes exactly
// when the set of page textures does: a page added, recreated or
// released. Lookups go through two direct indexes: bySource maps an id to
// its handle; pages[h.Page()].owner[h.Layer()] maps a handle back.
// Neither scans buckets.

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
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
	// texture bindings a shader declares. 0 means 8.
	MaxPages int
	// MaxPagesPerBucket caps each bucket's pages; 0 means MaxPages.
	MaxPagesPerBucket int
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

type bucket struct {
	key    Key
	layers uint32 // layers per page of this bucket
	pages  []int  // global indices of its live pages, in (re)creation order
	vacant []int  // global indices of its vacant pages
	next   uint32 // first unused layer of the last live page
	free   []Handle
}

type page[K comparable] struct {
	tex   device.Texture // nil when the page is vacant
	label string         // the texture's label, kept while vacant
	b     *bucket
	state []uint8 // per layer
	owner []K     // per layer; the zero K unless registered
}

// Registry is a bindless texture registry, keyed by the caller's source
// ids of type K. Create one with New. It is not safe for concurrent use.
type Registry[K comparable] struct {
	dev      device.Device
	opts     Options
	layers   uint32
	buckets  map[Key]*bucket
	pages    []*page[K] // by global index
	bySource map[K]Handle
	version  uint64
	builtin  [3]Handle // white, black, flat normal
	released bool
	// History for Stats: pages Shrink released and their bytes.
	pagesReleased, bytesReleased uint64
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
	case opts.LayersPerPage > maxLayers || opts.LayersPerPage > 1<<16:
		return nil, fmt.Errorf("bindless.New: %d layers per page, device allows %d, a handle 65536: %w", opts.LayersPerPage, maxLayers, ErrInvalidOptions)
	case opts.MaxPages < 0 || opts.MaxPages > 1<<16 || opts.MaxPagesPerBucket < 0:
		return nil, fmt.Errorf("bindless.New: %d pages, %d per bucket; a handle names at most 65536: %w", opts.MaxPages, opts.MaxPagesPerBucket, ErrInvalidOptions)
	}
	r := &Registry[K]{
		dev:      dev,
		opts:     opts,
		layers:   opts.LayersPerPage,
		buckets:  map[Key]*bucket{},
		bySource: map[K]Handle{},
	}
	key := Key{Format: device.RGBA8Unorm, Width: 1, Height: 1, Mips: 1, Samples: 1}
	for i, texel := range [][]byte{whiteTexel, blackTexel, normalTexel} {
		h, _, err := r.alloc(key)
		if err == nil {
			p := r.pages[h.Page()]
			p.state[h.Layer()] = layerBuiltin
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

// desc returns the descriptor of page index of key's bucket.
func (r *Registry[K]) desc(key Key, index int) device.TextureDesc {
	usage := device.TextureBinding | device.TextureCopySrc | device.TextureCopyDst
	if key.Samples > 1 {
		usage |= device.TextureRenderAttachment
	}
	return device.TextureDesc{
		Label:   fmt.Sprintf("%sbindless page %d (%v)", r.opts.Label, index, key),
		Format:  key.Format,
		Width:   key.Width,
		Height:  key.Height,
		Layers:  r.layersFor(key),
		Mips:    key.Mips,
		Samples: key.Samples,
		Usage:   usage,
	}
}

// validKey reports whether the device can make pages of key (normalized).
func (r *Registry[K]) validKey(key Key) error {
	if _, ok := r.buckets[key]; ok {
		return nil
	}
	if err := r.desc(key, 0).Validate(r.dev.Limits()); err != nil {
		return fmt.Errorf("key %v: %w: %w", key, ErrInvalidKey, err)
	}
	return nil
}

// taken says where alloc took a layer from, so unalloc can put it back.
type taken uint8

const (
	takenFree   taken = iota // the bucket's free list
	takenUnused              // the last page's next unused layer
	takenVacant              // a vacant page, recreated
	takenPage                // a new page
)

// alloc takes a layer of key's bucket: the last freed, else the next
// unused, else the first of its lowest vacant page, recreated, else the
// first of a new page. On error nothing changed.
func (r *Registry[K]) alloc(key Key) (h Handle, from taken, err error) {
	b := r.buckets[key]
	if b != nil {
		if n := len(b.free); n > 0 {
			h := b.free[n-1]
			b.free = b.free[:n-1]
			return h, takenFree, nil
		}
		if len(b.pages) > 0 && b.next < b.layers {
			h := makeHandle(b.pages[len(b.pages)-1], b.next)
			b.next++
			return h, takenUnused, nil
		}
		if len(b.vacant) > 0 {
			h, err = r.recreate(b)
			return h, takenVacant, err
		}
	}
	h, err = r.addPage(key, b)
	return h, takenPage, err
}

// recreate gives b's lowest vacant page a texture again, at its index, as
// b's last live page, and returns its layer 0.
func (r *Registry[K]) recreate(b *bucket) (Handle, error) {
	k := 0
	for i, gi := range b.vacant {
		if gi < b.vacant[k] {
			k = i
		}
	}
	index := b.vacant[k]
	tex, err := r.dev.CreateTexture(r.desc(b.key, index))
	if err != nil {
		return 0, fmt.Errorf("page %d for %v: %w: %w", index, b.key, ErrFull, err)
	}
	b.vacant = append(b.vacant[:k], b.vacant[k+1:]...)
	r.pages[index].tex = tex
	b.pages = append(b.pages, index)
	b.next = 1
	r.version++
	return makeHandle(index, 0), nil
}

// addPage creates a page for key's bucket b (nil when there is none yet)
// and returns its layer 0.
func (r *Registry[K]) addPage(key Key, b *bucket) (Handle, error) {
	switch {
	case len(r.pages) >= r.opts.MaxPages:
		return 0, fmt.Errorf("bucket %v needs page %d, MaxPages is %d: %w", key, len(r.pages), r.opts.MaxPages, ErrFull)
	case b != nil && len(b.pages)+len(b.vacant) >= r.opts.MaxPagesPerBucket:
		return 0, fmt.Errorf("bucket %v has %d pages, MaxPagesPerBucket is %d: %w", key, len(b.pages)+len(b.vacant), r.opts.MaxPagesPerBucket, ErrFull)
	}
	index := len(r.pages)
	desc := r.desc(key, index)
	tex, err := r.dev.CreateTexture(desc)
	if err != nil {
		return 0, fmt.Errorf("page for %v: %w: %w", key, ErrFull, err)
	}
	if b == nil {
		b = &bucket{key: key, layers: r.layersFor(key)}
		r.buckets[key] = b
	}
	r.pages = append(r.pages, &page[K]{
		tex:   tex,
		label: desc.Label,
		b:     b,
		state: make([]uint8, b.layers),
		owner: make([]K, b.layers),
	})
	b.pages = append(b.pages, index)
	b.next = 1
	r.version++
	return makeHandle(index, 0), nil
}

// unalloc undoes alloc of h, taken from where from says, when what
// followed failed: a freed layer goes back on the free list, an unused one
// back to unused, a page alloc just recreated is vacant again and one it
// added is removed again, each with the version it raised, so a failed
// call leaves no trace (Stats included).
func (r *Registry[K]) unalloc(h Handle, from taken) {
	p := r.pages[h.Page()]
	b := p.b
	switch from {
	case takenUnused:
		b.next--
		return
	case takenVacant:
		p.tex.Release()
		p.tex = nil
		b.pages = b.pages[:len(b.pages)-1]
		b.vacant = append(b.vacant, h.Page())
		b.next = b.layers
		r.version--
		return
	case takenPage:
		p.tex.Release()
		r.pages[h.Page()] = nil
		r.pages = r.pages[:h.Page()]
		b.pages = b.pages[:len(b.pages)-1]
		b.next = b.layers
		if len(b.pages)+len(b.vacant) == 0 {
			delete(r.buckets, b.key)
		}
		r.version--
		return
	}
	p.state[h.Layer()] = layerFree
	b.free = append(b.free, h)
}
