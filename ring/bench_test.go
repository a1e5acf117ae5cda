package ring_test

import (
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/ring"
)

// BenchmarkBufferAllocate measures Allocate in a frame loop: frames of perFrame
// allocations of 256 bytes on a 4 MiB ring, each frame ended with a fence
// (host: complete at once, so the ring recycles). The fence and EndFrame
// are amortized over the frame; ns/op is per allocation.
func BenchmarkBufferAllocate(b *testing.B) {
	for _, perFrame := range []int{64, 1024} {
		b.Run(fmt.Sprintf("perFrame=%d", perFrame), func(b *testing.B) {
			dev, err := host.New(host.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer dev.Release()
			r, err := ring.NewBuffer(dev, ring.BufferOptions{SizeBytes: 4 << 20})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Release()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if _, err := r.Allocate(256); err != nil {
					b.Fatal(err)
				}
				if n++; n == perFrame {
					n = 0
					f, err := dev.Fence()
					if err != nil {
						b.Fatal(err)
					}
					if err := r.EndFrame(f); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkFrameAllocate measures Allocate of 64 bytes in frames of 1024 on 1 MiB
// blocks, each frame ended with a fence (host: complete at once, so
// blocks are reused).
func BenchmarkFrameAllocate(b *testing.B) {
	dev, err := host.New(host.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Release()
	a, err := ring.NewFrame(dev, ring.FrameOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Release()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if _, err := a.Allocate(64); err != nil {
			b.Fatal(err)
		}
		if n++; n == 1024 {
			n = 0
			f, _ := dev.Fence()
			if err := a.EndFrame(f); err != nil {
				b.Fatal(err)
			}
		}
	}
}
