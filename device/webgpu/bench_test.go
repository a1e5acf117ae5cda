//go:build cgo

package webgpu

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
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
	d.queue.Submit()
	d.dev.Poll(true, nil)
	d.bury(true)
}

// BenchmarkKernelChunk measures the move kernels' throughput with table
// entries of 16, 32, 64 (the default, chunkBytes) and 128 KiB, on batches
// of moves of 64 KiB and of 1 MiB, upper half of a buffer to lower half in
// reverse order (devbench's compute cases), of the sizes GPUMEM_BENCH_MIB
// lists (default 64; "256,1024" on a GPU, with the adapter's limits).
// Batches are recorded back to back, enough to run about 20 ms, and
// submitted together; GB/s counts bytes read plus written over the wall
// time of the Wait after the submit (see internal/devbench's doc for how
// it compares with devbench's numbers), and where the device has a timer
// GB/s-kernel over the GPU time between a stamp before the batches and
// one after (devbench's KernelGBps). x-64KiB is the ratio to the default
// entry size on the same moves in the same run: what tuning chunkBytes
// would gain on this GPU.
func BenchmarkKernelChunk(b *testing.B) {
	d := newTestDevice(b, Options{AdapterLimits: true})
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
	defer func() { d.tables.chunk = 0 }()
	for _, mib := range sizes {
		total := mib << 20
		buf, err := d.CreateBuffer(device.BufferDesc{Label: "bench kernels", Size: 2 * total, Usage: device.CopySrc | device.CopyDst})
		if err != nil {
			b.Skipf("no buffer of %d MiB: %v", 2*mib, err)
		}
		for _, moveBytes := range []uint64{64 << 10, 1 << 20} {
			moves := make([]device.Move, total/moveBytes)
			for i := range moves {
				off := uint64(i) * moveBytes
				moves[i] = device.Move{Src: total + off, Dst: total - moveBytes - off, Size: moveBytes}
			}
			base := 0.0
			for _, chunk := range []uint64{64 << 10, 16 << 10, 32 << 10, 128 << 10} {
				b.Run(fmt.Sprintf("%dMiB/moves=%dKiB/chunk=%dKiB", mib, moveBytes>>10, chunk>>10), func(b *testing.B) {
					d.tables.chunk = chunk
					var kernel time.Duration
					run := func(batches int) time.Duration {
						var span device.Span
						if d.timer != nil {
							span.Begin = stamp(b, d)
						}
						for range batches {
							if err := d.MoveVia(MoveCompute, buf, moves); err != nil {
								b.Fatal(err)
							}
						}
						if d.timer != nil {
							span.End = stamp(b, d)
						}
						if err := d.Submit(); err != nil {
							b.Fatal(err)
						}
						t0 := time.Now()
						if err := d.Wait(); err != nil {
							b.Fatal(err)
						}
						wall := time.Since(t0)
						if d.timer != nil {
							k, ok, err := device.Elapsed(d.timer, span)
							if err != nil || !ok {
								b.Fatalf("no GPU time after Wait: %v", err)
							}
							kernel += k
						}
						return wall
					}
					one := run(1) // warm up: pipelines, first touch
					kernel = 0
					batches := int(min(max(20*time.Millisecond/max(one, time.Microsecond), 1), 64))
					var gpu time.Duration
					for range b.N {
						gpu += run(batches)
					}
					gbps := 2 * float64(total) * float64(batches*b.N) / gpu.Seconds() / 1e9
					if kernel > 0 {
						b.ReportMetric(2*float64(total)*float64(batches*b.N)/kernel.Seconds()/1e9, "GB/s-kernel")
					}
					if chunk == 64<<10 {
						base = gbps
					}
					b.ReportMetric(gbps, "GB/s")
					if base > 0 {
						b.ReportMetric(gbps/base, "x-64KiB")
					}
				})
			}
		}
		buf.Release()
	}
}

// stamp writes a timestamp with d's timer.
func stamp(b *testing.B, d *Device) device.Stamp {
	s, err := d.timer.Stamp()
	if err != nil {
		b.Fatal(err)
	}
	return s
}
