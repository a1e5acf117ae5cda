//go:build cgo || js

package webgpu_test

import (
	"fmt"
	"log"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/mesh"
	"github.com/oliverbestmann/webgpu/wgpu"
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

// A renderer hands its own device to gpumem, packs a mesh into a shared
// slab and draws it with the slice's base vertex and first index: the
// README's snippet. (No Output: the example needs an adapter.)
func ExampleWrap() {
	// The renderer's own device, made here for the example.
	instance := wgpu.CreateInstance(nil)
	adapter, err := instance.RequestAdapter(nil)
	if err != nil {
		log.Fatal(err)
	}
	dev, err := adapter.RequestDevice(nil)
	if err != nil {
		log.Fatal(err)
	}
	// A triangle: three float32 positions, three uint16 indices.
	vertices := make([]byte, 3*12)
	indices := []byte{0, 0, 1, 0, 2, 0}

	gm, err := webgpu.Wrap(dev) // gpumem on the renderer's device
	if err != nil {
		log.Fatal(err)
	}
	defer gm.Release() // frees gpumem's buffers, never dev
	meshes, err := mesh.New(gm, mesh.Options{})
	if err != nil {
		log.Fatal(err)
	}
	h, err := meshes.Add(mesh.Mesh{VertexStride: 12, Vertices: vertices, IndexFormat: mesh.Uint16, Indices: indices})
	if err != nil {
		log.Fatal(err)
	}
	if err := meshes.Flush(); err != nil { // place, grow slabs, upload
		log.Fatal(err)
	}
	if err := gm.Submit(); err != nil { // gpumem's work goes before the renderer's
		log.Fatal(err)
	}
	v, i, _ := meshes.Slices(h)
	vb, _ := gm.RawBuffer(v.Buffer)
	ib, _ := gm.RawBuffer(i.Buffer)
	draw := func(pass *wgpu.RenderPassEncoder) {
		pass.SetVertexBuffer(0, vb, 0, wgpu.WholeSize)
		pass.SetIndexBuffer(ib, wgpu.IndexFormatUint16, 0, wgpu.WholeSize)
		pass.DrawIndexed(i.Len(), 1, i.StartElem, int32(v.StartElem), 0)
	}
	_ = draw // in the renderer's render pass
}
