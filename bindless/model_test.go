package bindless_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/memory"
)

// model is what the registry should hold: per id, the key, the handle it
// got (stable until unregistered) and the mip 0 texels written.
type model struct {
	dev  device.Device
	r    *bindless.Registry[string]
	want map[string]entry
	// full is the registry's LayersPerPage, when the test knows it: a
	// registration with no available layer is then checked to take the
	// lowest page below full capacity (grown or recreated) or a new one.
	full uint32
	// copies, when the registry is on one, refuses copies for compact.
	copies *copyRefuser
}

// entry is a registered id: its key (for a sized texture, its image's,
// and sized set), handle and mip 0 texels (the image's).
type entry struct {
	key    bindless.Key
	h      bindless.Handle
	pixels []byte
	sized  bool
}

// bucketOf names a bucket in the model: its key and whether it is sized.
type bucketOf struct {
	key   bindless.Key
	sized bool
}

// pageBucket returns the bucket of page i, and ok false when there is no
// page i.
func (m *model) pageBucket(i int) (bucketOf, bool) {
	k, sized, ok := bindless.PageBucket(m.r, i)
	return bucketOf{k, sized}, ok
}

func newModel(dev device.Device, r *bindless.Registry[string]) *model {
	return &model{dev: dev, r: r, want: map[string]entry{}}
}

// pixels returns deterministic texels of key for seed.
func pixels(key bindless.Key, seed int) []byte {
	n := device.TextureDesc{Format: key.Format, Width: key.Width, Height: key.Height}.MipBytes(0)
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(seed*31 + i*7)
	}
	return p
}

// register registers id from pixels of seed and records it on success.
func (m *model) register(id string, key bindless.Key, seed int) (bindless.Handle, error) {
	px := pixels(key, seed)
	expect, known := m.next(bucketOf{key.Normalized(), false})
	h, err := m.r.Register(id, key, px)
	if err != nil {
		return h, err
	}
	if e, ok := m.want[id]; ok {
		if e.h != h {
			return h, fmt.Errorf("Register(%q) again: handle %v, was %v", id, h, e.h)
		}
		return h, nil
	}
	if known && h != expect {
		return h, fmt.Errorf("Register(%q) took %v, the lowest available is %v", id, h, expect)
	}
	m.want[id] = entry{key: key.Normalized(), h: h, pixels: px}
	return h, nil
}

// inUse returns the layers in use of every page: the ids' and the
// defaults'.
func (m *model) inUse() map[int]map[uint32]bool {
	used := map[int]map[uint32]bool{}
	add := func(h bindless.Handle) {
		if used[h.Page()] == nil {
			used[h.Page()] = map[uint32]bool{}
		}
		used[h.Page()][h.Layer()] = true
	}
	for _, e := range m.want {
		add(e.h)
	}
	add(m.r.White())
	add(m.r.Black())
	add(m.r.FlatNormal())
	return used
}

// next returns the handle a registration of a new id with key must take:
// the lowest available layer (lowest page, then layer) of the bucket's
// live pages; else, when m.full is known, the first new layer of the
// lowest page of the bucket below full capacity (a trimmed page grown, a
// vacant one recreated), else layer 0 of a new page. known is false where
// the model cannot tell.
func (m *model) next(bk bucketOf) (h bindless.Handle, known bool) {
	key := bk.key
	used := m.inUse()
	pages := m.r.Pages()
	for i, p := range pages {
		if b, _ := m.pageBucket(i); p == nil || b != bk {
			continue
		}
		for l := range p.Desc().Layers {
			if !used[i][l] {
				return bindless.Handle(uint32(i)<<16 | l), true
			}
		}
	}
	if m.full == 0 || key.Samples > 1 {
		return 0, false
	}
	for i, p := range pages {
		if b, _ := m.pageBucket(i); b != bk {
			continue
		}
		if p == nil {
			return bindless.Handle(uint32(i) << 16), true
		}
		if n := p.Desc().Layers; n < m.full {
			return bindless.Handle(uint32(i)<<16 | n), true
		}
	}
	return bindless.Handle(uint32(len(pages)) << 16), true
}

