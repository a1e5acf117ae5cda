package staging_test

import (
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/staging"
)

// BenchmarkUpload moves the same bytes to a device buffer two ways, one
// upload a frame, each frame submitted with a fence, the GPU's completion
// of the last frame timed too (the run ends with Wait):
//
//	belt:  Belt.Upload through 16 MiB MapWrite chunks (at most 16)
//	queue: WriteBuffer straight to the CopyDst destination (a queue write:
//	       the backend stages the bytes itself)
//
// MB/s is bytes uploaded per second. On webgpu it runs on the adapter
// testdevice finds (skipped without one; on NVIDIA set VK_DRIVER_FILES,
// see DESIGN.md).
func BenchmarkUpload(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) device.Device
	}{
		{"host", func(b *testing.B) device.Device { return testdevice.Host(b, host.Options{}) }},
		{"webgpu", func(b *testing.B) device.Device { return testdevice.WebGPU(b, webgpu.Options{}) }},
	}
	for _, be := range backends {
		for _, size := range []uint64{256 << 10, 4 << 20, 64 << 20} {
			for _, path := range []string{"belt", "queue"} {
				b.Run(fmt.Sprintf("%s/%s/%dKiB", be.name, path, size>>10), func(b *testing.B) {
					benchUpload(b, be.open(b), path, size)
				})
			}
		}
	}
}

func benchUpload(b *testing.B, dev device.Device, path string, size uint64) {
	dst, err := dev.CreateBuffer(device.BufferDesc{Label: "upload destination", Size: size, Usage: device.CopyDst | device.Vertex})
	must(b, err)
	defer dst.Release()
	belt, err := staging.New(dev, staging.Options{ChunkBytes: 16 << 20, MaxChunks: 16})
	must(b, err)
	defer belt.Release()
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	// One untimed round so the belt's chunks exist and are paged in.
	for range 2 {
		must(b, belt.Upload(dst, 0, data))
		f, err := dev.Fence()
		must(b, err)
		must(b, belt.EndFrame(f))
	}
	must(b, dev.WriteBuffer(dst, 0, data))
	must(b, dev.Wait())

	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if path == "belt" {
			must(b, belt.Upload(dst, 0, data))
		} else {
			must(b, dev.WriteBuffer(dst, 0, data))
		}
		f, err := dev.Fence()
		must(b, err)
		must(b, belt.EndFrame(f))
	}
	must(b, dev.Wait())
	b.StopTimer()
	b.ReportMetric(float64(belt.Stats().Waits)/float64(b.N), "waits/op")
}
