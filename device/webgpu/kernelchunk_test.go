//go:build cgo

package webgpu_test

import (
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/devbench"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// BenchmarkKernelChunk measures the move kernels with table entries of 64
// (the default), 16, 32 and 128 KiB, on devbench's compute cases of moves
// of 64 KiB and of 1 MiB (devbench.Cases), at the sizes devbench.Sizes
// gives, through devbench's harness: its metrics, and its numbers for the
// same case. x-64KiB is the GB/s against the default entry size on the
// same moves in the same run: what tuning chunkBytes would gain on this
// GPU.
func BenchmarkKernelChunk(b *testing.B) {
	d := testdevice.WebGPU(b, webgpu.Options{AdapterLimits: true})
	defer webgpu.SetMoveChunk(d, 0)
	sizes, err := devbench.Sizes()
	if err != nil {
		b.Fatal(err)
	}
	for _, mib := range sizes {
		for _, c := range devbench.Cases(mib << 20) {
			if c.Path != "compute" || c.SrcSkew != 0 || c.MoveBytes != 64<<10 && c.MoveBytes != 1<<20 {
				continue
			}
			base := 0.0
			for _, chunk := range []uint64{64 << 10, 16 << 10, 32 << 10, 128 << 10} {
				b.Run(fmt.Sprintf("%dMiB/moves=%dKiB/chunk=%dKiB", mib, c.MoveBytes>>10, chunk>>10), func(b *testing.B) {
					webgpu.SetMoveChunk(d, chunk)
					r := devbench.Bench(b, d, c)
					if chunk == 64<<10 {
						base = r.GBps()
					}
					if base > 0 {
						b.ReportMetric(r.GBps()/base, "x-64KiB")
					}
				})
			}
		}
	}
}
