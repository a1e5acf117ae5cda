//go:build js

package webgpu

import (
	"fmt"
	"syscall/js"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// Fences in the browser: watch asks queue.onSubmittedWorkDone() for a
// promise per fence; a single Go callback (report) records each promise's
// settling. Promises resolve in submission order on the JavaScript event
// loop, which runs only while every goroutine of the program is blocked:
// pollQueue therefore blocks once on a message posted to a MessageChannel
// (the event loop's next task, without setTimeout's 4 ms clamp), so
// Completed sees every promise settled before that task.

// fenceState is the device's fence bookkeeping.
type fenceState struct {
	last uint64 // last fence returned by Fence
	done uint64 // newest fence known finished; done <= last
	// settled is the newest fence whose promise resolved; failed is set
	// when one was rejected (the device is lost).
	settled uint64
	failed  bool
	// report is the callback every work-done promise calls with its fence
	// and whether it resolved; woke is the one pollQueue's message calls.
	report, woke js.Func
	// wake receives when the event loop ran a task for pollQueue.
	wake chan struct{}
	// invalid is the message of the first submission a validation scope
	// caught; refused records it.
	invalid string
	refused js.Func
	// pending counts the promises whose settling will call report or
	// refused; free releases the callbacks only when it is 0.
	pending int
}

// fenceJS wires a work-done promise to a Go callback; yieldJS posts a
// message whose handler calls back, so the event loop runs a task first.
var (
	fenceJS = js.Global().Get("Function").New("queue", "fence", "report",
		"queue.onSubmittedWorkDone().then(() => report(fence, true), () => report(fence, false));")
	yieldJS = js.Global().Get("Function").New("woke",
		"const c = new MessageChannel(); c.port1.onmessage = () => { c.port1.close(); woke(); }; c.port2.postMessage(0);")
)

func (f *fenceState) init(*Device) {
	f.wake = make(chan struct{}, 1)
	f.report = js.FuncOf(func(_ js.Value, args []js.Value) any {
		f.pending--
		fence := uint64(args[0].Float())
		if !args[1].Bool() {
			f.failed = true
		} else if fence > f.settled {
			f.settled = fence
		}
		return nil
	})
	f.refused = js.FuncOf(func(_ js.Value, args []js.Value) any {
		f.pending--
		if e := args[0]; e.Truthy() && f.invalid == "" {
			f.invalid = e.Get("message").String()
		}
		return nil
	})
	f.woke = js.FuncOf(func(js.Value, []js.Value) any {
		select {
		case f.wake <- struct{}{}:
		default:
		}
		return nil
	})
}

// watch asks the queue to report fence once everything submitted so far
// has finished.
func (f *fenceState) watch(d *Device, fence uint64) {
	f.pending++
	fenceJS.Invoke(jsOf(d.queue), float64(fence), f.report)
}

// signalled returns the newest fence whose promise resolved, and whether
// one was rejected.
func (f *fenceState) signalled() (fence uint64, failed bool) { return f.settled, f.failed }

// free releases the callbacks once no promise can call them: after
// waitIdle every work-done promise has settled, but a submission's error
// scope may still be popping, and calling a released js.Func panics. With
// promises pending the callbacks are left to the garbage collector with
// the page.
func (f *fenceState) free() {
	if f.pending != 0 {
		return
	}
	f.report.Release()
	f.refused.Release()
	f.woke.Release()
}

// pollQueue gives the event loop one turn so that settled work-done
// promises are reported; it cannot tell whether the queue is empty and
// reports false.
func (d *Device) pollQueue() bool {
	yieldJS.Invoke(d.fences.woke)
	<-d.fences.wake
	return false
}

// waitIdle blocks until the queue has finished all submitted work: until
// a new work-done promise, which resolves after every earlier one,
// settles.
func (d *Device) waitIdle() {
	await(jsOf(d.queue).Call("onSubmittedWorkDone"))
}

// submitJS submits command buffers inside a validation error scope and
// hands the scope's result (a GPUError or null) to refused when it pops.
var submitJS = js.Global().Get("Function").New("device", "queue", "cbs", "refused",
	`device.pushErrorScope("validation"); queue.submit(cbs); device.popErrorScope().then(refused, () => refused(null));`)

// submit submits cbs to the queue. The browser validates a submission on
// its own time and reports a refused one to an error scope: submit wraps
// each in a validation scope whose result arrives through the event loop,
// and the next Completed or Wait returns the first refusal as an error
// (natively an invalid submission aborts the process instead).
func (d *Device) submit(cbs ...*wgpu.CommandBuffer) {
	arr := make([]any, len(cbs))
	for i, cb := range cbs {
		arr[i] = jsOf(cb)
	}
	d.fences.pending++
	submitJS.Invoke(jsOf(d.dev), jsOf(d.queue), arr, d.fences.refused)
}

// rejected returns the error of the first submission the browser refused,
// once its scope has popped.
func (f *fenceState) rejected() error {
	if f.invalid == "" {
		return nil
	}
	return fmt.Errorf("webgpu: the browser refused submitted work: %s: %w", oneLine(f.invalid), device.ErrInvalidUsage)
}
