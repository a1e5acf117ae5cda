// Package webgpu is a device.Device on a real GPU, through WebGPU
// (github.com/oliverbestmann/webgpu, wgpu-native, on Vulkan, Metal, DX12 or
// GL). On a machine without a GPU it runs on Mesa's software Vulkan driver,
// lavapipe (Debian: apt-get install mesa-vulkan-drivers).
//
// # Basics
//
// New opens an adapter and a device. The adapter is chosen by Options and,
// for every field left zero, by the environment:
//
//	GPUMEM_WEBGPU_BACKEND   vulkan, metal, dx12 or gl (default: any primary backend)
//	GPUMEM_WEBGPU_POWER     low or high (default: the driver's choice)
//	GPUMEM_WEBGPU_FALLBACK  1 to force the fallback (software) adapter
//	GPUMEM_WEBGPU_MOVES     copy or compute: how Move runs (default: compute where it can)
//
// Limits are the adapter's own: the device asks for everything the adapter
// offers.
//
// Work is recorded into one command encoder and handed to the queue by
// Submit, Wait, ReadBuffer and ReadTexture. Writes go through the queue
// (queue.writeBuffer, queue.writeTexture), which runs before any command
// buffer of the same submit, so a write first submits what is recorded:
// operations take effect in call order, as the device package requires.
//
// Move runs as compute-shader dispatches over a table of chunks of up to
// 64 KiB (see plan.go for the plan that keeps a batch's result equal to
// doing its moves one by one, and move.go for the dispatches), or, where
// compute cannot run,
// as pairs of copies through a scratch buffer: WebGPU forbids a copy whose
// source and destination are the same buffer. MoveVia picks the path per
// call. Patch and GenerateMips run as compute shaders, with integer
// arithmetic for 8-bit formats, so their results equal the host backend's
// bit for bit.
//
// Bench and BenchCases measure move throughput; the package benchmarks and
// `gpumem devbench` share them.
//
// # Caveats
//
// Every call is validated before anything reaches wgpu-native, and returns
// the sentinel the host backend returns: the binding turns some errors into
// process aborts (an invalid queue submit, an uncaptured error) and, once
// one of its Try calls has failed, may report that stale error again from a
// later call (see errors.go for the workaround). Buffer and texture
// creation run inside an OutOfMemory error scope of their own (scope.go),
// since the binding's Try calls catch validation errors only.
//
// A buffer is created with Storage added to its usage (unless it is
// mappable) so that Move can bind it; Patch still requires the caller's
// Storage flag, as on every backend.
//
// Device loss: the binding cannot take a device-lost callback (it hands C a
// Go pointer, which cgo rejects), so a lost device is noticed only through
// the errors of later calls, which then return device.ErrDeviceLost.
//
// Released buffers and textures are destroyed only once the queue has
// finished the work recorded before the Release: at the next Wait, or at a
// Submit that finds the queue idle.
//
// On Linux, the Vulkan loader prints "XDG_RUNTIME_DIR is invalid" to stderr
// when that variable is unset; it is harmless (set it to silence it).
//
// # Concurrency
//
// A Device and its objects are not safe for concurrent use, as the device
// package says; the caller serializes every call.
package webgpu
