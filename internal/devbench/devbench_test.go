package devbench_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/devbench"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// BenchmarkMoves measures the standard cases (Cases) with the adapter's
// limits, on batches of the sizes Sizes gives (64 MiB unless
// GPUMEM_BENCH_MIB lists others: the kernel goals are at 256 MiB and
// 1 GiB), with Bench's metrics, and x-buffer: GB/s against the case of one
// copyBufferToBuffer of the batch's bytes in the same run.
func BenchmarkMoves(b *testing.B) {
	d := testdevice.WebGPU(b, webgpu.Options{AdapterLimits: true})
	sizes, err := devbench.Sizes()
	if err != nil {
		b.Fatal(err)
	}
	for _, mib := range sizes {
		var buffer float64 // GB/s of the batch's copyBufferToBuffer
		for _, c := range devbench.Cases(mib << 20) {
			name := fmt.Sprintf("%dMiB/%s/%s", mib, c.Path, strings.ReplaceAll(c.Name, " ", "_"))
			b.Run(name, func(b *testing.B) {
				r := devbench.Bench(b, d, c)
				if c.Path == "buffer" {
					buffer = r.GBps()
				}
				if buffer > 0 {
					b.ReportMetric(r.GBps()/buffer, "x-buffer")
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