func (m *model) update(id string, seed int) error {
	e := m.want[id]
	px := pixels(e.key, seed)
	if err := m.r.Update(id, e.key.Width, e.key.Height, px); err != nil {
		return err
	}
	e.pixels = px
	m.want[id] = e
	return nil
}

func (m *model) unregister(id string) error {
	if err := m.r.Unregister(id); err != nil {
		return err
	}
	delete(m.want, id)
	return nil
}

// shrink calls Shrink and checks it against the model: the pages with no
// texture in use (page 0 holds the defaults) lose their textures and
// their bytes are returned; vacant pages at the end are dropped; a page
// whose layers in use all lie in its lower half (the highest h, h+1 at
// most half its layers) gets a texture of exactly h+1 layers, its bytes
// beyond those returned; the others keep theirs; Stats count the
// releases and trims.
func (m *model) shrink() error { return m.shrinkRefused(false) }

// shrinkRefused is shrink with every page creation refused (refused
// true, on a host device): no page is trimmed, and none changes but the
// empty ones, released.
func (m *model) shrinkRefused(refused bool) error {
	return m.giveBack(m.r.Pages(), func(int) bool { return !refused }, false, func() (uint64, error) {
		if refused {
			m.dev.(*host.Device).FailNextCreates(1 << 20)
			defer m.dev.(*host.Device).FailNextCreates(0)
		}
		return m.r.Shrink()
	})
}

// giveBack runs call, a Shrink (or a Compact whose moves the model
// holds already), and checks what it gave back against the model, as
// shrink says: pages were before; trimOK says, in page order, whether
// the device lets a page with n layers in use be trimmed (it copies
// them). With exact, every page with a layer in use is trimmed to exactly
// its layers 0..highest in use (Compact), else only those half empty or
// less.
func (m *model) giveBack(before []device.Texture, trimOK func(n int) bool, exact bool, call func() (uint64, error)) error {
	st := m.r.Stats()
	used := m.inUse()
	var want uint64
	last := 0
	trims := 0
	keep := make([]uint32, len(before)) // layers each page keeps; 0: released
	for i, p := range before {
		if p == nil {
			continue
		}
		d := p.Desc()
		if len(used[i]) == 0 {
			want += d.Bytes()
			continue
		}
		last = i
		high := uint32(0)
		for l := range used[i] {
			high = max(high, l)
		}
		keep[i] = d.Layers
		if (high+1 <= d.Layers/2 || (exact && high+1 < d.Layers)) && trimOK(len(used[i])) {
			keep[i] = high + 1
			trims++
			want += d.LayerBytes() * uint64(d.Layers-high-1) * uint64(d.Samples)
		}
	}
	freed, err := call()
	if err != nil {
		return err
	}
	if freed != want {
		return fmt.Errorf("Shrink freed %d bytes, the empty and trimmed pages held %d", freed, want)
	}
	after := m.r.Pages()
	if len(after) != last+1 {
		return fmt.Errorf("after Shrink %d pages, the last in use is %d", len(after), last)
	}
	for i, p := range after {
		switch {
		case (keep[i] != 0) != (p != nil):
			return fmt.Errorf("after Shrink page %d is %v (was %v), layers in use %v", i, p, before[i], used[i])
		case p == nil:
		case p.Desc().Layers != keep[i] || (p == before[i]) != (keep[i] == before[i].Desc().Layers):
			return fmt.Errorf("after Shrink page %d has %d layers (texture %v, was %v with %d), want %d", i, p.Desc().Layers, p, before[i], before[i].Desc().Layers, keep[i])
		}
	}
	now := m.r.Stats()
	if now.BytesReleased != st.BytesReleased+freed || now.PagesTrimmed != st.PagesTrimmed+uint64(trims) {
		return fmt.Errorf("Stats after Shrink freed %d, %d trims: %+v, before %+v", freed, trims, now, st)
	}
	released := 0
	for i, p := range before {
		if p != nil && (i >= len(after) || after[i] == nil) {
			released++
		}
	}
	if now.PagesReleased != st.PagesReleased+uint64(released) {
		return fmt.Errorf("Stats after Shrink released %d pages: %+v, before %+v", released, now, st)
	}
	return nil
}

