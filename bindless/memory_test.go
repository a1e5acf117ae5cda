package bindless_test

import (
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
)

// TestMemory checks the registry's memory view after registrations and
// unregistrations over several buckets: a page per binding slot, a layer
// region per texture in use, at the layer Locate gives, named by its id.
func TestMemory(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		r := newRegistry(t, dev, bindless.Options{LayersPerPage: 4})
		ids := map[string]bool{}
		for i := range 12 {
			id := fmt.Sprintf("tex%d", i)
			k := rgba4
			if i%3 == 1 {
				k = rgba8
			}
			_, err := r.Register(id, k, make([]byte, k.Width*k.Height*4))
			must(t, err)
			ids[id] = true
		}
		for _, id := range []string{"tex0", "tex4", "tex5"} {
			must(t, r.Unregister(id))
			delete(ids, id)
		}
		bufs := r.Memory()
		st := r.Stats()
		if len(bufs) != st.Pages {
			t.Fatalf("%d buffers, %d pages", len(bufs), st.Pages)
		}
		pages := r.Pages()
		layers, live := 0, 0
		for i, b := range bufs {
			if err := b.Check(); err != nil {
				t.Fatal(err)
			}
			if b.Name != pages[i].Desc().Label || b.Kind != memory.TexturePage || !b.TextureUsage.Has(device.TextureBinding) || b.Layers != pages[i].Desc().Layers {
				t.Fatalf("buffer %d: %q %v %d layers", i, b.Name, b.Kind, b.Layers)
			}
			layers += int(b.Layers)
			for _, rg := range b.Regions {
				if !rg.Live() {
					continue
				}
				live++
				if !ids[rg.Name] {
					if rg.Name == "white (default)" || rg.Name == "black (default)" || rg.Name == "flat normal (default)" {
						continue
					}
					t.Fatalf("page %d: region %q", i, rg.Name)
				}
				h, _ := r.Handle(rg.Name)
				tex, layer, ok := r.Locate(h)
				if !ok || tex != pages[i] || uint64(layer)*uint64(b.ElemBytes) != rg.Offset {
					t.Fatalf("%s at %d of page %d; Locate says layer %d of %v", rg.Name, rg.Offset, i, layer, tex.Desc().Label)
				}
			}
		}
		if layers != st.Layers || live != st.Registered+st.Builtin || st.Registered != len(ids) {
			t.Fatalf("memory: %d layers, %d in use; Stats %+v", layers, live, st)
		}
	})
}
