//go:build cgo

package webgpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
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

// BenchmarkMoveRecord measures the CPU time of recording one compaction
// sweep's batch (compactionMoves: 512 MiB, about 2,900 moves) with Move on the compute path:
// checking, planning, the table, bind groups and dispatches. The recorded
// work is dropped unsubmitted, so the benchmark runs as long as needed for
// a profile without the GPU moving a byte. ns/move is the figure the
// arena's Compact pays on top of its walk (arena's BenchmarkCompactCall
// measures both).
func BenchmarkMoveRecord(b *testing.B) {
	benchMoveRecord(b, recordSame)
}

// BenchmarkMoveRecordNewBuffer is BenchmarkMoveRecord with the batch in a
// new buffer each time (made and released untimed), as arena's
// BenchmarkCompactCall records it: whatever the device makes once per
// buffer (bind groups) counts in every batch.
func BenchmarkMoveRecordNewBuffer(b *testing.B) {
	benchMoveRecord(b, recordNewBuffer)
}

// BenchmarkMoveRecordCold is BenchmarkMoveRecord with the CPU's caches
// evicted (64 MiB of other memory written, untimed) before each batch,
// as a frame's other work, or arena's BenchmarkCompactCall making its
// next arena, would leave them: what recording costs on memory that is
// not in cache.
func BenchmarkMoveRecordCold(b *testing.B) {
	benchMoveRecord(b, recordCold)
}

// BenchmarkMoveRecordCycle is BenchmarkMoveRecordNewBuffer with every
// batch submitted and waited for (untimed): the staging buffers, table
// buffer and encoder go round as in a frame loop, and the GPU's work on
// the last batch ran before the next is recorded. Against NewBuffer in
// the same run, it shows what the cycle adds to recording.
func BenchmarkMoveRecordCycle(b *testing.B) {
	benchMoveRecord(b, recordCycle)
}

// How benchMoveRecord runs its batches.
const (
	recordSame      = iota // one buffer, the work dropped
	recordNewBuffer        // a new buffer a batch, the work dropped
	recordCold             // one buffer, caches evicted, the work dropped
	recordCycle            // a new buffer a batch, submitted and waited for
)

func benchMoveRecord(b *testing.B, mode int) {
	d := newTestDevice(b, Options{AdapterLimits: true})
	const total = 512 << 20
	desc := device.BufferDesc{Label: "bench sweep", Size: total, Usage: device.CopySrc | device.CopyDst}
	buf, err := d.CreateBuffer(desc)
	if err != nil {
		b.Skipf("no buffer of %d bytes: %v", total, err)
	}
	defer func() {
		if buf != nil {
			buf.Release()
		}
	}()
	moves := compactionMoves(rand.New(rand.NewPCG(7, 8)))
	if err := d.MoveVia(MoveCompute, buf, moves); err != nil {
		b.Fatal(err)
	}
	if err := d.Wait(); err != nil {
		b.Fatal(err)
	}
	var evict []byte
	if mode == recordCold {
		evict = make([]byte, 64<<20)
	}
	var rec time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		switch mode {
		case recordNewBuffer, recordCycle:
			b.StopTimer()
			// The buffer released lives until a fence marked after
			// it completes: without one they pile up on the device.
			buf.Release()
			if _, err := d.Fence(); err != nil {
				b.Fatal(err)
			}
			if err := d.Wait(); err != nil {
				b.Fatal(err)
			}
			if buf, err = d.CreateBuffer(desc); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		case recordCold:
			b.StopTimer()
			for i := 0; i < len(evict); i += 64 {
				evict[i]++
			}
			b.StartTimer()
		}
		t0 := time.Now()
		if err := d.MoveVia(MoveCompute, buf, moves); err != nil {
			b.Fatal(err)
		}
		rec += time.Since(t0)
		if mode != recordCycle {
			d.dropPending()
			continue
		}
		b.StopTimer()
		if _, err := d.Fence(); err != nil {
			b.Fatal(err)
		}
		if err := d.Wait(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(rec.Nanoseconds())/float64(b.N*len(moves)), "ns/move")
	b.ReportMetric(float64(len(moves)), "moves/op")
}

// dropPending releases the pending encoder unsubmitted, submits the
// queue's pending writes (the tables) alone, waits, and destroys the
// buffers the dropped work would have used (benchmarks of recording only).
func (d *Device) dropPending() {
	if d.enc != nil {
		d.enc.Release()
		d.enc = nil
	}
	d.texCopy = pendingTexCopy{}
	d.queue.Submit()
	d.dev.Poll(true, nil)
	d.bury(true)
}

