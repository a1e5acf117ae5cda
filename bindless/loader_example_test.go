package bindless_test

import (
	"fmt"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/handle"
)

// A loader goroutine names its textures before the render goroutine,
// which owns the registry, registers them: the registry is keyed by the
// caller's ids, and handle.Handles that a handle.Remote reserves without a
// lock serve as those ids (the loader can wire them into its materials at
// once).
func ExampleRegistry_loader() {
	dev, _ := host.New(host.Options{})
	defer dev.Release()
	ids := handle.New()
	defer ids.Release()
	r, _ := bindless.New[handle.Handle](dev, bindless.Options{LayersPerPage: 4})
	defer r.Release()

	type decoded struct {
		id     handle.Handle
		pixels []byte
	}
	key := bindless.Key{Format: device.RGBA8Unorm, Width: 2, Height: 2}
	loaded := make(chan decoded)
	go func() { // the loader
		defer close(loaded)
		remote := ids.Remote()
		for range 3 {
			id, err := remote.Allocate() // no lock: the render goroutine keeps working
			if err != nil {
				return
			}
			loaded <- decoded{id, make([]byte, 2*2*4)}
		}
	}()
	for t := range loaded { // the render goroutine
		h, err := r.Register(t.id, key, t.pixels)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("texture %v: bindless handle %v\n", t.id, h)
	}
	// Output:
	// texture 1.0: bindless handle 1:0
	// texture 2.0: bindless handle 1:1
	// texture 3.0: bindless handle 1:2
}
