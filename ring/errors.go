package ring

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Errors returned by Buffer and Frame, each wrapped with context; test
// them with errors.Is. Device errors (device.ErrOutOfMemory,
// device.ErrDeviceLost, ...) come wrapped as they are.
var (
	// ErrInvalidOptions is returned by the constructors for options that
	// cannot work: a nil device, an alignment that is not a power of two,
	// a maximum size below the initial one, a usage the device rejects,
	// a belt for a buffer without CopyDst.
	ErrInvalidOptions = errors.New("ring: invalid options")

	// ErrInvalidSize is returned by Allocate for a request of zero bytes or
	// one that overflows 64 bits when rounded up to the alignment, and by
	// Write for data whose length is not a multiple of 4.
	ErrInvalidSize = errors.New("ring: invalid size")

	// ErrFull is returned by Allocate when the request does not fit in the
	// bytes the GPU has finished with, or is larger than the whole ring,
	// and growing is off, at its maximum, or refused by the device (that
	// error is wrapped too); the error's text says which. Nothing was
	// changed: a later frame, once earlier fences complete, may succeed
	// (never, for a request larger than a ring that cannot grow to it).
	ErrFull = errors.New("ring: full")

	// ErrInvalidFence is returned by EndFrame for fence 0 or a fence lower
	// than the one of the frame before: fences come from
	// device.Device.Fence, which only counts up.
	ErrInvalidFence = errors.New("ring: invalid fence")
)

// errReleased is returned by every method after Release: device.ErrReleased
// (the one sentinel for use after Release) with the package's name.
var errReleased = fmt.Errorf("ring: %w", device.ErrReleased)
