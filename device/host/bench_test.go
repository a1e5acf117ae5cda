package host_test

import (
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
)

// BenchmarkMove measures host Move throughput: bytes read plus written per
// second, for one move of each size class sliding over itself, and for
// batches of 1024 small moves (a compaction sweep's shape).
func BenchmarkMove(b *testing.B) {
	for _, c := range []struct {
		size  uint64
		batch int
	}{{4 << 10, 1}, {64 << 10, 1}, {1 << 20, 1}, {64 << 20, 1}, {4 << 10, 1024}, {64 << 10, 256}} {
		b.Run(fmt.Sprintf("size=%d/batch=%d", c.size, c.batch), func(b *testing.B) {
			d, err := host.New(host.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Release()
			span := uint64(c.batch)*c.size + c.size/2
			buf, err := d.CreateBuffer(device.BufferDesc{Size: span, Usage: device.CopySrc | device.CopyDst})
			if err != nil {
				b.Fatal(err)
			}
			// Each block slides down by half a block: a sweep.
			moves := make([]device.Move, c.batch)
			for i := range moves {
				off := uint64(i) * c.size
				moves[i] = device.Move{Src: off + c.size/2, Dst: off, Size: c.size}
			}
			b.SetBytes(int64(2 * c.size * uint64(c.batch)))
			b.ReportAllocs()
			for b.Loop() {
				if err := d.Move(buf, moves); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
