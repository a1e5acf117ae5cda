package mesh_test

import (
	"testing"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
)

// BenchmarkFlushUpload measures a Flush that uploads 10,000 meshes (about
// 67 MB) into an allocator whose slabs exist, end to end: Remove and Add
// every mesh, Flush, and Wait for the device. On each backend, the same
// run also writes the same bytes to one buffer in queue writes of 256 KiB
// and waits (the device's upload speed, the baseline). Metrics: GB/s of
// array bytes for both, and their ratio.
func BenchmarkFlushUpload(b *testing.B) {
	const n = 10_000
	ms := benchMeshes(n, 1)
	total := meshBytes(ms)
	for _, be := range testdevice.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			dev := be.Open(b)
			a, err := mesh.New(dev, mesh.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer a.Release()
			hs := make([]mesh.Handle, n)
			for i, m := range ms {
				hs[i], _ = a.Add(m)
			}
			if err := a.Flush(); err != nil {
				b.Fatal(err)
			}
			base, err := dev.CreateBuffer(device.BufferDesc{Label: "baseline", Size: uint64(total+3) &^ 3, Usage: device.CopyDst})
			if err != nil {
				b.Fatal(err)
			}
			defer base.Release()
			chunk := make([]byte, 256<<10)
			var flush, queue time.Duration
			b.SetBytes(total)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				for i, m := range ms {
					if err := a.Remove(hs[i]); err != nil {
						b.Fatal(err)
					}
					if hs[i], err = a.Add(m); err != nil {
						b.Fatal(err)
					}
				}
				if err := a.Flush(); err != nil {
					b.Fatal(err)
				}
				if err := dev.Wait(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				for off := uint64(0); off < base.Size(); off += uint64(len(chunk)) {
					w := chunk[:min(uint64(len(chunk)), base.Size()-off)]
					if err := dev.WriteBuffer(base, off, w); err != nil {
						b.Fatal(err)
					}
				}
				if err := dev.Wait(); err != nil {
					b.Fatal(err)
				}
				flush += t1.Sub(t0)
				queue += time.Since(t1)
			}
			gb := float64(total) * float64(b.N) / 1e9
			b.ReportMetric(gb/flush.Seconds(), "GB/s-flush")
			b.ReportMetric(gb/queue.Seconds(), "GB/s-queue-writes")
			b.ReportMetric(flush.Seconds()/queue.Seconds(), "x-queue-time")
		})
	}
}
