package bindless_test

import (
	"fmt"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
)

// A registry of 4-layer pages: the defaults fill three layers of page 0,
// 2x2 textures get a page of their own, a freed layer is reused, and
// Version changes only when a page is added.
func ExampleRegistry() {
	dev, _ := host.New(host.Options{})
	defer dev.Release()
	r, _ := bindless.New[string](dev, bindless.Options{LayersPerPage: 4})
	defer r.Release()
	fmt.Println("white", r.White(), "black", r.Black(), "normal", r.FlatNormal(), "version", r.Version())

	key := bindless.Key{Format: device.RGBA8Unorm, Width: 2, Height: 2}
	red := []byte{255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255}
	brick, _ := r.Register("brick.png", key, red)
	grass, _ := r.Register("grass.png", key, red)
	again, _ := r.Register("brick.png", key, red) // idempotent
	fmt.Println("brick", brick, "grass", grass, "again", again, "version", r.Version())

	_ = r.Unregister("brick.png")
	stone, _ := r.Register("stone.png", key, red)
	id, _ := r.Source(stone)
	fmt.Println("stone", stone, "is", id, "version", r.Version())

	// A shader binds the pages in this order: page h>>16, layer h&0xffff.
	for i, p := range r.Pages() {
		d := p.Desc()
		fmt.Printf("binding %d: %v %dx%d, %d layers\n", i, d.Format, d.Width, d.Height, d.Layers)
	}
	// Output:
	// white 0:0 black 0:1 normal 0:2 version 1
	// brick 1:0 grass 1:1 again 1:0 version 2
	// stone 1:0 is stone.png version 2
	// binding 0: RGBA8Unorm 1x1, 4 layers
	// binding 1: RGBA8Unorm 2x2, 4 layers
}

// Text labels sized to their text share the pages of their size class;
// a shader scales its texture coordinates by the label's Region.
func ExampleRegistry_RegisterSized() {
	dev, _ := host.New(host.Options{})
	defer dev.Release()
	r, _ := bindless.New[string](dev, bindless.Options{})
	defer r.Release()

	for _, label := range []struct {
		text string
		w, h uint32
	}{{"Start game", 2378, 111}, {"Continue", 2200, 100}, {"Quit", 700, 90}} {
		key := bindless.Key{Format: device.R8Unorm, Width: label.w, Height: label.h}
		h, _ := r.RegisterSized(label.text, key, make([]byte, label.w*label.h))
		g, _ := r.Region(h)
		u, v := g.Scale()
		fmt.Printf("%-10s %v: %dx%d in %dx%d, scale %.4f %.4f\n", label.text, h, g.Width, g.Height, g.LayerWidth, g.LayerHeight, u, v)
	}
	st := r.Stats()
	fmt.Printf("%d pages; %d bytes held, images (and defaults) %d\n", st.Pages, st.BytesHeld, st.BytesUsed)
	// Output:
	// Start game 1:0: 2378x111 in 4096x128, scale 0.5806 0.8672
	// Continue   1:1: 2200x100 in 4096x128, scale 0.5371 0.7812
	// Quit       2:0: 700x90 in 1024x128, scale 0.6836 0.7031
	// 3 pages; 1180672 bytes held, images (and defaults) 546970
}
