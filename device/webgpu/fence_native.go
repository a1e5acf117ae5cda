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
	"unsafe"

	"github.com/oliverbestmann/webgpu/wgpu"
)

// Fences natively: Fence registers a work-done callback carrying the
// fence's number (see fence.go); callbacks fire in submission order during
// device polls and raise cells.done. A poll that finds the queue empty
// completes every fence at once, callback or not.

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

func (f *fenceState) init(*Device) { f.cells = C.gpumem_fences_new() }

// watch asks the queue to record fence once everything submitted so far
// has finished.
func (f *fenceState) watch(d *Device, fence uint64) {
	C.gpumem_on_done(rawQueue(d.queue), f.cells, C.uint64_t(fence))
}

// signalled returns the newest fence a callback recorded, and whether a
// callback reported failed work.
func (f *fenceState) signalled() (fence uint64, failed bool) {
	return uint64(f.cells.done), f.cells.failed != 0
}

// pollQueue lets wgpu-native run the callbacks of finished work without
// waiting; it reports whether the queue is empty.
func (d *Device) pollQueue() bool { return d.dev.Poll(false, nil) }

// waitIdle blocks until the queue has finished all submitted work.
func (d *Device) waitIdle() { d.dev.Poll(true, nil) }

func (f *fenceState) free() {
	if f.cells != nil {
		C.free(unsafe.Pointer(f.cells))
		f.cells = nil
	}
}

// submit submits cbs to the queue. wgpu-native validates a submission at
// once and aborts the process on an invalid one, so gpumem validates every
// command before recording it.
func (d *Device) submit(cbs ...*wgpu.CommandBuffer) { d.queue.Submit(cbs...) }

// rejected returns the error of submitted work the GPU refused: never
// natively, where a refusal does not return (see submit).
func (f *fenceState) rejected() error { return nil }
