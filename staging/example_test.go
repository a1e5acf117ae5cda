package staging_test

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/staging"
)

// Uploading a mesh through a belt of 1 KiB chunks: the vertices span two
// chunks, the indices share the second. After the frame's fence completes
// the chunks are free for the next frame.
func ExampleBelt() {
	dev, _ := host.New(host.Options{HoldCompletion: true})
	defer dev.Release()
	belt, _ := staging.New(dev, staging.Options{ChunkBytes: 1024})
	defer belt.Release()
	vb, _ := dev.CreateBuffer(device.BufferDesc{Size: 1536, Usage: device.Vertex | device.CopyDst | device.CopySrc})
	ib, _ := dev.CreateBuffer(device.BufferDesc{Size: 256, Usage: device.Index | device.CopyDst})

	vertices := make([]byte, 1536)
	vertices[1535] = 7
	_ = belt.Upload(vb, 0, vertices)
	_ = belt.Upload(ib, 0, make([]byte, 256))
	fence, _ := dev.Fence()
	_ = belt.EndFrame(fence)
	st := belt.Stats()
	fmt.Println("chunks", st.Chunks, "copies", st.Copies, "in flight", st.InFlightChunks)

	last := make([]byte, 4)
	_ = dev.ReadBuffer(vb, 1532, last)
	fmt.Println("last vertex bytes", last)

	dev.Complete(fence) // the GPU finished the frame
	_ = belt.Upload(ib, 0, make([]byte, 256))
	fmt.Println("chunks", belt.Stats().Chunks, "after reuse")
	// Output:
	// chunks 2 copies 3 in flight 2
	// last vertex bytes [0 0 0 7]
	// chunks 2 after reuse
}
