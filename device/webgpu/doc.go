//go:build cgo || js

// Package webgpu is a device.Device on a real GPU, through WebGPU
// (github.com/oliverbestmann/webgpu, wgpu-native, on Vulkan, Metal, DX12 or
// GL). On a machine without a GPU it runs on Mesa's software Vulkan driver,
// lavapipe (Debian: apt-get install mesa-vulkan-drivers).
//
// # Basics
//
// Wrap puts gpumem on a device the program already has: the device a
// renderer renders with, so that gpumem's buffers and textures are ones it
// binds. New opens an adapter and a device of gpumem's own, chosen by
// Options; Options.FromEnv fills the fields left zero from the
// environment (gpumem's command and tests use it):
//
//	GPUMEM_WEBGPU_BACKEND   vulkan, metal, dx12 or gl (default: wgpu-native's choice)
//	GPUMEM_WEBGPU_POWER     low or high (default: the driver's choice)
//	GPUMEM_WEBGPU_FALLBACK  1 to force the fallback (software) adapter
//	GPUMEM_WEBGPU_MOVES     copy or compute: how Move runs (default: compute where it can)
//	GPUMEM_WEBGPU_LIMITS    adapter: ask for every limit the adapter offers
//
// Limits are the device's: WebGPU's defaults for a device created without
// required limits (New's default), whatever the caller asked for on a
// wrapped one.
//
// # Sharing the queue with a renderer
//
// gpumem and the renderer submit to one queue. The contract:
//
//   - What records: CopyBuffer, Move, Patch, CopyTextureLayer and
//     GenerateMips record commands into gpumem's own command encoder;
//     nothing reaches the queue yet. The managers record through them:
//     arena growth (a copy into the new buffer), Sweep and Compact (moves),
//     meshlet address fix-ups (patches), bindless mips and layer copies.
//   - What writes: WriteBuffer and WriteTexture are queue writes
//     (queue.writeBuffer, queue.writeTexture). Queue writes run before the
//     command buffers of the next submit, so a write first submits what
//     gpumem has recorded (only then: a run of writes costs no submit).
//     Operations take effect in call order, as the device package requires.
//   - What submits: Submit (and Wait, Fence, ReadBuffer, ReadTexture)
//     submits what gpumem recorded.
//   - Before the renderer submits command buffers that read gpumem's
//     buffers or textures, it calls Submit. Its submit then runs after
//     gpumem's commands and after every write made before it. A frame:
//     update the managers (mesh Flush, Sweep, ring writes), d.Submit(),
//     record and submit the renderer's passes, d.Fence() to mark the frame.
//   - Replaced buffers and moved data: every manager's Changes reports
//     them as memory.Change. Growth gives a manager a new buffer
//     (Replaced): rebuild the bind groups and vertex bindings that named
//     the old one. Sweeps and compactions change offsets (Moved): rebuild
//     the draw data that holds them.
//   - Old buffers and textures: what gpumem releases (growth's old
//     buffer, a removed mesh's own buffer, a bindless page Shrink or
//     Compact gave back, a pool buffer evicted) stays alive, contents
//     intact, until a fence marked after its release has completed. The
//     renderer's passes for the frame in which something was released may
//     still name it, even when submitted after gpumem's Submit, as long as
//     the frame ends with d.Fence() after them. gpumem's managers never
//     mark a fence themselves, so only the program ends a frame. A program that never calls Fence keeps what it
//     released until the device's Release. Fence and Completed say which
//     frames the GPU has finished (ring uses them never to reuse memory a
//     frame may still read).
//
// gpumem records into an encoder of its own and submits it itself; it does
// not record into the renderer's encoder. A frame thus costs one submit of
// gpumem's (when it recorded anything) before the renderer's.
//
// Move runs as compute-shader dispatches over a table of chunks of up to
// 64 KiB, or, where compute cannot run, as pairs of copies through a
// scratch buffer: WebGPU forbids a copy whose source and destination are
// the same buffer. A batch runs in passes: the bytes of moves whose
// sources a later move of the pass would overwrite are first gathered
// into scratch, then every move of the pass writes its destination, so
// the batch's result equals doing its moves one by one, in order. MoveVia picks the path per
// call. Patch and GenerateMips run as compute shaders, with integer
// arithmetic for 8-bit formats, so their results equal the host backend's
// bit for bit.
//
// `gpumem devbench` measures move throughput on a real GPU.
//
// GPU time: where the adapter offers timestamp queries and writing them
// between passes (wgpu.FeatureNameTimestampQuery and
// wgpu.NativeFeatureTimestampQueryInsideEncoders: Vulkan, DX12, Metal,
// lavapipe included), New requests both and Device.Timer returns a
// device.Timer. A wrapped device has one only if its owner requested
// both features. In the browser there is none.
//
// # Caveats
//
// Every call is validated before anything reaches wgpu-native, and returns
// the sentinel the host backend returns: the binding turns some errors into
// process aborts (an invalid queue submit, an uncaptured error) and, once
// one of its Try calls has failed, may report that stale error again from a
// later call; after a failed call the device runs two garbage collections,
// which empty the binding's pool of error holders. Buffer and texture
// creation run inside an OutOfMemory error scope of their own, since the
// binding's Try calls catch validation errors only.
//
// A buffer is created with Storage added to its usage (unless it is
// mappable) so that Move can bind it; Patch still requires the caller's
// Storage flag, as on every backend.
//
// Device loss: the binding cannot take a device-lost callback (it hands C a
// Go pointer, which cgo rejects), so a lost device is noticed only through
// the errors of later calls, which then return device.ErrDeviceLost.
//
// On Linux, Mesa's Vulkan drivers print "error: XDG_RUNTIME_DIR is invalid
// or not set in the environment" to stderr when that variable is unset (a
// service or container started without a login session). It is harmless.
// gpumem does not touch a library user's environment: to silence it, set
// XDG_RUNTIME_DIR to a directory of the user's, mode 0700, before the
// first device opens (gpumem's command and tests make a private one).
//
// # In the browser
//
// Built with GOOS=js GOARCH=wasm, the package runs on the browser's
// WebGPU (navigator.gpu) through the binding's js side, with the same API
// and the same conformance suite (internal/wasmbrowser runs it in headless
// Chromium). What differs:
//
//   - Calls that wait (New, Wait, ReadBuffer, ReadTexture, buffer and
//     texture creation, mapping a MapWrite buffer) block their goroutine
//     until a promise settles, which lets the JavaScript event loop run.
//     Call the device from a goroutine, never from inside a JavaScript
//     callback (a js.FuncOf, such as a requestAnimationFrame handler):
//     there the wait would stop the event loop that settles the promise.
//     Nothing busy-waits.
//   - Fences are queue.onSubmittedWorkDone promises; Completed gives the
//     event loop one turn (a MessageChannel message) while fences are
//     outstanding, so a fence completes some polls later than natively.
//   - Errors come from error scopes: creation runs in an out-of-memory and
//     a validation scope whose results it waits for; each submission runs
//     in a validation scope, and the next Completed or Wait returns the
//     first refusal (ErrInvalidUsage), where natively an invalid
//     submission aborts the process.
//   - Move always runs as copies through scratch: Chromium refuses a
//     dispatch that binds one buffer twice as writable storage, as the
//     move kernels do; MoveCompute is refused. Patch, GenerateMips and
//     CheckGuards run as compute shaders as natively.
//   - MapWrite buffers keep a Go copy of their contents (the binding cannot
//     hand out the mapping itself): writes go to it and are copied into
//     the mapping at once, so such a buffer costs its size twice.
//   - Queue writes copy their data once into a JavaScript array, so the
//     page need not define the wasm global the binding's own writes read.
//   - AdapterInfo comes from GPUAdapter.info, with Backend "browser".
//     Device loss is seen only through the errors of later calls.
//
// # Concurrency
//
// A Device and its objects are not safe for concurrent use, as the device
// package says; the caller serializes every call.
//
// Several Wraps of one wgpu.Device (several views, each with its own
// managers) are several gpumem devices on one queue: each keeps its own
// encoder, fences and released objects, and their work reaches the
// queue in the order of their Submits. Each is used from one goroutine at
// a time; two Wraps may be used from two goroutines at once only where
// the binding's device and queue calls may (wgpu-native's are
// thread-safe), and a buffer of one is never handed to another's calls.
// Loading from other goroutines goes through the managers' loader types
// (mesh.Loader, meshlet.Remote), not through the device.
package webgpu
