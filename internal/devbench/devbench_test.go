package devbench_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/devbench"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// BenchmarkMoves measures the standard cases (Cases) on batches of
// 64 MiB, small enough for a software driver; `gpumem devbench` runs the
// same cases at 256 MiB on a real GPU. Metrics: GB/s (read plus written,
// over the GPU time) and the CPU time to record the batch.
func BenchmarkMoves(b *testing.B) {
	d := testdevice.WebGPU(b, webgpu.Options{})
	for _, c := range devbench.Cases(64 << 20) {
		name := fmt.Sprintf("%s/%s", c.Path, strings.ReplaceAll(c.Name, " ", "_"))
		b.Run(name, func(b *testing.B) {
			var gbps, record float64
			for range b.N {
				r, err := devbench.Run(d, c, 1)
				if err != nil {
					b.Fatal(err)
				}
				gbps += r.GBps()
				record += float64(r.Record.Nanoseconds())
			}
			b.ReportMetric(gbps/float64(b.N), "GB/s")
			b.ReportMetric(record/float64(b.N)/1e3, "µs-record/batch")
		})
	}
}

func TestBenchSmoke(t *testing.T) {
	d := testdevice.WebGPU(t, webgpu.Options{})
	for _, c := range devbench.Cases(1 << 20) {
		r, err := devbench.Run(d, c, 1)
		if err != nil {
			t.Fatalf("%s %s: %v", c.Path, c.Name, err)
		}
		if r.GBps() <= 0 {
			t.Fatalf("%s %s: no throughput: %+v", c.Path, c.Name, r)
		}
	}
}
