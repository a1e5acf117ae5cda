package scene

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
)

// The textures workload registers each zone's textures in the bindless
// registry as the zone streams in and unregisters them as it leaves:
// textures of one size share pages (2D arrays of textureLayersPerPage
// layers), a freed layer is reused by the next registration of its size,
// and a page is added only when every layer of its size is taken.
const (
	textureSalt          = 0x74657874
	textureLoads         = 4  // textures registered a frame at most
	textureLayersPerPage = 16 // at scale 1; times the scale, up to the device's layers
	textureMaxPages      = 32
)

// textureSizes are the scene's texture sizes (RGBA8, one mip): one bucket
// of pages each.
var textureSizes = [...]uint32{32, 64, 128}

// demoTexture is one texture of the scene; its id in the registry is its
// name. h is its handle as the demo's materials hold it: set at the
// registration and rewritten when Compact moves the texture, and checked
// against the registry's by every read-back.
type demoTexture struct {
	zone int
	name string
	size uint32
	tag  uint32
	h    bindless.Handle
}

func (t *demoTexture) key() bindless.Key {
	return bindless.Key{Format: device.RGBA8Unorm, Width: t.size, Height: t.size, Mips: 1, Samples: 1}
}

func (t *demoTexture) bytes() int { return int(t.size * t.size * 4) }

type textureWorkload struct {
	dev     device.Device
	r       *bindless.Registry[string]
	scale   int
	zones   [demoZones]textureZone
	live    []*demoTexture
	nextTag uint32
	scratch []byte
	// Over the run.
	registered, unregistered uint64
	bytes                    uint64 // texels registered
	versions                 uint64 // Version changes seen: pages added
	version                  uint64
	changes                  []memory.Change // the registry's Changes, reused
	onBelt                   beltShare       // texel uploads through the meshes' belt
}

type textureZone struct {
	sizes  []uint32
	loaded []*demoTexture
}

func newTextureWorkload(dev device.Device, scale int, o *workloadOptions) (*textureWorkload, error) {
	dev = o.device("textures")
	layers := min(uint32(scale)*textureLayersPerPage, dev.Limits().MaxArrayLayers)
	r, err := bindless.New[string](dev, bindless.Options{Label: "textures/", LayersPerPage: layers, MaxPages: textureMaxPages * (1 + scale/32),
		Belt: o.sharedBelt, PageAhead: demoGrowAhead})
	if err != nil {
		return nil, err
	}
	o.reclaim("textures", r.Shrink)
	return &textureWorkload{dev: dev, r: r, scale: scale, version: r.Version(), onBelt: beltShare{belt: o.sharedBelt}}, nil
}

func (w *textureWorkload) release() { w.r.Release() }

func (w *textureWorkload) endFrame(*frameState, uint64) error { return nil }

func (w *textureWorkload) memory() memory.Holder { return w.r }

func (w *textureWorkload) written() uint64 { return w.bytes }

