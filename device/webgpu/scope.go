//go:build cgo

package webgpu

/*
#include <stddef.h>
#include <stdint.h>

// The few declarations of webgpu.h (wgpu-native, linked in by the binding)
// that the binding does not expose: error scopes with a filter other than
// Validation. Enums are ints; structs are laid out as in webgpu.h.
typedef struct gpumemStringView { char const *data; size_t length; } gpumemStringView;
typedef void (*gpumemPopCallback)(int status, int type, gpumemStringView message, void *userdata1, void *userdata2);
typedef struct gpumemPopInfo {
	void *nextInChain;
	int mode;
	gpumemPopCallback callback;
	void *userdata1;
	void *userdata2;
} gpumemPopInfo;
typedef struct gpumemFuture { uint64_t id; } gpumemFuture;

void wgpuDevicePushErrorScope(void *device, int filter);
gpumemFuture wgpuDevicePopErrorScope(void *device, gpumemPopInfo info);

static void gpumem_pop_callback(int status, int type, gpumemStringView message, void *userdata1, void *userdata2) {
	*(int *)userdata1 = type;
}

// gpumem_push_oom opens a scope that catches out-of-memory errors
// (WGPUErrorFilter_OutOfMemory).
static void gpumem_push_oom(void *device) {
	wgpuDevicePushErrorScope(device, 2);
}

// gpumem_pop returns the WGPUErrorType the scope caught: 1 none,
// 2 validation, 3 out of memory, 4 internal; 0 if wgpu did not answer at
// once (wgpu-native always does).
static int gpumem_pop(void *device) {
	int type = 0;
	gpumemPopInfo info = {0};
	info.callback = gpumem_pop_callback;
	info.userdata1 = &type;
	wgpuDevicePopErrorScope(device, info);
	return type;
}
*/
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/oliverbestmann/webgpu/wgpu"
)

// An allocation that fails for lack of memory raises an OutOfMemory error,
// which the binding's Try calls do not catch (they open Validation scopes
// only); uncaught, wgpu-native treats it as fatal and aborts the process.
// withOOMScope runs create inside an OutOfMemory error scope and reports
// whether the scope caught one.

// rawDevice returns the WGPUDevice handle of dev: the first field of the
// binding's Device struct.
func rawDevice(dev *wgpu.Device) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(dev))
}

// withOOMScope runs create in an OutOfMemory error scope; oom is true when
// the scope caught an out-of-memory error.
// wgpu keeps error scopes per thread: the push, create and pop must run
// on one, and a goroutine may move between threads between cgo calls.
func (d *Device) withOOMScope(create func() error) (oom bool, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	raw := rawDevice(d.dev)
	C.gpumem_push_oom(raw)
	err = create()
	return C.gpumem_pop(raw) == 3, err
}
