package bindless_test

import (
	"bytes"
	"fmt"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
)

// model is what the registry should hold: per id, the key, the handle it
// got (stable until unregistered) and the mip 0 texels written.
type model struct {
	dev  device.Device
	r    *bindless.Registry[string]
	want map[string]entry
}

type entry struct {
	key    bindless.Key
	h      bindless.Handle
	pixels []byte
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
	m.want[id] = entry{key: key.Normalized(), h: h, pixels: px}
	return h, nil
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
// their bytes are returned; the others keep theirs; vacant pages at the
// end are dropped; Stats count the release.
func (m *model) shrink() error {
	before, st := m.r.Pages(), m.r.Stats()
	inUse := map[int]bool{0: true}
	for _, e := range m.want {
		inUse[e.h.Page()] = true
	}
	var want uint64
	last := 0
	for i, p := range before {
		switch {
		case p == nil:
		case inUse[i]:
			last = i
		default:
			d := p.Desc()
			want += d.LayerBytes() * uint64(d.Layers) * uint64(d.Samples)
		}
	}
	freed, err := m.r.Shrink()
	if err != nil {
		return err
	}
	if freed != want {
		return fmt.Errorf("Shrink freed %d bytes, the empty pages held %d", freed, want)
	}
	after := m.r.Pages()
	if len(after) != last+1 {
		return fmt.Errorf("after Shrink %d pages, the last in use is %d", len(after), last)
	}
	for i, p := range after {
		if inUse[i] != (p != nil) || (p != nil && p != before[i]) {
			return fmt.Errorf("after Shrink page %d is %v (was %v), in use %v", i, p, before[i], inUse[i])
		}
	}
	now := m.r.Stats()
	if now.BytesReleased != st.BytesReleased+freed || (freed > 0) != (now.PagesReleased > st.PagesReleased) {
		return fmt.Errorf("Stats after Shrink freed %d: %+v, before %+v", freed, now, st)
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
	st := m.r.Stats()
	if n := len(m.r.Memory()); n != st.Pages-st.Vacant || st.Pages != m.r.NumPages() {
		return fmt.Errorf("Memory shows %d pages, Stats %+v, NumPages %d", n, st, m.r.NumPages())
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
		if err := m.texels(h, e.pixels); err != nil {
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
