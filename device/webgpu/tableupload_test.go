//go:build cgo

package webgpu_test

import (
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/devbench"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// TestTableUpload gives the host's bytes whichever way the move tables
// take (SetTableUpload): batches of growing size, several recorded into
// one encoder and others after a submit, with small limits so that
// tables outgrow the table buffer, and the staging buffers change size.
func TestTableUpload(t *testing.T) {
	c := bigCase{limits: smallLimits}
	for _, mode := range []string{"staged", "kept", "queue"} {
		t.Run(mode, func(t *testing.T) {
			gpu, cpu := bigDevices(t, c)
			if err := webgpu.SetTableUpload(gpu.(*webgpu.Device), mode); err != nil {
				t.Fatal(err)
			}
			devs := []device.Device{gpu, cpu}
			const size = 1 << 20
			bufs := bigBuffer(t, devs, size, device.CopySrc|device.CopyDst, 5)
			for round, n := range []int{100, 5000, 20000, 300, 20000} {
				moves := make([]device.Move, n)
				for i := range moves {
					// Word moves from the upper half down, the
					// offsets drawn from the round.
					src := size/2 + uint64((i*7+round*13)%(size/8))*4
					moves[i] = device.Move{Src: src, Dst: uint64(i) * 4 % (size / 2), Size: 4}
				}
				for i, d := range devs {
					if err := d.Move(bufs[i], moves); err != nil {
						t.Fatalf("round %d, %d moves: %v", round, n, err)
					}
				}
				if round%2 == 1 {
					if err := gpu.Wait(); err != nil {
						t.Fatal(err)
					}
				}
			}
			sameBytes(t, devs, bufs)
		})
	}
	if err := webgpu.SetTableUpload(testdevice.WebGPU(t, webgpu.Options{}), "sideways"); err == nil {
		t.Error("SetTableUpload took an unknown mode")
	}
}

// BenchmarkTableUpload measures devbench's compute cases of moves of
// 4 KiB (the largest tables: an entry a move) and of 64 KiB, at the sizes
// devbench.Sizes gives, four times in a row on one buffer
// (devbench.RunAgain), with the move tables sent each way SetTableUpload
// offers: staged (the default), kept (staged, no staging buffer destroyed)
// and queue (queue writes). Metrics: GB/s of the first and of the last
// measurement, x-first (the last's over the first's: 1 where the speed
// holds), and the same over the GPU timestamps where the device has them.
// A way whose speed holds where the default's falls tells where the GPU's
// time goes.
func BenchmarkTableUpload(b *testing.B) {
	d := testdevice.WebGPU(b, webgpu.Options{AdapterLimits: true})
	defer webgpu.SetTableUpload(d, "staged")
	sizes, err := devbench.Sizes()
	if err != nil {
		b.Fatal(err)
	}
	for _, mib := range sizes {
		for _, c := range devbench.Cases(mib << 20) {
			if c.Path != "compute" || c.SrcSkew != 0 || c.MoveBytes != 4<<10 && c.MoveBytes != 64<<10 {
				continue
			}
			for _, mode := range []string{"staged", "kept", "queue"} {
				b.Run(fmt.Sprintf("%dMiB/moves=%dKiB/%s", mib, c.MoveBytes>>10, mode), func(b *testing.B) {
					if err := webgpu.SetTableUpload(d, mode); err != nil {
						b.Fatal(err)
					}
					rs, err := devbench.RunAgain(d, c, b.N, 4)
					if err != nil {
						b.Fatal(err)
					}
					first, last := rs[0], rs[len(rs)-1]
					b.ReportMetric(first.GBps(), "GB/s-first")
					b.ReportMetric(last.GBps(), "GB/s-last")
					b.ReportMetric(last.GBps()/first.GBps(), "x-first")
					if first.Kernel > 0 && last.Kernel > 0 {
						b.ReportMetric(last.KernelGBps()/first.KernelGBps(), "x-first-kernel")
					}
				})
			}
		}
	}
}
