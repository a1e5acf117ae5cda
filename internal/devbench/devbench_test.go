package devbench_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

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
// in the same run), the CPU time to record the batch, and where the
// device has a timer GB/s-kernel and ms-kernel/batch (over the GPU time
// the timestamps measure).
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
				var gbps, record, kernelGBps, kernel float64
				for range b.N {
					r, err := devbench.Run(d, c, 1)
					if err != nil {
						b.Fatal(err)
					}
					gbps += r.GBps()
					record += float64(r.Record.Nanoseconds())
					kernelGBps += r.KernelGBps()
					kernel += float64(r.Kernel.Nanoseconds())
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
				if kernel > 0 {
					b.ReportMetric(kernelGBps/float64(b.N), "GB/s-kernel")
					b.ReportMetric(kernel/float64(b.N)/1e6, "ms-kernel/batch")
				}
			})
		}
	}
}

// TestBenchSmoke runs every case on small batches; where the device has
// a timer, each case reports the GPU time its timestamps measured.
func TestBenchSmoke(t *testing.T) {
	d := testdevice.WebGPU(t, webgpu.Options{})
	_, timed := d.Timer()
	for _, c := range devbench.Cases(1 << 20) {
		r, err := devbench.Run(d, c, 1)
		if err != nil {
			t.Fatalf("%s %s: %v", c.Path, c.Name, err)
		}
		if r.GBps() <= 0 {
			t.Fatalf("%s %s: no throughput: %+v", c.Path, c.Name, r)
		}
		if timed != (r.Kernel > 0) {
			t.Fatalf("%s %s: device has a timer: %v; kernel time %v", c.Path, c.Name, timed, r.Kernel)
		}
	}
	if !timed {
		t.Logf("%v has no GPU timer: no kernel times", d.Info())
	}
}

// TestKernelTime measures the case on a software driver too: a
// batch of one 64 MiB move (compute) and one copyBufferToBuffer of
// 64 MiB, wall-clock GPU time beside the timestamps' kernel time.
func TestKernelTime(t *testing.T) {
	testdevice.Long(t)
	d := testdevice.WebGPU(t, webgpu.Options{})
	if _, ok := d.Timer(); !ok {
		t.Skipf("%v has no GPU timer", d.Info())
	}
	for _, c := range []devbench.Case{
		{Name: "copyBufferToBuffer 64 MiB", Path: "buffer", MoveBytes: 64 << 20, Moves: 1},
		{Name: "moves of 64 MiB", Path: "compute", MoveBytes: 64 << 20, Moves: 1},
		{Name: "moves of 64 MiB", Path: "copy", MoveBytes: 64 << 20, Moves: 1},
	} {
		r, err := devbench.Run(d, c, 3)
		if err != nil {
			t.Fatal(err)
		}
		if r.Kernel <= 0 || r.Kernel > 2*r.GPU+time.Second {
			t.Errorf("%s %s: kernel %v beside wall %v", c.Path, c.Name, r.Kernel, r.GPU)
		}
		t.Logf("%s %s: wall %v (%.2f GB/s), kernel %v (%.2f GB/s), %d batches a submit",
			c.Path, c.Name, r.GPU, r.GBps(), r.Kernel, r.KernelGBps(), r.Batches)
	}
}