// BenchmarkSubmitBeside measures what a frame's Submit costs its caller
// while the device makes or frees large buffers on another goroutine, as
// PrepareBuffer and reap do (32 buffers of 256 MiB, made one after
// another, or freed one after another; "alone" has none): each op records
// a 64 KiB copy and submits it. Metrics: max-ms, the slowest Submit, and
// us/submit. Against "alone" in the same run it shows how much of the
// background work a submit waits for.
func BenchmarkSubmitBeside(b *testing.B) {
	for _, bg := range []string{"alone", "create", "destroy"} {
		b.Run(bg, func(b *testing.B) {
			d := newTestDevice(b, Options{})
			const size = 64 << 10
			desc := device.BufferDesc{Size: size, Usage: device.CopySrc | device.CopyDst}
			src, err := d.CreateBuffer(desc)
			if err != nil {
				b.Fatal(err)
			}
			dst, err := d.CreateBuffer(desc)
			if err != nil {
				b.Fatal(err)
			}
			big := device.BufferDesc{Size: min(256<<20, d.limits.MaxBufferSize), Usage: device.CopySrc | device.CopyDst}
			var bufs []*wgpu.Buffer
			if bg == "destroy" {
				for range 32 {
					wb, _, err := d.createRaw(big)
					if err != nil {
						b.Fatal(err)
					}
					bufs = append(bufs, wb)
				}
			}
			done := make(chan []*wgpu.Buffer)
			b.ResetTimer()
			go func() {
				switch bg {
				case "create":
					var made []*wgpu.Buffer
					for range 32 {
						wb, _, err := d.createRaw(big)
						if err != nil {
							break
						}
						made = append(made, wb)
					}
					done <- made
				case "destroy":
					for _, wb := range bufs {
						wb.Destroy()
						wb.Release()
					}
					done <- nil
				default:
					done <- nil
				}
			}()
			var worst, total time.Duration
			for range b.N {
				if err := d.CopyBuffer(src, 0, dst, 0, size); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if err := d.Submit(); err != nil {
					b.Fatal(err)
				}
				t := time.Since(t0)
				worst, total = max(worst, t), total+t
			}
			b.StopTimer()
			for _, wb := range <-done {
				wb.Destroy()
				wb.Release()
			}
			b.ReportMetric(float64(worst.Microseconds())/1e3, "max-ms")
			b.ReportMetric(float64(total.Microseconds())/float64(b.N), "us/submit")
		})
	}
}

// BenchmarkUploadCopy times what one core takes to hand the GPU 4 MiB,
// copied from successive stretches of 64 MiB of memory in pieces of 64
// KiB or 4 MiB, three ways: "mapped", into a mapped MapWrite buffer (a
// belt's chunk, as FillBuffer writes it, the mapping kept); "queue", one
// queue write a piece (WriteBuffer to a CopyDst buffer: the backend
// copies into a staging buffer of its own and records the GPU's copy;
// every 64 MiB is submitted and waited for, untimed); and "memory", into
// memory of the process, the core's own copy speed. b.SetBytes makes
// each case's MB/s its speed: the memory the backend maps for MapWrite
// buffers decides the first.
func BenchmarkUploadCopy(b *testing.B) {
	const n, stretch = 4 << 20, 16
	src := make([]byte, stretch*n)
	for i := range src {
		src[i] = byte(i * 7)
	}
	d := newTestDevice(b, Options{})
	mapped, err := d.CreateBuffer(device.BufferDesc{Label: "bench staging", Size: 2 * n, Usage: device.MapWrite | device.CopySrc})
	if err != nil {
		b.Fatal(err)
	}
	defer mapped.Release()
	dst, err := d.CreateBuffer(device.BufferDesc{Label: "bench queue writes", Size: stretch * n, Usage: device.CopyDst})
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Release()
	mem := make([]byte, 2*n)
	pieces := func(to, from []byte, piece int) {
		for o := 0; o < len(from); o += piece {
			copy(to[o:], from[o:o+piece])
		}
	}
	for _, piece := range []int{64 << 10, n} {
		for _, c := range []struct {
			name string
			copy func(b *testing.B, i int, from []byte) error
		}{
			{"mapped", func(b *testing.B, i int, from []byte) error {
				return d.FillBuffer(mapped, uint64(i%2)*n, n, func(to []byte) { pieces(to, from, piece) })
			}},
			{"queue", func(b *testing.B, i int, from []byte) error {
				at := uint64(i%stretch) * n
				for o := 0; o < n; o += piece {
					if err := d.WriteBuffer(dst, at+uint64(o), from[o:o+piece]); err != nil {
						return err
					}
				}
				if i%stretch == stretch-1 {
					b.StopTimer()
					defer b.StartTimer()
					return d.Wait()
				}
				return nil
			}},
			{"memory", func(b *testing.B, i int, from []byte) error {
				pieces(mem[i%2*n:], from, piece)
				return nil
			}},
		} {
			b.Run(fmt.Sprintf("%s/%dKiB", c.name, piece>>10), func(b *testing.B) {
				b.SetBytes(n)
				i := 0
				for b.Loop() {
					if err := c.copy(b, i, src[i%stretch*n:][:n]); err != nil {
						b.Fatal(err)
					}
					i++
				}
				if err := d.Wait(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
