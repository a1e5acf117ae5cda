//go:build cgo

package webgpu

import (
	"testing"
	"time"

	"github.com/gpumem/gpumem/device"
)

// BenchmarkWriteBuffer compares gpumem's WriteBuffer with the binding's
// own queue.WriteBuffer on the same buffer, writes of 64 bytes at
// successive offsets, in alternating blocks of 1,024 writes (each side
// submits once a block, so neither piles up pending writes). Metrics:
// ns a write on each side, and their ratio (x-binding; the goal is
// at most 1.3).
func BenchmarkWriteBuffer(b *testing.B) {
	const block, size = 1024, 64
	d := newTestDevice(b, Options{})
	buf, err := d.CreateBuffer(device.BufferDesc{Label: "bench writes", Size: block * size, Usage: device.CopyDst | device.CopySrc})
	if err != nil {
		b.Fatal(err)
	}
	wb, err := d.RawBuffer(buf)
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, size)
	var ours, theirs time.Duration
	b.ResetTimer()
	gpumem := func() time.Duration {
		t0 := time.Now()
		for i := range block {
			if err := d.WriteBuffer(buf, uint64(i*size), data); err != nil {
				b.Fatal(err)
			}
		}
		if err := d.Submit(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	binding := func() time.Duration {
		t0 := time.Now()
		for i := range block {
			if err := d.queue.TryWriteBuffer(wb, uint64(i*size), data); err != nil {
				b.Fatal(err)
			}
		}
		d.queue.Submit()
		d.dev.Poll(false, nil)
		return time.Since(t0)
	}
	for n := 0; n < b.N; n += block {
		// Alternate which side goes first.
		if n/block%2 == 0 {
			ours += gpumem()
			theirs += binding()
		} else {
			theirs += binding()
			ours += gpumem()
		}
	}
	writes := float64((b.N + block - 1) / block * block)
	b.ReportMetric(float64(ours.Nanoseconds())/writes, "ns/write")
	b.ReportMetric(float64(theirs.Nanoseconds())/writes, "ns/write-binding")
	b.ReportMetric(float64(ours)/float64(theirs), "x-binding")
}