func (w *textureWorkload) frame(f *frameState) error {
	for z := range demoZones {
		zn := &w.zones[z]
		if zn.sizes == nil {
			r := zoneRand(f.seed, z, textureSalt)
			zn.sizes = make([]uint32, w.scale*(3+r.IntN(6)))
			for i := range zn.sizes {
				zn.sizes[i] = textureSizes[r.IntN(len(textureSizes))]
			}
		}
		if !f.inView[z] {
			n, err := unloadAll(f, mgrBindless, zn.loaded, func(t *demoTexture) error { return w.r.Unregister(t.name) })
			w.unregistered += uint64(n)
			if err != nil {
				return fmt.Errorf("unregister %s: %w", zn.loaded[n].name, err)
			}
			if n > 0 {
				w.live = slices.DeleteFunc(w.live, func(x *demoTexture) bool { return x.zone == z })
			}
			zn.loaded = zn.loaded[:0]
		}
	}
	budget, room := f.loads(textureLoads), f.uploadBytes
	for z := range demoZones {
		zn := &w.zones[z]
		for f.inView[z] && budget > 0 && room > 0 && len(zn.loaded) < len(zn.sizes) {
			i := len(zn.loaded)
			w.nextTag++
			t := &demoTexture{zone: z, name: fmt.Sprintf("zone%d/tex%d", z, i), size: zn.sizes[i], tag: w.nextTag}
			texels := fill(&w.scratch, t.tag, t.bytes())
			before := w.onBelt.uploads()
			tm := f.gpumem.start(mgrBindless)
			h, err := w.r.Register(t.name, t.key(), texels)
			f.gpumem.stop(tm)
			w.onBelt.add(before)
			t.h = h
			if err != nil {
				return fmt.Errorf("register %s: %w", t.name, err)
			}
			w.registered++
			w.bytes += uint64(t.bytes())
			w.live = append(w.live, t)
			zn.loaded = append(zn.loaded, t)
			budget, room = budget-1, room-min(room, uint64(t.bytes()))
		}
	}
	f.uploadBytes = room
	if f.shrinkPages {
		// A level change: the textures left move down into the layers the
		// unloaded ones freed, and the pages no texture uses any more go,
		// the others trimmed to their textures (Compact, opt-in: handles
		// change, so the materials' handles are rewritten from the moves
		// Changes reports; a renderer rebuilds its bind group at the
		// version change below).
		tm := f.gpumem.start(mgrBindless)
		_, _, err := w.r.Compact()
		w.changes = w.r.Changes(w.changes[:0])
		f.gpumem.stop(tm)
		if stale := w.rehandle(w.changes); err == nil {
			err = stale
		}
		clear(w.changes)
		if err != nil {
			return fmt.Errorf("compact the textures: %w", err)
		}
	}
	if v := w.r.Version(); v != w.version {
		w.version = v
		w.versions++ // a renderer rebuilds its bind group here
	}
	return nil
}

// rehandle rewrites the handles of the textures that cs reports moved
// (every handle, when the list overflowed), and fails for a move of a
// handle the demo does not hold.
func (w *textureWorkload) rehandle(cs []memory.Change) error {
	var byHandle map[bindless.Handle]*demoTexture
	for _, c := range cs {
		switch c.Kind {
		case memory.Overflowed:
			for _, t := range w.live {
				t.h, _ = w.r.Handle(t.name)
			}
			byHandle = nil
		case memory.Moved:
			if byHandle == nil {
				byHandle = make(map[bindless.Handle]*demoTexture, len(w.live))
				for _, t := range w.live {
					byHandle[t.h] = t
				}
			}
			from, to := bindless.Moved(c)
			t := byHandle[from]
			if t == nil {
				return fmt.Errorf("Compact moved %v to %v, the demo holds no texture there", from, to)
			}
			t.h = to
			delete(byHandle, from)
			byHandle[to] = t
		}
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
	if h != t.h {
		return fmt.Errorf("%s: handle %v, the demo holds %v", t.name, h, t.h)
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

func (w *textureWorkload) notes() []string {
	st := w.r.Stats()
	vacant := ""
	if st.Vacant > 0 {
		vacant = fmt.Sprintf(" (%d vacant)", st.Vacant)
	}
	released := ""
	if st.PagesReleased+st.PagesTrimmed+st.TexturesMoved > 0 {
		released = fmt.Sprintf("; %d textures moved, %d pages released and %d trimmed (%s given back), %d grown again",
			st.TexturesMoved, st.PagesReleased, st.PagesTrimmed, inspect.FormatBytes(st.BytesReleased), st.PagesGrown)
	}
	return []string{
		fmt.Sprintf("textures: %d registered%s, %d unregistered; %d pages%s (binding slots 0-%d) in %d buckets, %d layers:",
			w.registered, w.onBelt.note(" (", ")"), w.unregistered, st.Pages, vacant, st.Pages-1, st.Buckets, st.Layers),
		fmt.Sprintf("  %d registered, %d defaults, %d free for reuse; layout version %d (%d bind-group rebuilds)%s",
			st.Registered, st.Builtin, st.FreeLayers, st.Version, w.versions, released),
	}
}
