// Package devbench measures the webgpu device's move throughput: the
// cases `gpumem devbench` runs and its benchmarks (BenchmarkMoves here)
// share.
//
// Throughput counts the bytes a move reads plus the bytes it writes (twice
// its size), over the GPU time of the batch: from the submit to the end of
// the work (Wait), with enough batches in one submit that the cost of
// submitting and waiting does not count. Bytes the backend moves on its
// own (a trip through scratch) are not counted: the number says how fast the caller's data
// moves. Recording time is the CPU time of the Move or CopyBuffer call
// itself: validation, planning, writing the table, encoding.
//
// Where the device has a GPU timer (device.Timer), each submit's batches
// are also bracketed by two timestamps: Kernel is the GPU's own time for
// the work, without the submit, the wake-up of the waiting CPU and the
// queue's idle time, which the wall-clock GPU time includes. Where the
// two disagree, the difference is the harness's, not the kernels'.
//
// # Which number means what
//
// Every throughput in the project's benchmarks counts bytes read plus
// bytes written (twice the bytes moved). They differ in the time they
// divide by:
//
//   - kernel time, from GPU timestamps around the recorded work, the same
//     quantity everywhere: Result.KernelGBps here, which `gpumem devbench`
//     prints as "kernel GB/s" (JSON kernel_gb_per_s) and BenchmarkMoves
//     reports as GB/s-kernel; device/webgpu's BenchmarkKernelChunk
//     GB/s-kernel; arena's BenchmarkSweepThroughput kern-GB/s (one
//     compaction batch, its table upload included).
//   - wall time of the wait for many batches in one submit: Result.GBps
//     here ("GB/s", gb_per_s; BenchmarkMoves GB/s), timed around Wait,
//     which submits, so the submit's CPU time counts; BenchmarkKernelChunk
//     GB/s, timed around Wait after a separate Submit, so it does not.
//     With about 20 ms of batches a submit, both stay within a few percent
//     of the kernel time.
//   - end to end for one batch: arena's BenchmarkSweepThroughput
//     sweep-GB/s, from the Compact call to the return of the Wait after
//     it (recording, submit, GPU, fence). sweep/kern is its ratio to the
//     kernel time of the same batch; its submit-ms, kernel-ms and idle-ms
//     say where the rest goes.
package devbench

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
)

// Case is one measured operation.
type Case struct {
	// Name says what is measured, e.g. "copyBufferToBuffer 256 MiB" or
	// "moves of 4 KiB".
	Name string
	// Path is "buffer" (one copyBufferToBuffer between two buffers),
	// "copy" (moves within one buffer as copyBufferToBuffer through
	// scratch), "compute" (moves in the move kernels), or "sweep"
	// (compute, on blocks that slide over themselves, so every byte goes
	// through scratch).
	Path string
	// MoveBytes is the size of each move; Moves is the number of moves in
	// the batch. A plain copy is one move.
	MoveBytes uint64
	Moves     int
	// SrcSkew shifts every move's source by this many bytes (a multiple
	// of 4), so that source and destination differ in alignment.
	SrcSkew uint64
}

// Result is the measurement of one Case: the median over the
// iterations.
type Result struct {
	Case
	// Bytes is read plus written per batch: 2 × Moves × MoveBytes.
	Bytes uint64
	// Record is the CPU time to record one batch.
	Record time.Duration
	// GPU is the time from submit to completion of one batch: of
	// Batches batches recorded back to back and submitted together,
	// divided by Batches.
	GPU time.Duration
	// Batches is the number of batches per submit.
	Batches int
	// Kernel is the GPU time of one batch from timestamps: from one
	// written before the submit's first batch to one after its last,
	// divided by Batches. It is 0 where the device has no timer.
	Kernel time.Duration
}

// benchTarget is how long the batches of one submit should run on the
// GPU, so that the cost of submitting and waiting (tens of microseconds)
// is small beside it.
const benchTarget = 20 * time.Millisecond

// GBps is the throughput in GB/s (10^9 bytes a second).
func (r Result) GBps() float64 {
	if r.GPU <= 0 {
		return 0
	}
	return float64(r.Bytes) / r.GPU.Seconds() / 1e9
}

// KernelGBps is the throughput over the timestamps' GPU time (Kernel),
// in GB/s; 0 where the device has no timer.
func (r Result) KernelGBps() float64 {
	if r.Kernel <= 0 {
		return 0
	}
	return float64(r.Bytes) / r.Kernel.Seconds() / 1e9
}

// RecordPerMove is the recording time per move.
func (r Result) RecordPerMove() time.Duration {
	return r.Record / time.Duration(max(r.Moves, 1))
}

