// Package offset is an O(1) allocator of offsets: it hands out ranges of an
// abstract range of 32-bit units and takes them back, and knows nothing of
// the memory the units stand for. GPU buffer managers put one over a buffer
// (a unit is an element, a word or a byte) and keep the data themselves.
//
// # Design
//
// The placement is Sebastian Aaltonen's OffsetAllocator: a two-level
// segregated fit over 256 size bins.
//
//   - Bins. A size maps to a bin through an 8-bit float: 5 bits of exponent,
//     3 of mantissa (sizes below 8 are exact, then 8 bins per power of
//     two: 8, 9, ..., 15, 16, 18, ..., 30, 32, 36, ...). Bin bounds grow by at most 12.5% from
//     one bin to the next, so a request rounded up to its bin wastes under
//     12.5% of it, 6.25% on average.
//   - Masks. A 32-bit top mask says which groups of eight bins hold a free
//     region; one 8-bit leaf mask per group says which bins do. Finding the
//     first non-empty bin at or above a given bin takes two bit scans.
//   - Nodes. Every region of the range, allocated or free, is a node in a
//     fixed array made by New: its offset, its size, links to its neighbours
//     in address order, and links in its bin's list while it is free. Unused
//     nodes wait on a stack. Nothing is allocated after New. Both lists are
//     circular through sentinel nodes, so no link is ever "none".
//
// Allocate(size):
//  1. Round size up to its bin: every region filed there or above is large
//     enough, because regions are filed by rounding down.
//  2. Scan the masks for the first non-empty bin at or above it; none means
//     ErrOutOfSpace.
//  3. Pop that bin's head region. Keep size units of it; file the remainder
//     as a new free region after it.
//
// Free(allocation):
//  1. Check the allocation is live: the node's generation must match the
//     one in the Allocation (stale and double frees are refused).
//  2. Merge with the neighbours that are free, taking them out of their bins.
//  3. File the merged region in the bin its size rounds down to.
//
// The two roundings make step 2 of Allocate a guaranteed fit, at the price of
// never looking in the bin just below the request's, where some regions are
// large enough. The Fit policy looks there first, at a bounded number of
// regions, and otherwise places as the reference does.
//
// # Invariants
//
// Check verifies them; tests run it after every operation.
//   - Nodes in address order tile [0, Capacity) with no gap and no overlap.
//   - No two free regions are neighbours.
//   - A free region is in exactly the bin its size rounds down to, and the
//     masks mark exactly the non-empty bins.
//
// # Caveats
//
// An Allocation is a value: copies identify the same allocation, and any of
// them frees it; after the first free all of them are refused. Its
// generation is 32 bits, so a copy kept across 2^32 reuses of one node could
// be taken for live again.
//
// Sizes are requested sizes: the allocator keeps exactly size units, and
// the rest of the region stays free (nothing is lost to bin rounding unless
// the caller asks for RoundUp sizes, which leave no splinters).
//
// An Allocator is not safe for concurrent use.
package offset
