// Package devbench measures the webgpu device's move throughput: the one
// harness that `gpumem devbench` and the benchmarks (BenchmarkMoves here,
// device/webgpu's BenchmarkKernelChunk) run, so that their numbers agree.
//
// Throughput counts the bytes a move reads plus the bytes it writes (twice
// its size). Bytes the backend moves on its own (a trip through scratch)
// are not counted: the number says how fast the caller's data moves.
//
// A measurement records Batches batches back to back, enough to run about
// benchTarget on the GPU, then submits them (Submit) and waits for them
// (Wait). Three times come out of it, each per batch:
//
//   - Record: the CPU time of the Move or CopyBuffer call itself
//     (validation, planning, writing the table, encoding);
//   - Submit: the CPU time of the Submit call, in which wgpu validates and
//     hands the batches to the driver;
//   - GPU: the wall-clock time of the Wait after the Submit, to the end of
//     the work.
//
// GBps is over GPU. Where the device has a GPU timer (device.Timer), two
// timestamps bracket each submit's batches: Kernel is the GPU's own time
// for the work, without the wake-up of the waiting CPU and the queue's
// idle time, and KernelGBps is over it; `gpumem devbench` prints it as
// "kernel GB/s", the benchmarks as GB/s-kernel. arena's
// BenchmarkSweepThroughput measures one batch end to end instead (from the
// Compact call to the return of the Wait after it) and compares it with
// its own kernel time.
//
// A GPU lowers its clocks when it idles, and recording a submit's batches
// can take the CPU many times longer than the GPU takes to run them
// (262,144 moves of 4 KiB a batch: about eight times on an H100). Measured
// plainly, the GPU would idle most of the time, its clock would fall, and
// each measurement would read a lower speed than the one before: the
// figure would depend on what the process measured earlier. So, on a GPU,
// for a case whose batch takes several times longer to record than to run
// (heatRatio), while the CPU records a submit's batches the harness keeps
// the GPU busy with copies between two buffers of its own (the heat),
// sized to last about as long as the recording, waits for them to finish,
// and only then submits the batches, which start on a GPU that has not
// idled. And on a GPU, every case's measured submits follow a settle:
// heats back to back for settleTime, after the setup that may have left
// the GPU idle long enough for its clock to fall. None of the heat's
// time is in a result.
//
// A case's buffers are made once and its first batch runs untimed: wgpu
// clears a new buffer's memory on its first use, and the pipelines and
// scratch are made on the device's first move, so neither counts in the
// batches that size a submit or in the measured ones.
package devbench

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
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
	// Submit is the CPU time of the Submit of Batches batches, divided by
	// Batches.
	Submit time.Duration
	// GPU is the wall-clock time from the return of the Submit to the end
	// of the work, of Batches batches recorded back to back and submitted
	// together, divided by Batches.
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

// Run measures c on d: a warm-up batch, one batch timed alone to size a
// submit (Batches), then iters submits of Batches batches each; the result
// holds the medians. It needs a buffer of twice the batch's bytes (one for
// a plain copy, plus its destination).
func Run(d *webgpu.Device, c Case, iters int) (Result, error) {
	rs, err := RunAgain(d, c, iters, 1)
	if err != nil {
		return Result{Case: c}, err
	}
	return rs[0], nil
}