// Cases returns the standard cases for batches of total bytes: one
// copyBufferToBuffer of total bytes, then moves of 4 KiB, 64 KiB, 1 MiB and
// 64 MiB (as many as fit in total) through the copy path and through the
// compute path, then moves of 64 KiB whose source is 4 bytes off 16-byte
// alignment, and a sweep of 64 KiB blocks, both through compute.
func Cases(total uint64) []Case {
	cases := []Case{{Name: "copyBufferToBuffer " + sizeName(total), Path: "buffer", MoveBytes: total, Moves: 1}}
	for _, path := range []string{"copy", "compute"} {
		for _, s := range []uint64{4 << 10, 64 << 10, 1 << 20, 64 << 20} {
			if s > total {
				continue
			}
			cases = append(cases, Case{Name: "moves of " + sizeName(s), Path: path, MoveBytes: s, Moves: int(total / s)})
		}
	}
	if total >= 64<<10 {
		n := int(total / (64 << 10))
		cases = append(cases,
			Case{Name: "moves of 64 KiB, source +4 B", Path: "compute", MoveBytes: 64 << 10, Moves: n, SrcSkew: 4},
			Case{Name: "sweep of " + sizeName(64<<10), Path: "sweep", MoveBytes: 64 << 10, Moves: n})
	}
	return cases
}

func sizeName(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// Run measures c on d: one warm-up batch, then iters submits of Batches
// batches each; the result holds the medians. It needs a buffer of twice the batch's bytes (one for
// a plain copy, plus its destination).
func Run(d *webgpu.Device, c Case, iters int) (Result, error) {
	res := Result{Case: c, Bytes: 2 * c.MoveBytes * uint64(c.Moves)}
	total := c.MoveBytes * uint64(c.Moves)
	var run func() error
	switch {
	case c.Path == "buffer":
		src, err := d.CreateBuffer(device.BufferDesc{Label: "bench source", Size: total, Usage: device.CopySrc | device.CopyDst})
		if err != nil {
			return res, err
		}
		defer src.Release()
		dst, err := d.CreateBuffer(device.BufferDesc{Label: "bench destination", Size: total, Usage: device.CopySrc | device.CopyDst})
		if err != nil {
			return res, err
		}
		defer dst.Release()
		run = func() error { return d.CopyBuffer(src, 0, dst, 0, total) }
	default:
		buf, err := d.CreateBuffer(device.BufferDesc{Label: "bench moves", Size: 2*total + (c.SrcSkew+255)/256*256, Usage: device.CopySrc | device.CopyDst})
		if err != nil {
			return res, err
		}
		defer buf.Release()
		path := webgpu.MoveCompute
		if c.Path == "copy" {
			path = webgpu.MoveCopy
		}
		moves := make([]device.Move, c.Moves)
		for i := range moves {
			off := uint64(i) * c.MoveBytes
			if c.Path == "sweep" {
				// Each block slides down by a quarter of its size,
				// over itself: the compaction sweep's worst case.
				moves[i] = device.Move{Src: c.MoveBytes/4 + off, Dst: off, Size: c.MoveBytes}
				continue
			}
			// Upper half to lower half, in reverse order so that
			// neighbours in the batch are not neighbours in memory.
			moves[i] = device.Move{Src: total + off + c.SrcSkew, Dst: total - c.MoveBytes - off, Size: c.MoveBytes}
		}
		run = func() error { return d.MoveVia(path, buf, moves) }
	}
	// Warm up (pipelines, scratch, first-touch of the buffers) and time
	// one batch. The fence ends the previous case's frame, so that the
	// buffers it released are freed now (device.Buffer.Release).
	if _, err := d.Fence(); err != nil {
		return res, err
	}
	if err := d.Wait(); err != nil {
		return res, err
	}
	if err := run(); err != nil {
		return res, err
	}
	t0 := time.Now()
	if err := d.Wait(); err != nil {
		return res, err
	}
	one := time.Since(t0)
	// Submitting and waiting costs tens of microseconds, as much as a
	// whole batch on a fast GPU: record enough batches back to back that
	// they run for about benchTarget, and divide.
	res.Batches = int(min(max(benchTarget/max(one, time.Microsecond), 1), 64))
	tm, timed := d.Timer()
	var records, gpus []time.Duration
	var spans []device.Span
	for range iters {
		var span device.Span
		if timed {
			// Stamped before t0: the stamp's own recording is not the
			// batch's.
			s, err := tm.Stamp()
			if err != nil {
				return res, err
			}
			span.Begin = s
		}
		t0 := time.Now()
		for range res.Batches {
			if err := run(); err != nil {
				return res, err
			}
		}
		t1 := time.Now()
		if timed {
			s, err := tm.Stamp()
			if err != nil {
				return res, err
			}
			span.End = s
			spans = append(spans, span)
		}
		tw := time.Now()
		if err := d.Wait(); err != nil {
			return res, err
		}
		t2 := time.Now()
		records = append(records, t1.Sub(t0)/time.Duration(res.Batches))
		gpus = append(gpus, t2.Sub(tw)/time.Duration(res.Batches))
	}
	res.Record, res.GPU = median(records), median(gpus)
	var kernels []time.Duration
	for _, s := range spans {
		// After Wait every stamp reads (device.Timer's contract).
		k, ok, err := device.Elapsed(tm, s)
		if err != nil {
			return res, err
		}
		if ok {
			kernels = append(kernels, k/time.Duration(res.Batches))
		}
	}
	res.Kernel = median(kernels)
	return res, nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
