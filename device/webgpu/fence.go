//go:build cgo || js

package webgpu

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Fences. Fence submits and asks the queue to report, once everything
// submitted so far has finished, the fence's number (fenceState.watch);
// reports arrive in submission order and raise the newest finished fence
// (fenceState.signalled). Completed reads it after letting reports in
// without waiting (pollQueue). fences.done <= fences.last always holds.
//
// Natively (fence_native.go) the reports are wgpu-native work-done
// callbacks that fire during device polls. In the browser (fence_js.go)
// they are the promises of queue.onSubmittedWorkDone, which resolve on the
// JavaScript event loop; Completed yields to the event loop once so that
// settled promises are seen.

// Fence submits the recorded work and returns its fence; see
// device.Device.
func (d *Device) Fence() (uint64, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	if err := d.flush(); err != nil {
		return 0, err
	}
	d.fences.last++
	d.fences.watch(d, d.fences.last)
	d.fenceSubmits = append(d.fenceSubmits, fenceMark{d.fences.last, d.submits})
	d.startJobs() // after the frame's submits (jobs.go)
	return d.fences.last, nil
}

// Completed returns the newest finished fence without waiting for the GPU;
// see device.Device. Natively it polls the device; in the browser it gives
// the event loop one turn (a message round trip, well under a millisecond)
// while fences are outstanding, and must not be called from inside a
// JavaScript callback.
func (d *Device) Completed() (uint64, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	if d.fences.done == d.fences.last {
		return d.fences.done, nil
	}
	if d.poll() {
		d.lost = true
		return 0, fmt.Errorf("webgpu: queue work failed: %w", device.ErrDeviceLost)
	}
	if err := d.fences.rejected(); err != nil {
		return 0, err
	}
	return d.fences.done, nil
}
