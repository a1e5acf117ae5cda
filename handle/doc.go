// Package handle hands out generational handles: 64-bit names, an index and
// a generation, for anything a program wants to refer to without a pointer.
//
// # Basics
//
// An Owner allocates and frees handles. A Handle packs a 32-bit index and a
// 32-bit generation; an index is reused once it has been freed, with the
// next generation, so a Handle kept past its Free (stale) never matches the
// index's new life: Owner.Live reports false for it and Owner.Free refuses
// it with ErrStale. Index 0 is never issued, so the zero Handle is never
// live.
//
// Remote allocators, made by Owner.Remote, allocate from any goroutine
// without locks while the owner works: they reuse an index the owner has
// freed and flushed when they can take it with one compare-and-swap, and
// take a fresh, never-used index otherwise. Only the owner frees.
//
// # Frees and reuse
//
// Owner.Free records the index's next generation and buffers the freed
// index, as the Handle it will next be, in the owner (up to 256 of them);
// the owner's own Alloc takes those back first, most recent first, without
// any atomic operation. Flush, or a Free that finds the buffer full, moves
// them to the shared free list in one batch, where remote allocators see
// them. The owner alone keeps the generation table; a freed Handle carries
// its next generation through the list, so a remote pop reads nothing but
// the list.
//
// The shared free list is split in stripes, one per processor (GOMAXPROCS
// when New runs, up to 32), each a stack with a word of its own on a cache
// line of its own. Each Remote made pops first from one stripe, the next
// one for each Remote made (a copy of a Remote shares its stripe), and a
// flush spreads the buffered frees evenly over the stripes of the Remotes
// made so far: allocators on different goroutines, each with its own
// Remote, pop different stripes and do not contend. A Remote whose stripe
// is empty takes from the others, in turn, before it takes a fresh index.
// With one Remote, or none, there is one stripe in use and the list is a
// single stack.
//
// A stripe is a stack of Handles in chunks that never move: chunk 0 holds
// 1,024 slots and each later chunk doubles, 23 in all for every 32-bit
// index, so a remote allocator reading a slot never races with a
// reallocation. One 64-bit word describes the stripe: its length in the low
// 32 bits, a version in the high 32, incremented by every pop.
//
// A pop reads the word, reads the top slot, and swaps the word for one with
// the length lowered and the version raised. The version is what makes that
// swap safe: between the read and the swap, another allocator may pop the
// slot and the owner push a different index in its place, leaving the
// length as it was (the ABA problem); the raised version makes the word
// differ, so the late swap fails and retries. A swap could only succeed
// wrongly after 2^32 pops between one allocator's read and its swap. A
// failed swap backs off a little before it retries, longer after each
// failure, so contending allocators do not take the word's cache line from
// each other on every attempt.
//
// A flush writes the indices past a stripe's top, where no current pop
// reads, and publishes them by swapping the length up. Only the owner
// pushes, so a failed swap means pops came first; the flush moves the
// indices that now lie past the end into the gap and swaps again. A flush
// therefore never stops remote allocators (the reference design freezes
// them with a bit in the word while it writes), and no word value repeats:
// pushes raise the length, pops raise the version.
//
// # Invariants
//
//   - A live Handle's generation is the generation recorded for its index;
//     no two live Handles share an index.
//   - Every issued index is exactly one of: live, buffered in the owner, on
//     the shared free list, or retired. Stats reports the counts.
//   - Generations run from 0 to 2^32-2; an index whose last generation is
//     freed is retired (never reused) rather than wrapped, so a stale Handle
//     can never become live again.
//
// # Concurrency
//
// Owner methods must not run concurrently with each other: an Owner is used
// by one goroutine at a time, like any Go value. Remote methods may run
// concurrently with each other and with any Owner method, Close included,
// from any number of goroutines. In full:
//
//	                 Owner method   Remote method
//	Owner method     no             yes
//	Remote method    yes            yes
//
// Allocations and Close: an Alloc that starts after Close has returned
// fails with ErrClosed; one that overlaps Close may still succeed.
//
// # Caveats
//
// Handles are names, not capabilities: a Handle built with Pack for a
// generation the owner has not handed out yet passes for live, and freeing
// it corrupts the free list. Pass only Handles an allocator returned.
//
// Remote allocators see only flushed frees: an owner that frees without
// flushing makes them take fresh indices, and the index space grows. Flush
// once a frame, or whenever remote allocators should catch up.
//
// Memory: the generation table and each stripe of the free list grow by
// doubling chunks, 4 and 8 bytes per index held, and never shrink; an Owner
// starts with 256 bytes a stripe.
package handle
