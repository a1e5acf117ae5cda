package webgpu_test

import (
	"fmt"
	"log"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
)

// A compaction sweep on the GPU: blocks slide down over the gaps before
// them, in one Move. (No Output: the example needs an adapter.)
func Example() {
	d, err := webgpu.New(webgpu.Options{})
	if err != nil {
		log.Fatal(err) // wraps webgpu.ErrNoAdapter without a driver
	}
	defer d.Release()
	buf, err := d.CreateBuffer(device.BufferDesc{Label: "arena", Size: 1 << 20, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Release()
	sweep := []device.Move{
		{Src: 4096, Dst: 0, Size: 8192},     // slides over itself
		{Src: 16384, Dst: 8192, Size: 4096}, // into the space the first left
	}
	if err := d.Move(buf, sweep); err != nil {
		log.Fatal(err)
	}
	if err := d.Wait(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Info())
}
