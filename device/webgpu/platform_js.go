//go:build js

package webgpu

import (
	"fmt"
	"syscall/js"
	"unsafe"

	"github.com/oliverbestmann/webgpu/wgpu"
)

// The browser's side of the few calls the binding's js implementation
// lacks or implements differently (platform_native.go has the native
// form). Every function here that waits blocks its goroutine on a channel
// until a promise settles, which lets the JavaScript event loop run: none
// may be called from inside a JavaScript callback (js.FuncOf), where
// blocking stops the event loop that would settle the promise.

// jsBacked lists the binding's types whose only field is their
// JavaScript object (a js.Value named jsValue, unexported).
type jsBacked interface {
	wgpu.Adapter | wgpu.Buffer | wgpu.CommandBuffer | wgpu.Device | wgpu.Queue | wgpu.Texture
}

// jsOf returns the JavaScript object (GPUDevice, GPUBuffer, ...) behind p:
// the first and only field of each jsBacked type, as the binding declares
// them in gen_types_js.go. TestJSOf checks it against the objects'
// properties.
func jsOf[T jsBacked](p *T) js.Value {
	return *(*js.Value)(unsafe.Pointer(p))
}

// destroyTexture destroys t (the binding's js side has no
// Texture.Destroy).
func destroyTexture(t *wgpu.Texture) {
	jsOf(t).Call("destroy")
	t.Release()
}

// adapterInfo describes adapter from GPUAdapter.info (the binding's js
// GetInfo returns nothing). Backend is "browser": the page cannot know
// which API the browser runs WebGPU on.
func adapterInfo(adapter *wgpu.Adapter) AdapterInfo {
	info := jsOf(adapter).Get("info")
	str := func(name string) string {
		if !info.Truthy() {
			return ""
		}
		if v := info.Get(name); v.Type() == js.TypeString {
			return v.String()
		}
		return ""
	}
	typ := "unknown"
	if info.Truthy() && info.Get("isFallbackAdapter").Truthy() {
		typ = "cpu"
	}
	name := str("device")
	if name == "" {
		name = str("architecture")
	}
	return AdapterInfo{Name: name, Vendor: str("vendor"), Description: str("description"), Backend: "browser", Type: typ}
}

// await blocks the calling goroutine until promise settles and returns its
// value, and whether it was fulfilled.
func await(promise js.Value) (js.Value, bool) {
	done := make(chan struct{})
	var result js.Value
	var ok bool
	settle := func(fulfilled bool) js.Func {
		return js.FuncOf(func(_ js.Value, args []js.Value) any {
			if len(args) > 0 {
				result = args[0]
			}
			ok = fulfilled
			close(done)
			return nil
		})
	}
	onFulfilled, onRejected := settle(true), settle(false)
	defer onFulfilled.Release()
	defer onRejected.Release()
	promise.Call("then", onFulfilled, onRejected)
	<-done
	return result, ok
}

// mappedView is where a MapWrite buffer's writes go in the browser. The
// binding's GetMappedRange returns a copy of the mapping (wasm memory and
// the mapping's ArrayBuffer are apart), so Buffer.mapped is shadow, a Go
// slice the size of the buffer, and wrote copies each written range into
// arr, a Uint8Array over the whole mapping, right after the write.
//
// shadow always equals the buffer's contents: it starts zeroed as the
// buffer does, every write to the buffer goes through it, and WebGPU lets
// a MapWrite buffer be only a copy source, so the GPU never writes it. A
// new mapping therefore reuses shadow without reading the buffer.
type mappedView struct {
	shadow []byte
	arr    js.Value // valid while mapped
}

// mapAll sets b.mapped to the whole of b's mapping; b is mapped.
func (b *Buffer) mapAll() {
	r := jsOf(b.buf).Call("getMappedRange", 0, b.desc.Size)
	b.view.arr = js.Global().Get("Uint8Array").New(r)
	if uint64(len(b.view.shadow)) != b.desc.Size {
		b.view.shadow = make([]byte, b.desc.Size)
	}
	b.mapped = b.view.shadow
}

// wrote copies p, the range of b.mapped at offset the caller just wrote,
// into b's mapping.
func (b *Buffer) wrote(offset uint64, p []byte) {
	js.CopyBytesToJS(b.view.arr.Call("subarray", offset, offset+uint64(len(p))), p)
}

// createComputePipeline creates the compute pipeline of mod's entry point
// "main"; layout nil derives the layout from the shader. The binding's js
// descriptor has no label, so name goes unused in the browser.
func (d *Device) createComputePipeline(_ string, layout *wgpu.PipelineLayout, mod *wgpu.ShaderModule) (*wgpu.ComputePipeline, error) {
	return d.dev.TryCreateComputePipeline(&wgpu.ComputePipelineDescriptor{
		Layout:  layout,
		Compute: wgpu.ProgrammableStageDescriptor{Module: mod, EntryPoint: "main"},
	})
}

// jsCall calls method on v and returns the exception it throws as an
// error.
func jsCall(v js.Value, method string, args ...any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	v.Call(method, args...)
	return nil
}

// jsBytes copies data into a new Uint8Array. The binding's own queue
// writes read wasm memory in place through a global named wasm that the
// page must define; gpumem pays a copy instead and asks nothing of the
// page.
func jsBytes(data []byte) js.Value {
	arr := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(arr, data)
	return arr
}

// writeQueue writes data to b at offset through the queue
// (GPUQueue.writeBuffer).
func (d *Device) writeQueue(b *wgpu.Buffer, offset uint64, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	return jsCall(jsOf(d.queue), "writeBuffer", jsOf(b), offset, jsBytes(data))
}

// writeQueueLayer writes data, rows of bytesPerRow bytes, to layer of mip
// level mip of t, w by h texels, through the queue
// (GPUQueue.writeTexture).
func (d *Device) writeQueueLayer(t *wgpu.Texture, layer, mip, w, h, bytesPerRow uint32, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	return jsCall(jsOf(d.queue), "writeTexture",
		map[string]any{"texture": jsOf(t), "mipLevel": mip, "origin": map[string]any{"x": 0, "y": 0, "z": layer}, "aspect": "all"},
		jsBytes(data),
		map[string]any{"offset": 0, "bytesPerRow": bytesPerRow, "rowsPerImage": h},
		map[string]any{"width": w, "height": h, "depthOrArrayLayers": 1},
	)
}

// computeMoves says whether Move may run as compute dispatches. In the
// browser it may not: Chromium (Dawn) refuses a dispatch that binds one
// buffer twice as writable storage with overlapping ranges ("Writable
// storage buffer binding aliasing"), which the move kernels' source and
// destination windows are, so every Move runs as copies through scratch.
// Patch, GenerateMips and CheckGuards bind each buffer once and run as
// compute shaders there too.
const computeMoves = false

// stagedTables says whether the compute path's move tables go through the
// device's own mapped staging buffers (tablestage.go). In the browser they
// go by queue writes: the binding's mappings there are Go copies written
// back at unmap (and the compute path does not run, computeMoves).
const stagedTables = false

// releaseDevice destroys a device New created: the binding's js Release
// does nothing, and a page that opens many devices (a test binary) would
// otherwise keep every one until the garbage collector finds it.
func releaseDevice(dev *wgpu.Device) { jsOf(dev).Call("destroy") }

// offThread says whether the device does slow work on goroutines of its
// own (PrepareBuffer's creation, reap's destruction of large buffers). In
// the browser it does not: there a goroutine would interleave its error
// scopes (awaited promises) with the caller's calls; a prepared buffer
// is created at Take.
const offThread = false
