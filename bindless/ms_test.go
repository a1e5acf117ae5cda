package bindless_test

import (
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
)

// TestRegistryMultisampled registers copies of 4-sample textures: one
// layer a page, a page per texture, handles page:0; Compact moves one to
// a lower page.
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
		// Compact moves b, every sample, from page 2 into page 1, drops
		// page 2 and trims page 0 to the defaults' 3 layers of 4 bytes.
		must(t, r.Unregister("c"))
		var moves []string
		r.Changes(nil)
		n, freed, err := r.Compact()
		for _, c := range r.Changes(nil) {
			if from, to := bindless.Moved(c); c.Kind == memory.Moved {
				id, _ := r.Source(to)
				moves = append(moves, fmt.Sprint(id, " ", from, " -> ", to))
			}
		}
		must(t, err)
		if h, _ := r.Handle("b"); n != 1 || h.String() != "1:0" || r.NumPages() != 2 || freed != 8*8*4*4+4*uint64(dev.Limits().MaxArrayLayers-3) || fmt.Sprint(moves) != "[b 2:0 -> 1:0]" {
			t.Fatalf("Compact: %d moves %v, %d bytes, b at %v, %d pages", n, moves, freed, h, r.NumPages())
		}
		if err := bindless.Check(r); err != nil {
			t.Fatal(err)
		}
	})
}
