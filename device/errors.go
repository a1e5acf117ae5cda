package device

import "errors"

// Errors returned by a Device and its objects. Each is wrapped with context
// (fmt.Errorf("...: %w", err)); test with errors.Is.

// Errors of the device and its resources.
var (
	// ErrOutOfMemory is returned by CreateBuffer and CreateTexture when the
	// device cannot allocate the memory (or, on host, when fault injection
	// says so). Nothing was created; the device is still usable.
	ErrOutOfMemory = errors.New("device: out of memory")

	// ErrDeviceLost is returned by every call once the device is lost (the
	// driver reset, the adapter went away, or fault injection lost it). The
	// contents of every buffer and texture are gone; the only useful call
	// left is Release.
	ErrDeviceLost = errors.New("device: device lost")

	// ErrReleased is returned when a buffer, texture or device is used
	// after its Release. It is the one sentinel for use after Release:
	// every package above device (arena, the managers, pool, staging,
	// budget) wraps it with its name when one of its types is used after
	// its own Release.
	ErrReleased = errors.New("device: used after release")
)

// Errors of invalid calls: WebGPU would reject the call. Nothing was done.
var (
	// ErrInvalidObject is returned when a nil buffer or texture is passed,
	// or one created by another device.
	ErrInvalidObject = errors.New("device: nil or foreign object")

	// ErrInvalidDescriptor is returned by CreateBuffer and CreateTexture for
	// a descriptor that describes nothing valid: zero size, unknown format,
	// zero width or height, too many mips for the size, a sample count other
	// than 1 or 4, or a multisampled texture with mips or layers.
	ErrInvalidDescriptor = errors.New("device: invalid descriptor")

	// ErrInvalidUsage is returned when usage flags forbid the call: a write
	// to a buffer without CopyDst, a copy from one without CopySrc, a
	// creation with unknown flags or a forbidden combination (MapRead with
	// anything but CopyDst, MapWrite with anything but CopySrc, storage on a
	// format without storage support, a multisampled texture without
	// RenderAttachment), an operation the texture's sample count forbids, or
	// a texture layer copied onto itself.
	ErrInvalidUsage = errors.New("device: invalid usage")

	// ErrInvalidAlignment is returned when a buffer offset or size is not a
	// multiple of CopyAlignment (4 bytes), including a buffer's own size.
	ErrInvalidAlignment = errors.New("device: invalid alignment")

	// ErrOutOfBounds is returned when a range does not lie inside its buffer
	// (offset plus size past the end, or overflowing), when a Patch index is
	// past the last word, or when a texture layer or mip does not exist.
	ErrOutOfBounds = errors.New("device: out of bounds")

	// ErrInvalidSize is returned when texture data is not exactly the size
	// of the mip level it is written to or read from.
	ErrInvalidSize = errors.New("device: invalid data size")

	// ErrSameBuffer is returned by CopyBuffer when source and destination
	// are the same buffer, even for ranges that do not overlap: WebGPU
	// forbids it. Use Move for copies within one buffer.
	ErrSameBuffer = errors.New("device: copy within one buffer")

	// ErrIncompatible is returned by CopyTextureLayer for textures that
	// differ in format, width, height, mip count or sample count.
	ErrIncompatible = errors.New("device: incompatible textures")

	// ErrTooLarge is returned when a creation exceeds the device's Limits:
	// a buffer larger than MaxBufferSize, a texture wider or taller than
	// MaxTextureSize2D, or with more layers than MaxArrayLayers.
	ErrTooLarge = errors.New("device: exceeds limits")
)
