package main

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/internal/invariant"
)

// The textures workload registers each zone's textures in the bindless
// registry as the zone streams in and unregisters them as it leaves:
// textures of one size share pages (2D arrays of textureLayersPerPage
// layers), a freed layer is reused by the next registration of its size,
// and a page is added only when every layer of its size is taken.
const (
	textureSalt          = 0x74657874
	textureLoads         = 4 // textures registered a frame at most
	textureLayersPerPage = 16
	textureMaxPages      = 32
)

// textureSizes are the scene's texture sizes (RGBA8, one mip): one bucket
// of pages each.
var textureSizes = [...]uint32{32, 64, 128}

// demoTexture is one texture of the scene; its id in the registry is its
// name.
type demoTexture struct {
	name string
	size uint32
	tag  uint32
}

func (t *demoTexture) key() bindless.Key {
	return bindless.Key{Format: device.RGBA8Unorm, Width: t.size, Height: t.size, Mips: 1, Samples: 1}
}

func (t *demoTexture) bytes() int { return int(t.size * t.size * 4) }

type textureWorkload struct {
	dev     device.Device
	r       *bindless.Registry[string]
	zones   [demoZones]textureZone
	live    []*demoTexture
	nextTag uint32
	scratch []byte
	// Over the run.
	registered, unregistered uint64
	written                  uint64
	versions                 uint64 // Version changes seen: pages added
	version                  uint64
}

type textureZone struct {
	sizes  []uint32
	loaded []*demoTexture
}

func newTextureWorkload(dev device.Device) (*textureWorkload, error) {
	r, err := bindless.New[string](dev, bindless.Options{Label: "textures: ", LayersPerPage: textureLayersPerPage, MaxPages: textureMaxPages})
	if err != nil {
		return nil, err
	}
	return &textureWorkload{dev: dev, r: r, version: r.Version()}, nil
}

func (w *textureWorkload) release() { w.r.Release() }

func (w *textureWorkload) endFrame(uint64) error { return nil }

func (w *textureWorkload) frame(f *frameState) error {
	for z := range demoZones {
		zn := &w.zones[z]
		if zn.sizes == nil {
			r := zoneRand(f.seed, z, textureSalt)
			zn.sizes = make([]uint32, 3+r.IntN(6))
			for i := range zn.sizes {
				zn.sizes[i] = textureSizes[r.IntN(len(textureSizes))]
			}
		}
		if !f.inView[z] {
			for _, t := range zn.loaded {
				if err := w.r.Unregister(t.name); err != nil {
					return fmt.Errorf("unregister %s: %w", t.name, err)
				}
				w.unregistered++
				w.live = slices.DeleteFunc(w.live, func(x *demoTexture) bool { return x == t })
			}
			zn.loaded = zn.loaded[:0]
		}
	}
	budget := textureLoads
	for z := range demoZones {
		zn := &w.zones[z]
		for f.inView[z] && budget > 0 && len(zn.loaded) < len(zn.sizes) {
			i := len(zn.loaded)
			w.nextTag++
			t := &demoTexture{name: fmt.Sprintf("zone%d/tex%d", z, i), size: zn.sizes[i], tag: w.nextTag}
			if _, err := w.r.Register(t.name, t.key(), fill(&w.scratch, t.tag, t.bytes())); err != nil {
				return fmt.Errorf("register %s: %w", t.name, err)
			}
			w.registered++
			w.written += uint64(t.bytes())
			w.live = append(w.live, t)
			zn.loaded = append(zn.loaded, t)
			budget--
		}
	}
	if v := w.r.Version(); v != w.version {
		w.version = v
		w.versions++ // a renderer rebuilds its bind group here
	}
	return nil
}

func (w *textureWorkload) check(rng *rand.Rand, n int) (int, error) {
	return checkSome(w.live, rng, n, w.checkOne)
}

// checkOne reads a texture's layer back through its handle and compares
// it with the pixels registered.
func (w *textureWorkload) checkOne(t *demoTexture) error {
	h, ok := w.r.Handle(t.name)
	if !ok {
		return fmt.Errorf("%s: not registered", t.name)
	}
	if src, ok := w.r.Source(h); !ok || src != t.name {
		return fmt.Errorf("%s: handle %v names %q", t.name, h, src)
	}
	tex, layer, ok := w.r.Locate(h)
	if !ok {
		return fmt.Errorf("%s: handle %v locates nothing", t.name, h)
	}
	got := make([]byte, t.bytes())
	if err := w.dev.ReadTexture(tex, layer, 0, got); err != nil {
		return fmt.Errorf("%s: read back: %w", t.name, err)
	}
	return verify(got, t.tag, t.name+" texels")
}

// buffers returns one buffer per page, in binding order: a region per
// layer in use.
func (w *textureWorkload) buffers() []inspect.Buffer {
	pages := w.r.Pages()
	regions := make([][]inspect.Region, len(pages))
	add := func(h bindless.Handle, name string) {
		lb := pages[h.Page()].Desc().LayerBytes()
		regions[h.Page()] = append(regions[h.Page()], inspect.Region{Offset: uint64(h.Layer()) * lb, Size: lb,
			Kind: "texture", Name: name})
	}
	add(w.r.White(), "white (default)")
	add(w.r.Black(), "black (default)")
	add(w.r.FlatNormal(), "flat normal (default)")
	for _, t := range w.live {
		h, _ := w.r.Handle(t.name)
		add(h, t.name)
	}
	bufs := make([]inspect.Buffer, len(pages))
	for i, p := range pages {
		d := p.Desc()
		b, err := inspect.NewBuffer(fmt.Sprintf("textures/page %d: %dx%d %v", i, d.Width, d.Height, d.Format),
			"bindless page", uint64(d.Layers)*d.LayerBytes(), regions[i])
		if err != nil {
			invariant.Broken("demo", "texture layers overlap: %v", err) // the registry's invariant broke
		}
		b.ElemBytes, b.Layers = uint32(d.LayerBytes()), d.Layers
		b.Usage = d.Usage.String()
		bufs[i] = b
	}
	return bufs
}

// rows returns one row for the pages: registrations are allocations,
// pages added are growths; layers are all of a size within a bucket, so
// free layers do not fragment.
func (w *textureWorkload) rows() []bufferRow {
	row := bufferRow{name: "textures/pages", category: "texture", allocs: w.registered, written: w.written}
	for _, b := range w.buffers() {
		s := b.Stats
		row.live += s.Allocations
		row.occupied += s.OccupiedBytes
		row.reserved += s.ReservedBytes
		row.capacity += s.CapacityBytes
		row.free += s.FreeBytes
		row.largest += s.FreeBytes
	}
	row.growths = uint64(w.r.NumPages())
	return []bufferRow{row}
}

func (w *textureWorkload) notes() []string {
	st := w.r.Stats()
	return []string{
		fmt.Sprintf("textures: %d registered, %d unregistered; %d pages (binding slots 0-%d) in %d buckets, %d layers:",
			w.registered, w.unregistered, st.Pages, st.Pages-1, st.Buckets, st.Layers),
		fmt.Sprintf("  %d registered, %d defaults, %d free for reuse; layout version %d (%d bind-group rebuilds)",
			st.Registered, st.Builtin, st.FreeLayers, st.Version, w.versions),
	}
}
