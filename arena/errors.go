package arena

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Errors returned by an Arena; each comes wrapped with context. Device
// errors (device.ErrOutOfMemory, device.ErrDeviceLost, ...) come wrapped as
// they are, so callers test for them with errors.Is too.
var (
	// ErrInvalidOptions is returned by New and Options.Validate for
	// options that cannot work: an element size that is zero or not a
	// multiple of 4, a growth factor not above 1, an initial capacity above
	// the maximum, a guard margin that leaves no room for an element, and
	// so on.
	ErrInvalidOptions = errors.New("arena: invalid options")

	// ErrFull is returned by Allocate when the request cannot be served
	// even after a full compaction, because the arena is at its maximum
	// capacity or the device refused a larger buffer (that device error is
	// wrapped too). Every live allocation is intact and the arena stays
	// usable.
	ErrFull = errors.New("arena: full")

	// ErrTooManyAllocations is returned by Allocate when the arena already
	// holds as many allocations (and free regions) as its MaxAllocs allows.
	ErrTooManyAllocations = errors.New("arena: too many allocations")

	// ErrInvalidSize is returned for a request of zero elements or more
	// than the maximum capacity, and for a write or read whose length is
	// not a multiple of 4 bytes or that passes the allocation's end.
	ErrInvalidSize = errors.New("arena: invalid size")

	// ErrInvalidHandle is returned for a Handle that is not live in this
	// arena: the zero Handle, one freed already, or one of another arena.
	ErrInvalidHandle = errors.New("arena: invalid handle")
)

// errReleased is returned by every method after Release: device.ErrReleased
// (the one sentinel for use after Release) with the package's name.
var errReleased = fmt.Errorf("arena: %w", device.ErrReleased)
