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
