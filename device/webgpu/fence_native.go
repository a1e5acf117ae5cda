//go:build cgo

package webgpu

/*
#include <stdint.h>
#include <stdlib.h>
#include <stddef.h>

// The declarations of webgpu.h that fences need, laid out as there. The
// binding's own Queue.OnSubmittedWorkDone declares its C callback without
// the message argument (WGPUStringView) that wgpu-native passes, so its
// userdata arrives in the wrong register and the lookup panics with
// "invalid handle". This callback has the right signature and touches
// only C memory, so no Go pointer crosses into C.
typedef struct gpumemFenceView { char const *data; size_t length; } gpumemFenceView;
typedef void (*gpumemWorkDoneCallback)(int status, gpumemFenceView message, void *userdata1, void *userdata2);
typedef struct gpumemWorkDoneInfo {
	void *nextInChain;
	int mode;
	gpumemWorkDoneCallback callback;
	void *userdata1;
	void *userdata2;
} gpumemWorkDoneInfo;
typedef struct gpumemFenceFuture { uint64_t id; } gpumemFenceFuture;

gpumemFenceFuture wgpuQueueOnSubmittedWorkDone(void *queue, gpumemWorkDoneInfo info);

// gpumemFences is where callbacks record completion: done is the newest
// fence finished, failed is set when a callback reports anything but
// success (WGPUQueueWorkDoneStatus_Success is 1).
typedef struct gpumemFences { uint64_t done; int failed; } gpumemFences;

static void gpumem_work_done(int status, gpumemFenceView message, void *userdata1, void *userdata2) {
	gpumemFences *f = userdata1;
	uint64_t fence = (uint64_t)(uintptr_t)userdata2;
	if (status != 1) {
		f->failed = 1;
		return;
	}
	if (fence > f->done) {
		f->done = fence;
	}
}

static gpumemFences *gpumem_fences_new(void) {
	return calloc(1, sizeof(gpumemFences));
}

// gpumem_on_done asks the queue to record fence in f once everything
// submitted so far has finished. The callback fires from a later device
// poll (WGPUCallbackMode_AllowProcessEvents, 2).
static void gpumem_on_done(void *queue, gpumemFences *f, uint64_t fence) {
	gpumemWorkDoneInfo info = {0};
	info.mode = 2;
	info.callback = gpumem_work_done;
	info.userdata1 = f;
	info.userdata2 = (void *)(uintptr_t)fence;
	wgpuQueueOnSubmittedWorkDone(queue, info);
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// Fences: Fence submits and registers a work-done callback carrying the
// fence's number; callbacks fire in submission order during device polls
// and raise fences.done. Completed polls without waiting and reads it. A
// poll that finds the queue empty completes every fence at once, callback
// or not.

// rawQueue returns the WGPUQueue handle of q: the first field of the
// binding's Queue struct.
func rawQueue(q *wgpu.Queue) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(q))
}

// fenceState is the device's fence bookkeeping. cells is C memory, freed
// by Release once no callback can fire (see Release).
type fenceState struct {
	cells *C.gpumemFences
	last  uint64 // last fence returned by Fence
	done  uint64 // newest fence known finished; done <= last
}

func (f *fenceState) init() { f.cells = C.gpumem_fences_new() }

func (f *fenceState) free() {
	if f.cells != nil {
		C.free(unsafe.Pointer(f.cells))
		f.cells = nil
	}
}

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
	C.gpumem_on_done(rawQueue(d.queue), d.fences.cells, C.uint64_t(d.fences.last))
	return d.fences.last, nil
}

// Completed polls the device without waiting and returns the newest
// finished fence; see device.Device.
func (d *Device) Completed() (uint64, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	if d.fences.done == d.fences.last {
		return d.fences.done, nil
	}
	if d.dev.Poll(false, nil) {
		d.fences.done = d.fences.last
		d.bury()
	}
	if d.fences.cells.failed != 0 {
		d.lost = true
		return 0, fmt.Errorf("webgpu: queue work failed: %w", device.ErrDeviceLost)
	}
	d.fences.done = max(d.fences.done, min(uint64(d.fences.cells.done), d.fences.last))
	return d.fences.done, nil
}
