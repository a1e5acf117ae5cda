package staging

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Errors returned by a Belt, each wrapped with context; test them with
// errors.Is. Device errors come wrapped as they are.
var (
	// ErrInvalidOptions is returned by New for a nil device, a chunk size
	// that overflows when rounded up to 4 or is over the device's
	// MaxBufferSize, or a negative chunk count.
	ErrInvalidOptions = errors.New("staging: invalid options")

	// ErrInvalidUpload is returned by Upload for a length or destination
	// offset that is not a multiple of 4, or a range past the end of the
	// destination. Nothing was written.
	ErrInvalidUpload = errors.New("staging: invalid upload")

	// ErrInvalidFence is returned by EndFrame for fence 0 or a fence lower
	// than the previous frame's.
	ErrInvalidFence = errors.New("staging: invalid fence")
)

// errReleased is returned by every method after Release: device.ErrReleased
// (the one sentinel for use after Release) with the package's name.
var errReleased = fmt.Errorf("staging: %w", device.ErrReleased)
