package memory

import "errors"

var (
	// ErrInvalidRegion is returned by NewBuffer for live regions that
	// cannot be: empty, given as free, using more than their size,
	// passing the capacity, or overlapping each other.
	ErrInvalidRegion = errors.New("memory: invalid region")

	// ErrInvalidBuffer is returned by Buffer.Check for a buffer whose
	// regions do not tile it: see Check.
	ErrInvalidBuffer = errors.New("memory: invalid buffer")
)
