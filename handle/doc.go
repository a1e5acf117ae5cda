// Package handle hands out generational handles: 64-bit names, an index and
// a generation, for anything a program wants to refer to without a pointer.
//
// Its user in gpumem is package meshlet: a Manager's batch handles are
// this package's, so a loader goroutine reserves a batch's handle without a
// lock (meshlet.Remote) while the goroutine that owns the manager works,
// and hands the batch over to be placed under it (AddReserved). A
// bindless.Registry is keyed by the caller's own ids, and Handles a Remote
// reserves serve as those (bindless's ExampleRegistry_loader).
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
// the owner's own Allocate takes those back first, most recent first, without
// any atomic operation. With none buffered, it takes up to 32 from the
// shared free list into its buffer in one compare-and-swap. Flush, or a Free that finds the buffer full, moves
// them to the shared free list in one batch, where remote allocators see
// them. The owner alone keeps the generation table; a freed Handle carries
// its next generation through the list, so a remote pop reads nothing but
// the list.
//
// The shared free list is split in stripes, one per processor (GOMAXPROCS
// when New runs, up to 32), each a queue with a word of its own on a cache
// line of its own. Each Remote made pops first from one stripe, the next
// one for each Remote made (a copy of a Remote shares its stripe), and a
// flush spreads the buffered frees evenly over the stripes of the Remotes
// made so far: allocators on different goroutines, each with its own
// Remote, pop different stripes and do not contend. A Remote whose stripe
// is empty takes from the others, in turn, before it takes a fresh index.
// With one Remote, or none, there is one stripe in use and the list is a
// single queue. Each stripe hands out its indices oldest first; the owner's
// own Allocate reuses its buffered frees newest first. Oldest first spreads
// reuse over every index waiting, so each index's generations run out
// later, at a price: a remote reuses the index freed longest ago, whose
// entries in a program's side tables are likely cold.
//
// A stripe is a queue of Handles in a ring of slots. One 64-bit word
// describes it: two 32-bit positions that only ever grow (modulo 2^32), the
// head, where pops take, and the tail, where the owner adds; the Handles
// waiting are those at positions head to tail-1, position p in slot p
// modulo the ring's size.
//
// A pop reads the word, then the ring, then the slots at the head, and
// swaps the word for one with the head raised. The swap fails if anything
// moved meanwhile, and the pop retries: another pop raised the head, or
// the owner the tail. Positions never repeat before 2^32 pops, so no word
// value comes back (the ABA problem cannot arise) unless an allocator
// stalls between its read and its swap while 2^32 other pops run. A
// failed swap backs off a little before it retries, longer after each
// failure, so contending allocators do not take the word's cache line from
// each other on every attempt.
//
// A flush writes its Handles in the slots past the tail, where no pop
// reads, and publishes them by swapping the tail up. Only the owner moves
// the tail, so a failed swap only means pops moved the head; the slots are
// right as they are and the swap is tried again. A flush therefore never
// stops remote allocators (the reference design freezes them with a bit
// in the word while it writes), and what it writes never moves. A pop that
// read its word a whole ring ago may read a slot the owner is rewriting;
// the head has moved on since, so its swap fails.
//
// A ring starts with 256 slots. A flush that would overfill it first
// copies the waiting Handles into a ring twice as large (or more) and
// publishes that one, then writes its own: a pop that read the word before,
// its head still current, finds the Handles it reads at the same positions
// in either ring (one whose head moved on fails its swap anyway). The old
// ring is never written again and stays valid for as long as any pop holds
// it (the garbage collector keeps it): no memory a reader can reach is ever
// freed, moved or reused for anything else, the guarantee the reference
// design gets from chunks that never move. A pop reads the ring only after
// the word, so a word that counts Handles only the new ring holds comes
// with that ring.
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
// concurrently with each other and with any Owner method, Release included,
// from any number of goroutines. In full:
//
//	                 Owner method   Remote method
//	Owner method     no             yes
//	Remote method    yes            yes
//
// Allocations and Release: an Allocate that starts after Release has returned
// fails with ErrReleased; one that overlaps Release may still succeed.
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
// Memory: the generation table grows by doubling chunks, 4 bytes per
// index issued, and each stripe's ring by doubling, 8 bytes per Handle it
// has held at once; neither shrinks. A stripe takes 128 bytes, and its
// first ring 2 KiB when it first receives Handles.
package handle
