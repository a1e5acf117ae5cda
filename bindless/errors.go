package bindless

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Errors returned by a Registry, each wrapped with context; test them
// with errors.Is. Device errors (device.ErrOutOfMemory, ...) come wrapped
// as they are.
var (
	// ErrInvalidOptions is returned by New for options that cannot work:
	// a nil device, more layers per page than the device or a handle
	// allows, more pages than a handle can name, a negative count, too
	// few pages for the built-in textures and one texture more.
	ErrInvalidOptions = errors.New("bindless: invalid options")

	// ErrInvalidKey is returned for a Key the device cannot make a texture
	// of: an unknown format, a zero or oversized width or height, more
	// mips than the size allows, a sample count other than 1 or 4.
	ErrInvalidKey = errors.New("bindless: invalid key")

	// ErrFull is returned when a registration needs a new page and the
	// bucket or the registry has its maximum, or the device refuses the
	// page, or the larger texture of a trimmed page it grows (the
	// device's error is wrapped too). Nothing was registered.
	ErrFull = errors.New("bindless: full")

	// ErrNotRegistered is returned for a source id that is not registered
	// and for a handle that names no registered texture.
	ErrNotRegistered = errors.New("bindless: not registered")

	// ErrMismatch is returned when an image's width or height, or a source
	// texture's key, differs from the bucket of the texture it would
	// replace, and by Register for an id registered with another key.
	ErrMismatch = errors.New("bindless: dimension mismatch")

	// ErrInvalidSize is returned when pixel data is not exactly one mip 0
	// of the key's format and size.
	ErrInvalidSize = errors.New("bindless: invalid pixel data size")
)

// errReleased is returned by every method after Release: device.ErrReleased
// (the one sentinel for use after Release) with the package's name.
var errReleased = fmt.Errorf("bindless: %w", device.ErrReleased)
