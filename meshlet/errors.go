package meshlet

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Errors returned by a Manager; each comes wrapped with context. Errors of
// the arenas (arena.ErrFull, arena.ErrTooManyAllocations) and of the device
// (device.ErrOutOfMemory, device.ErrDeviceLost, ...) come wrapped as they
// are, so callers test for them with errors.Is too.
var (
	// ErrInvalidOptions is returned by New for options that cannot work: a
	// row of zero words, an address word outside the row, an arena option
	// the manager sets itself (ElemSize, OnMove, SweepLimits), or one the arena
	// rejects (arena.ErrInvalidOptions is wrapped too).
	ErrInvalidOptions = errors.New("meshlet: invalid options")

	// ErrInvalidBatch is returned by Add for a batch of no data words or no
	// meshlets, or whose rows are not a whole number of rows.
	ErrInvalidBatch = errors.New("meshlet: invalid batch")

	// ErrInvalidAddress is returned by Add when a row's address word,
	// relative to the batch's data, is past the end of that data. An
	// address equal to the data's length (an empty meshlet at the end) is
	// accepted.
	ErrInvalidAddress = errors.New("meshlet: address outside the batch's data")

	// ErrInvalidHandle is returned for a BatchHandle that is not live in
	// this manager: the zero handle, or one removed already.
	ErrInvalidHandle = errors.New("meshlet: invalid batch handle")

	// ErrNotAdded is returned for a handle a Remote reserved that no
	// AddReserved has placed yet (Lookup, Clone).
	ErrNotAdded = errors.New("meshlet: batch reserved, not added")

	// ErrAdded is returned by AddReserved for a handle placed already.
	ErrAdded = errors.New("meshlet: batch added already")
)

// errReleased is returned by every method after Release: device.ErrReleased
// (the one sentinel for use after Release) with the package's name.
var errReleased = fmt.Errorf("meshlet: %w", device.ErrReleased)