// RunAgain is Run done times over in a row on the same buffers, a result
// each time: a case whose speed does not hold from one to the next says
// that the device's state (what earlier batches left behind) changes what
// a measurement reads.
func RunAgain(d *webgpu.Device, c Case, iters, times int) ([]Result, error) {
	res := Result{Case: c, Bytes: 2 * c.MoveBytes * uint64(c.Moves)}
	total := c.MoveBytes * uint64(c.Moves)
	var run func() error
	switch {
	case c.Path == "buffer":
		src, err := d.CreateBuffer(device.BufferDesc{Label: "bench source", Size: total, Usage: device.CopySrc | device.CopyDst})
		if err != nil {
			return nil, err
		}
		defer src.Release()
		dst, err := d.CreateBuffer(device.BufferDesc{Label: "bench destination", Size: total, Usage: device.CopySrc | device.CopyDst})
		if err != nil {
			return nil, err
		}
		defer dst.Release()
		run = func() error { return d.CopyBuffer(src, 0, dst, 0, total) }
	default:
		buf, err := d.CreateBuffer(device.BufferDesc{Label: "bench moves", Size: 2*total + (c.SrcSkew+255)/256*256, Usage: device.CopySrc | device.CopyDst})
		if err != nil {
			return nil, err
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
	var rs []Result
	for range times {
		r, err := measure(d, res, run, iters)
		if err != nil {
			return rs, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// measure times run, one batch of res's case, as Run says, and fills in
// res's times.
func measure(d *webgpu.Device, res Result, run func() error, iters int) (Result, error) {
	// Warm up (pipelines, scratch, wgpu's clear of the new buffers on
	// their first use), then time one batch alone. The fence ends the
	// previous case's frame, so that the buffers it released are freed now
	// (device.Buffer.Release).
	if _, err := d.Fence(); err != nil {
		return res, err
	}
	if err := run(); err != nil {
		return res, err
	}
	if err := d.Wait(); err != nil {
		return res, err
	}
	t0 := time.Now()
	if err := run(); err != nil {
		return res, err
	}
	recordOne := time.Since(t0)
	_, one, err := submitWait(d)
	if err != nil {
		return res, err
	}
	// Submitting and waiting costs tens of microseconds, as much as a
	// whole batch on a fast GPU: record enough batches back to back that
	// they run for about benchTarget, and divide.
	res.Batches = int(min(max(benchTarget/max(one, time.Microsecond), 1), 64))
	per := time.Duration(res.Batches)
	tm, timed := d.Timer()
	h, err := newHeater(d)
	if err != nil {
		return res, err
	}
	defer h.release()
	heat := recordOne > heatRatio*one // else the GPU is busy most of the time
	if err := h.settle(); err != nil {
		return res, err
	}
	var records, submits, gpus []time.Duration
	var spans []device.Span
	for range iters {
		var fence uint64
		if heat {
			if fence, err = h.start(); err != nil {
				return res, err
			}
		}
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
		record := time.Since(t0)
		if timed {
			s, err := tm.Stamp()
			if err != nil {
				return res, err
			}
			span.End = s
			spans = append(spans, span)
		}
		if heat {
			if err := h.finish(fence, record); err != nil {
				return res, err
			}
		}
		submit, gpu, err := submitWait(d)
		if err != nil {
			return res, err
		}
		records = append(records, record/per)
		submits = append(submits, submit/per)
		gpus = append(gpus, gpu/per)
	}
	res.Record, res.Submit, res.GPU = median(records), median(submits), median(gpus)
	var kernels []time.Duration
	for _, s := range spans {
		// After Wait every stamp reads (device.Timer's contract).
		k, ok, err := device.Elapsed(tm, s)
		if err != nil {
			return res, err
		}
		if ok {
			kernels = append(kernels, k/per)
		}
	}
	res.Kernel = median(kernels)
	return res, nil
}

// heater keeps a GPU busy while the CPU records (see the package doc):
// copies of heatBytes from src to dst, as many as it takes to last about
// as long as a recording. A nil heater heats nothing: on a CPU adapter
// the "GPU" is the processor that records.
type heater struct {
	d        *webgpu.Device
	src, dst device.Buffer
	copies   int // the copies of the next heat
}

// heatRatio is how many times longer than it runs a batch must take to
// record for the harness to heat the GPU: well past the noise of timing
// one batch, so that cases whose GPU is busy most of the time run as
// they always did.
const heatRatio = 4

// heatBytes is the size of one copy of the heat: a few tens of
// microseconds on a large GPU, so that a heat's length is fine-grained.
const heatBytes = 32 << 20

// maxHeatCopies bounds a heat: seconds of copies on a large GPU.
const maxHeatCopies = 1 << 16

// newHeater returns a heater on d, nil on a CPU adapter.
func newHeater(d *webgpu.Device) (*heater, error) {
	if d.Info().Type == "cpu" {
		return nil, nil
	}
	h := &heater{d: d, copies: 16}
	var err error
	if h.src, err = d.CreateBuffer(device.BufferDesc{Label: "bench heat source", Size: heatBytes, Usage: device.CopySrc}); err != nil {
		return nil, err
	}
	if h.dst, err = d.CreateBuffer(device.BufferDesc{Label: "bench heat destination", Size: heatBytes, Usage: device.CopyDst}); err != nil {
		h.src.Release()
		return nil, err
	}
	return h, nil
}

// start records the heat's copies and submits them; it returns their
// fence.
func (h *heater) start() (uint64, error) {
	if h == nil {
		return 0, nil
	}
	for range h.copies {
		if err := h.d.CopyBuffer(h.src, 0, h.dst, 0, heatBytes); err != nil {
			return 0, err
		}
	}
	return h.d.Fence()
}

// finish waits for the heat of fence to end, after a recording that took
// record, and sizes the next heat from how it went (nextCopies).
func (h *heater) finish(fence uint64, record time.Duration) error {
	if h == nil {
		return nil
	}
	t0 := time.Now()
	spun := false
	for {
		done, err := h.d.Completed()
		if err != nil {
			return err
		}
		if done >= fence {
			break
		}
		spun = true
	}
	h.copies = nextCopies(h.copies, !spun, time.Since(t0), record)
	return nil
}

// nextCopies sizes the heat after one of copies copies, which had ended
// by the end of a recording that took record (ended) or was waited for
// for wait after it: twice as many when it had ended (it was short, by an
// unknown margin), fewer when the wait was more than a tenth of the
// recording (so that the next lasts about record), as many otherwise.
func nextCopies(copies int, ended bool, wait, record time.Duration) int {
	switch {
	case ended:
		return min(2*copies, maxHeatCopies)
	case 10*wait > record:
		return max(int(float64(copies)*float64(record)/float64(record+wait)), 1)
	}
	return copies
}

// settleTime is how long settle keeps a GPU busy: longer than the
// clock takes to climb back from an idle level.
const settleTime = 300 * time.Millisecond

// settle keeps the GPU busy with heats, one after another, for
// settleTime, so that the measured submits that follow find its clock at
// its busy level whatever the process did before: the setup of a case
// (its buffers, the moves, the warm-up) can leave a GPU idle for a
// second, long enough for its clock to fall.
func (h *heater) settle() error {
	if h == nil {
		return nil
	}
	for t0 := time.Now(); time.Since(t0) < settleTime; {
		if _, err := h.start(); err != nil {
			return err
		}
		if err := h.d.Wait(); err != nil {
			return err
		}
	}
	return nil
}

func (h *heater) release() {
	if h != nil {
		h.src.Release()
		h.dst.Release()
	}
}

// submitWait submits d's recorded work and waits for it, and returns the
// CPU time of the Submit and the time of the Wait after it.
func submitWait(d *webgpu.Device) (submit, wait time.Duration, err error) {
	t0 := time.Now()
	if err := d.Submit(); err != nil {
		return 0, 0, err
	}
	t1 := time.Now()
	if err := d.Wait(); err != nil {
		return 0, 0, err
	}
	return t1.Sub(t0), time.Since(t1), nil
}

// Bench runs c on d for a benchmark, b.N submits after the warm-up (Run),
// and reports the result: GB/s, GB/s-kernel and ms-kernel/batch where the
// device has a timer, µs-record/batch, µs-submit/batch, and batches/submit.
func Bench(b *testing.B, d *webgpu.Device, c Case) Result {
	b.Helper()
	r, err := Run(d, c, b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r.GBps(), "GB/s")
	if r.Kernel > 0 {
		b.ReportMetric(r.KernelGBps(), "GB/s-kernel")
		b.ReportMetric(float64(r.Kernel.Nanoseconds())/1e6, "ms-kernel/batch")
	}
	b.ReportMetric(float64(r.Record.Nanoseconds())/1e3, "µs-record/batch")
	b.ReportMetric(float64(r.Submit.Nanoseconds())/1e3, "µs-submit/batch")
	b.ReportMetric(float64(r.Batches), "batches/submit")
	return r
}

// Sizes returns the batch sizes in MiB that the benchmarks measure:
// GPUMEM_BENCH_MIB's comma-separated list (e.g. "256,1024" on a GPU),
// else 64, small enough for a software driver.
func Sizes() ([]uint64, error) {
	env := os.Getenv("GPUMEM_BENCH_MIB")
	if env == "" {
		return []uint64{64}, nil
	}
	var sizes []uint64
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 32)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("GPUMEM_BENCH_MIB=%q: want MiB counts like 256,1024", env)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
