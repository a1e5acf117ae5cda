package offset

import "errors"

// Errors returned by the allocator, grouped by when they occur. Callers test
// for them with errors.Is; all but ErrOutOfSpace come wrapped with context.

// Returned by New and Grow.
var (
	// ErrInvalidCapacity is returned by New for a capacity of zero or a node
	// limit below 2 or above 2^27-258, and by Grow for a capacity below the
	// current one.
	ErrInvalidCapacity = errors.New("offset: invalid capacity")
)

// Returned by Allocate and AllocateAligned.
var (
	// ErrOutOfSpace is returned when no free region can serve the request
	// under the allocator's policy. It is a normal outcome, returned bare
	// (never wrapped) so that a refusal costs no heap allocation.
	ErrOutOfSpace = errors.New("offset: out of space")

	// ErrNodeLimit is returned when serving the request would need more
	// nodes (allocations plus free regions) than the limit given to New.
	ErrNodeLimit = errors.New("offset: node limit reached")

	// ErrZeroSize is returned for a request of zero units.
	ErrZeroSize = errors.New("offset: zero size")

	// ErrTooLarge is returned for a request larger than the capacity.
	ErrTooLarge = errors.New("offset: size exceeds capacity")

	// ErrBadAlignment is returned by AllocateAligned for an alignment that is
	// zero or not a power of two.
	ErrBadAlignment = errors.New("offset: alignment is not a power of two")
)

// Returned by Free, SlideDown, Next and Lookup.
var (
	// ErrInvalidAllocation is returned for an Allocation that is not live in
	// this allocator: the zero value, one freed already, a stale copy whose
	// node has since been reused, or one made by another allocator. The
	// allocator is left unchanged.
	//
	// A stale copy is recognised by its node's 32-bit generation, which
	// goes up by two for each allocation and free of the node: once the
	// node has been reused 2^31 times after the copy went stale, the
	// generation has come round again and the copy passes for live. A tight
	// loop allocating and freeing one size, which reuses one node, gets
	// there in under a minute; keep no stale copy that long.
	ErrInvalidAllocation = errors.New("offset: allocation is not live in this allocator")
)
