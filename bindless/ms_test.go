package bindless_test

import (
	"testing"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// TestRegistryMultisampled registers copies of 4-sample textures: one
// layer a page, a page per texture, handles page:0.
func TestRegistryMultisampled(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		r := newRegistry(t, dev, bindless.Options{})
		src, err := dev.CreateTexture(device.TextureDesc{Format: device.RGBA8Unorm, Width: 8, Height: 8, Samples: 4,
			Usage: device.TextureRenderAttachment | device.TextureCopySrc | device.TextureBinding})
		must(t, err)
		defer src.Release()
		for i, id := range []string{"a", "b"} {
			h, err := r.RegisterCopy(id, src, 0)
			must(t, err)
			if h.Page() != i+1 || h.Layer() != 0 {
				t.Fatalf("%s: handle %v, want %d:0", id, h, i+1)
			}
		}
		must(t, r.Unregister("a"))
		h, err := r.RegisterCopy("c", src, 0)
		must(t, err)
		if h.String() != "1:0" {
			t.Fatalf("c: handle %v, want 1:0", h)
		}
		if err := bindless.Check(r); err != nil {
			t.Fatal(err)
		}
	})
}
