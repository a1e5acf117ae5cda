// Package device is the boundary between gpumem and a GPU: a small interface
// to create buffers and 2D-array textures, write, copy, move and patch their
// bytes, generate mips, submit work and wait for it, and read results back.
//
// Every package above device works on any backend: device/host keeps memory
// in byte slices and checks every rule a GPU would check; device/webgpu runs
// on a real adapter. One conformance suite, device/devicetest, runs against
// both, so code that passes on host does not fail on a GPU.
//
// # Basics
//
// Units are bytes, except Patch indices, which count 32-bit words, and
// texture sizes, which count texels. Offsets and sizes of buffer writes,
// reads, copies and moves are multiples of [CopyAlignment] (4 bytes), and so
// is the size of every buffer.
//
// Operations take effect in call order. A backend may record work and run it
// later, but what any later call observes (a read, a copy, a move) is the
// result of doing every earlier call one at a time, in order. Submit hands
// recorded work to the GPU; Wait blocks until everything submitted has
// finished; ReadBuffer and ReadTexture submit and wait by themselves.
// Fence submits like Submit and numbers the submission; Completed says,
// without blocking, up to which fence the GPU has finished, so a per-frame
// allocator reuses memory only once no submitted work can still read it.
//
// A call rejected for its arguments or state (every sentinel but
// [ErrDeviceLost] and, from Submit or Wait, [ErrOutOfMemory]) has had no
// effect: batches ([Device.Move], [Device.Patch]) are validated whole before
// any of their entries runs. Submit and Wait may report a failure of earlier
// work that the GPU found only when running it.
//
// Errors are values: every error returned wraps one of the package's
// sentinels (ErrOutOfMemory, ErrDeviceLost, ErrReleased, ErrInvalidUsage,
// ErrOutOfBounds, ...) with context; test them with errors.Is.
//
// # Ownership and lifetimes
//
// Buffers and textures belong to the device that created them; passing one to
// another device is an error ([ErrInvalidObject]). Release ends gpumem's use
// of an object (later use returns [ErrReleased]); a GPU backend frees its
// memory once a fence marked after the release has completed, so a frame
// may still name what it released (Buffer.Release). A program that never
// marks a fence (Device.Fence) keeps what it released until
// Device.Release. Release is idempotent on every object, and
// Device.Release releases, and frees at once, every object the device
// still holds.
//
// # Concurrency
//
// A Device, its buffers and its textures are not safe for concurrent use:
// the caller serializes every call, including Release on a buffer or texture.
// The host backend takes no locks, so the race detector reports misuse in
// tests run against it.
//
// # Caveats
//
// The rules are WebGPU's, sometimes stricter, never looser: WebGPU forbids a
// buffer-to-buffer copy whose source and destination are the same buffer,
// even without overlap ([ErrSameBuffer]; use [Device.Move]); a MapRead buffer
// may otherwise only be CopyDst, a MapWrite buffer only CopySrc. gpumem adds
// one rule of its own: a buffer's size is a nonzero multiple of 4, so every
// byte of it can be written, copied and moved.
//
// GenerateMips averages 8-bit channels in their encoded form, sRGB formats
// included (not gamma-correct); see [Device.GenerateMips] for the exact
// arithmetic every backend follows.
package device
