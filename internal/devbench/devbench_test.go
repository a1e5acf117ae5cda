package devbench_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/devbench"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// BenchmarkMoves measures the standard cases (Cases) on batches of
// 64 MiB, small enough for a software driver, or of the sizes
// GPUMEM_BENCH_MIB lists (comma-separated MiB, e.g. "256,1024" on a real
// GPU: the kernel goals are at 256 MiB and 1 GiB), with the
// adapter's limits. Metrics: GB/s (read plus written, over the GPU time),
// x-buffer (against one copyBufferToBuffer of the batch's bytes, measured
// in the same run) and the CPU time to record the batch.
func BenchmarkMoves(b *testing.B) {
	d := testdevice.WebGPU(b, webgpu.Options{AdapterLimits: true})
	sizes := []uint64{64}
	if env := os.Getenv("GPUMEM_BENCH_MIB"); env != "" {
		sizes = sizes[:0]
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 32)
			if err != nil || n == 0 {
				b.Fatalf("GPUMEM_BENCH_MIB=%q: want MiB counts like 256,1024", env)
			}
			sizes = append(sizes, n)
		}
	}
	for _, mib := range sizes {
		var buffer float64 // GB/s of the batch's copyBufferToBuffer
		for _, c := range devbench.Cases(mib << 20) {
			name := fmt.Sprintf("%dMiB/%s/%s", mib, c.Path, strings.ReplaceAll(c.Name, " ", "_"))
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
				gbps /= float64(b.N)
				if c.Path == "buffer" {
					buffer = gbps
				}
				b.ReportMetric(gbps, "GB/s")
				if buffer > 0 {
					b.ReportMetric(gbps/buffer, "x-buffer")
				}
				b.ReportMetric(record/float64(b.N)/1e3, "µs-record/batch")
			})
		}
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
