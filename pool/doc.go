// Package pool keeps device buffers for reuse: a caller acquires a buffer
// of at least a size, with an alignment and a usage, and puts it back
// when done; the next request that fits gets the same buffer instead of a
// new one.
//
// # Basics
//
// A Pool serves requests from size classes: a request's size, rounded up
// to a multiple of its alignment, is rounded up again to its class, eight
// classes per power of two (at most 12.5% more, 6.25% on average), and a
// buffer the pool creates has exactly its class's size. Acquire returns
// the smallest idle buffer of the same usage whose class is the request's
// or larger by less than a factor of two and whose size is a multiple of
// the alignment (best fit), and creates one otherwise. Acquire and Put
// are O(1) however many buffers the pool holds: idle buffers sit in one
// list per usage and class, and a bitmap per usage finds the first class
// with one.
//
// Acquire returns a Lease, the caller's claim on one buffer until it puts
// it back. A Lease is a value; Put checks it, so putting it back twice,
// putting a lease of another pool or a zero Lease, is an error, even after
// the buffer has been leased again to someone else.
//
// Put gives a buffer back to the pool; Release, as everywhere in gpumem,
// destroys: the pool and every buffer it holds.
//
// Alignment is a power of two, at least 4 (device.CopyAlignment): the
// leased buffer's size is a multiple of it, so that the buffer can be cut
// into aligned parts (for example uniform blocks at
// Limits.UniformOffsetAlignment).
//
// # Budget and eviction
//
// With Options.BudgetBytes set, the bytes the pool holds, leased and idle,
// never exceed the budget. A request that needs a new buffer evicts idle
// buffers, oldest put back first, to make room; if even with every idle
// buffer evicted it would not fit, Acquire fails with ErrOverBudget and
// nothing changes.
//
// With Options.MaxIdle set, a buffer idle at least that long is evicted:
// Put evicts those it finds expired, and Evict does so on demand (once
// a frame, say). Time comes from Options.Clock, so tests drive it.
//
// Evicting a buffer releases it to the device (device.Buffer.Release),
// which frees its memory once a fence marked after the release has
// completed.
//
// # Invariants
//
//   - Stats: Buffers == Leased + Idle; BytesHeld == BytesLeased + BytesIdle.
//   - With a budget, BytesHeld <= BudgetBytes at every return.
//   - A failed call changes nothing but Stats.Refusals (counted for
//     refusals by the budget or the device).
//
// # Caveats
//
// A Pool is not safe for concurrent use. Its buffers belong to its device
// and follow the device's rules (see package device). A leased buffer's
// contents are whatever its last user left; clear it if that matters.
//
// The device may refuse a creation (device.ErrOutOfMemory) while idle
// buffers of the pool hold memory: Acquire reports the error and evicts
// nothing. Trim the pool and retry if that is the better policy.
package pool
