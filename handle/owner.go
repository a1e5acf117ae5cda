package handle

import "fmt"

// localCap is how many frees an Owner buffers before it flushes them to the
// shared free list. A flush costs an atomic store per index plus two on the
// list word; 256 makes the word's share negligible, and the buffer (1 KiB)
// stays small enough to live inside the Owner.
const localCap = 256

// Owner allocates and frees Handles. It is the only one that frees; its
// Remote allocators only allocate. An Owner is not safe for concurrent use
// (see the package documentation for what may run alongside it); its zero
// value is not usable: call New.
type Owner struct {
	sh *shared
	// gens holds each index's current generation, in chunks (see
	// chunks.go); an index never freed has generation 0 and may have no
	// chunk yet. Only the owner reads and writes it: freed Handles carry
	// their next generation through the free list.
	gens    [numChunks][]uint32
	local   [localCap]Handle // freed, next generation, not yet flushed; most recent last
	n       int              // entries used in local
	retired uint64           // indices retired, their generations spent
	closed  bool
}

// New returns an Owner with no handles issued.
func New() *Owner {
	sh := &shared{}
	sh.next.Store(1) // index 0 is never issued: the zero Handle is never live
	return &Owner{sh: sh}
}

// Remote returns an allocator that allocates from o's indices and may be
// used from any goroutine. Remotes are small values; copy them freely.
func (o *Owner) Remote() Remote { return Remote{o.sh} }

// Alloc returns a live Handle: the most recently freed index still buffered
// in o, else one from the shared free list, else a fresh index. It fails
// with ErrClosed after Close and ErrExhausted when no index is left. O(1);
// it does not allocate, except a new chunk of the generation table when the
// index space grows.
func (o *Owner) Alloc() (Handle, error) {
	if o.n > 0 && !o.closed { // fast path
		o.n--
		return o.local[o.n], nil
	}
	return o.allocShared()
}

func (o *Owner) allocShared() (Handle, error) {
	if o.closed {
		return 0, fmt.Errorf("alloc: %w", ErrClosed)
	}
	if h, ok := o.sh.pop1(); ok {
		return h, nil
	}
	return o.sh.fresh1()
}

// AllocMany fills dst with live Handles, as len(dst) calls to Alloc would,
// and returns how many it wrote: len(dst), or fewer with ErrExhausted (the
// ones written are live) or none with ErrClosed. It takes what it needs
// from the shared free list with one swap and the rest of the fresh indices
// with one atomic add. O(len(dst)); no allocation.
func (o *Owner) AllocMany(dst []Handle) (int, error) {
	if o.closed {
		return 0, fmt.Errorf("alloc: %w", ErrClosed)
	}
	k := 0
	for k < len(dst) && o.n > 0 {
		o.n--
		dst[k] = o.local[o.n]
		k++
	}
	k += o.sh.pop(dst[k:])
	n, err := o.sh.fresh(dst[k:])
	return k + n, err
}

// Free frees h: h and every copy of it become stale, and its index is
// buffered for reuse with the next generation. An index whose generations
// are spent is retired instead. Free fails with ErrStale when h is not
// live (freed already, never issued, the zero Handle) and ErrClosed after
// Close. O(1) but for the flush of a full buffer, O(256); no allocation but
// on error.
func (o *Owner) Free(h Handle) error {
	// Fast path: an index freed before (so its chunk exists, and its
	// generation is not 0, which proves it issued), not at its last
	// generation nor retired (g-1 < retired-2 excludes 0, retired-1 and
	// retired in one unsigned comparison), with room in the buffer.
	i, g := h.Index(), h.Generation()
	k, off := locate(i)
	if c := o.gens[k]; g-1 < retired-2 && o.n < localCap && !o.closed &&
		c != nil && c[off] == g {
		c[off] = g + 1
		o.local[o.n] = Pack(i, g+1)
		o.n++
		return nil
	}
	return o.free(h)
}