// verify checks the registry's invariants, every id's handle, source and
// texels, and the default textures.
func (m *model) verify() error {
	if err := bindless.Check(m.r); err != nil {
		return err
	}
	if m.r.Len() != len(m.want) {
		return fmt.Errorf("Len %d, want %d", m.r.Len(), len(m.want))
	}
	// Memory shows the live pages in binding order, each named as its
	// texture unless that was made ahead (Options.PageAhead), then the
	// pages being made ahead.
	st := m.r.Stats()
	var live []device.Texture
	for i, p := range m.r.Pages() {
		if p != nil {
			live = append(live, p)
		} else if _, ok := m.pageBucket(i); !ok {
			return fmt.Errorf("vacant page %d has no bucket", i)
		}
	}
	mem := m.r.Memory()
	if len(live) != st.Pages-st.Vacant || st.Pages != m.r.NumPages() || len(mem) < len(live) {
		return fmt.Errorf("Memory shows %d buffers, %d pages live, Stats %+v, NumPages %d", len(mem), len(live), st, m.r.NumPages())
	}
	prepared := uint64(0)
	for k, b := range mem {
		if k >= len(live) {
			if b.Kind != memory.PreparedBuffer || !strings.HasSuffix(b.Name, " (next page)") {
				return fmt.Errorf("Memory shows %+v after the pages", b)
			}
			prepared += b.CapacityBytes
			continue
		}
		d := live[k].Desc()
		if b.Kind != memory.TexturePage || (d.Label != b.Name && !strings.HasSuffix(d.Label, " (made ahead)")) {
			return fmt.Errorf("Memory shows %s (%v) for the texture labelled %s", b.Name, b.Kind, d.Label)
		}
		if b.Layers != d.Layers || b.CapacityBytes != d.LayerBytes()*uint64(d.Layers) {
			return fmt.Errorf("Memory shows %s with %d layers, %d bytes; its texture has %d", b.Name, b.Layers, b.CapacityBytes, d.Layers)
		}
	}
	if prepared != st.PreparedBytes {
		return fmt.Errorf("Memory shows %d bytes of pages made ahead, Stats %d", prepared, st.PreparedBytes)
	}
	handles := map[bindless.Handle]string{}
	for id, e := range m.want {
		h, ok := m.r.Handle(id)
		if !ok || h != e.h {
			return fmt.Errorf("Handle(%q) = %v, %v; want %v", id, h, ok, e.h)
		}
		if other, dup := handles[h]; dup {
			return fmt.Errorf("%q and %q share handle %v", id, other, h)
		}
		handles[h] = id
		if src, ok := m.r.Source(h); !ok || src != id {
			return fmt.Errorf("Source(%v) = %q, %v; want %q", h, src, ok, id)
		}
		want := e.pixels
		if e.sized {
			g, ok := m.r.Region(h)
			if !ok || g.Width != e.key.Width || g.Height != e.key.Height {
				return fmt.Errorf("%q: Region(%v) = %+v, %v; image %v", id, h, g, ok, e.key)
			}
			want = padded(e.key, g.LayerWidth, g.LayerHeight, e.pixels)
		}
		if err := m.texels(h, want); err != nil {
			return fmt.Errorf("%q: %w", id, err)
		}
	}
	for _, d := range []struct {
		h     bindless.Handle
		texel []byte
	}{{m.r.White(), []byte{255, 255, 255, 255}}, {m.r.Black(), []byte{0, 0, 0, 255}}, {m.r.FlatNormal(), []byte{128, 128, 255, 255}}} {
		if _, ok := m.r.Source(d.h); ok {
			return fmt.Errorf("default %v has a source", d.h)
		}
		if err := m.texels(d.h, d.texel); err != nil {
			return fmt.Errorf("default %v: %w", d.h, err)
		}
	}
	return nil
}

// texels reads mip 0 of h and compares it with want.
func (m *model) texels(h bindless.Handle, want []byte) error {
	tex, layer, ok := m.r.Locate(h)
	if !ok {
		return fmt.Errorf("Locate(%v) found nothing", h)
	}
	got := make([]byte, len(want))
	if err := m.dev.ReadTexture(tex, layer, 0, got); err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("texels of %v: % x, want % x", h, got[:min(8, len(got))], want[:min(8, len(want))])
	}
	return nil
}
