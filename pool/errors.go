package pool

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Errors returned by a Pool; each comes wrapped with context, and device
// errors come wrapped as they are (device.ErrOutOfMemory from a refused
// creation, say), so callers test for either with errors.Is.
var (
	// ErrInvalidRequest is returned by Acquire for a zero size, an
	// alignment that is not a power of two, or an invalid usage.
	ErrInvalidRequest = errors.New("pool: invalid request")

	// ErrTooLarge is returned by Acquire when the request's class is
	// larger than the device's largest buffer, or the request rounded up
	// to its alignment or class would pass 2^64 bytes.
	ErrTooLarge = errors.New("pool: request too large for the device")

	// ErrOverBudget is returned by Acquire when a new buffer would not fit
	// in the budget even with every idle buffer evicted.
	ErrOverBudget = errors.New("pool: over budget")

	// ErrUnknownLease is returned by Put for a Lease the pool did not
	// hand out: the zero Lease or one of another pool.
	ErrUnknownLease = errors.New("pool: unknown lease")

	// ErrNotLeased is returned by Put for a Lease put back already:
	// its buffer is idle, evicted, or leased again under a newer Lease.
	ErrNotLeased = errors.New("pool: lease already put back")

	// ErrInvalidOptions is returned by New for options that cannot work
	// (a negative MaxIdle, a budget below the smallest buffer), and for a
	// nil device.
	ErrInvalidOptions = errors.New("pool: invalid options")
)

// errReleased is returned by Acquire and Put after Release: device.ErrReleased
// (the one sentinel for use after Release) with the package's name.
var errReleased = fmt.Errorf("pool: %w", device.ErrReleased)