func (o *Owner) free(h Handle) error {
	if o.closed {
		return fmt.Errorf("free %v: %w", h, ErrClosed)
	}
	i, g := h.Index(), h.Generation()
	if !o.live(i, g) {
		return fmt.Errorf("free %v: %w", h, ErrStale)
	}
	k, off := locate(i)
	c := o.gens[k]
	if c == nil {
		c = o.addChunk(k)
	}
	if g+1 == retired {
		c[off] = retired
		o.retired++
		return nil
	}
	c[off] = g + 1
	if o.n == localCap {
		o.Flush()
	}
	o.local[o.n] = Pack(i, g+1)
	o.n++
	return nil
}

// FreeMany frees hs in order, as calls to Free would. It stops at the
// first Handle Free refuses, returning that error with the Handle's
// position; the Handles before it are freed.
func (o *Owner) FreeMany(hs []Handle) error {
	for k, h := range hs {
		if err := o.Free(h); err != nil {
			return fmt.Errorf("handle %d of %d: %w", k, len(hs), err)
		}
	}
	return nil
}

// Flush moves the frees buffered in o to the shared free list, where
// remote allocators can reuse them. It never blocks them: they keep popping
// while it runs. O(buffered frees), plus the pops that overlap it; it
// allocates only a new chunk of the list when the list outgrows its chunks.
func (o *Owner) Flush() {
	if o.n == 0 {
		return
	}
	// Write the indices just past the list's top, where no pop reads (a
	// pop that began before a pop below it may read there, but its swap
	// fails), then publish them by raising the length with a swap. Only
	// the owner pushes, so a failed swap means pops lowered the length
	// meanwhile: the pushed indices must start lower. Slide the ones that
	// now lie past the new end down into the gap and swap again. Each
	// retry costs as many stores as there were pops.
	s := o.sh
	k := uint32(o.n)
	s.yield()
	w := s.word.Load()
	base := uint32(w & lenMask)
	for j, h := range o.local[:o.n] {
		s.yield()
		s.list.store(base+uint32(j), h)
	}
	for {
		s.yield()
		if s.word.CompareAndSwap(w, w+uint64(k)) {
			break
		}
		s.yield()
		w = s.word.Load()
		nb := uint32(w & lenMask) // < base: only pops ran
		from := max(base, nb+k)   // pushed entries past the new end...
		for p := from; p < base+k; p++ {
			s.yield()
			v := s.list.load(p)
			s.yield()
			s.list.store(nb+(p-from), v) // ...move into [nb, min(base, nb+k))
		}
		base = nb
	}
	o.n = 0
}

// Live reports whether h is live: issued by o or one of its remote
// allocators and not freed since. O(1); no allocation.
func (o *Owner) Live(h Handle) bool { return o.live(h.Index(), h.Generation()) }

func (o *Owner) live(i, g uint32) bool {
	k, off := locate(i)
	c := o.gens[k]
	cur := uint32(0)
	if c != nil {
		cur = c[off]
	}
	return o.issued(i) && g != retired && cur == g
}

// issued reports whether index i has been issued.
func (o *Owner) issued(i uint32) bool {
	return i != 0 && uint64(i) <= o.sh.issued()
}

// addChunk adds chunk k of the generation table.
func (o *Owner) addChunk(k uint32) []uint32 {
	c := make([]uint32, chunkLen(k))
	o.gens[k] = c
	return c
}

// Close closes o: every later allocation or free, by o or its remote
// allocators, fails with ErrClosed. Live and Stats still work. Close is
// idempotent.
func (o *Owner) Close() {
	o.closed = true
	o.sh.closed.Store(true)
}

// Stats is a snapshot of an Owner's indices. Issued = Live + Buffered +
// Shared + Retired.
type Stats struct {
	Issued   uint64 // indices ever issued: fresh ones taken, at most 2^32-1
	Live     uint64 // indices with a live Handle
	Buffered int    // frees buffered in the owner, not yet flushed
	Shared   uint64 // indices on the shared free list, ready for reuse
	Retired  uint64 // indices retired, their generations spent
}

// Stats returns a snapshot of o's indices. While remote allocators run it
// is a moment's view: Live and Shared may be off by the pops in flight.
// O(1).
func (o *Owner) Stats() Stats {
	s := Stats{
		Issued:   o.sh.issued(),
		Buffered: o.n,
		Shared:   o.sh.word.Load() & lenMask,
		Retired:  o.retired,
	}
	s.Live = s.Issued - uint64(s.Buffered) - s.Shared - s.Retired
	return s
}
