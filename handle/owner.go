package handle

import (
	"fmt"
	"slices"
)

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
	remotes uint64           // Remotes made: the next one's stripe, modulo the stripes
	cursor  uint32           // the stripe the next flush starts at
	closed  bool
}

// New returns an Owner with no handles issued.
func New() *Owner { return newOwner(defaultStripes()) }

// newOwner returns an Owner whose shared free list has the given number of
// stripes.
func newOwner(stripes int) *Owner { return &Owner{sh: newShared(stripes)} }

// Remote returns an allocator that allocates from o's indices and may be
// used from any goroutine. Remotes are small values; copy them freely.
//
// Each Remote made pops first from a stripe of the shared free list of its
// own, in turn, and flushes spread o's frees over the stripes of the
// Remotes made; so that allocators running at the same time do not contend,
// make one Remote for each goroutine that allocates often, rather than
// sharing one.
func (o *Owner) Remote() Remote {
	k := uint64(len(o.sh.stripes))
	home := uint32(o.remotes % k)
	o.remotes++ // 64 bits: never wraps, so active only grows
	if o.remotes <= k {
		o.sh.active.Store(uint32(o.remotes))
	}
	return Remote{o.sh, &o.sh.stripes[home], home}
}

// Allocate returns a live Handle: the most recently freed index still buffered
// in o, else one from the shared free list (taking the next ones into the
// buffer, see refill), else a fresh index. It fails
// with ErrReleased after Release and ErrExhausted when no index is left. O(1);
// no allocation but on error.
func (o *Owner) Allocate() (Handle, error) {
	if o.n > 0 && !o.closed { // fast path
		o.n--
		return o.local[o.n], nil
	}
	return o.allocShared()
}

func (o *Owner) allocShared() (Handle, error) {
	if o.closed {
		return 0, fmt.Errorf("alloc: %w", ErrReleased)
	}
	// Refill the buffer from the shared free list in one swap rather than
	// a swap a call: an owner that allocates many in a row (a mesh
	// allocator's frame of Adds) pays one swap per refill. The buffer
	// hands them out in the list's order.
	if o.n = o.sh.pop(0, o.local[:refill]); o.n > 0 {
		slices.Reverse(o.local[:o.n])
		o.n--
		return o.local[o.n], nil
	}
	return o.sh.fresh1()
}

// refill is how many Handles an Owner with an empty buffer takes from the
// shared free list at once: enough that the swap's cost vanishes, few
// enough that Remotes, which pop from the same list, are not kept from
// many freed indices by an owner that may not use them soon.
const refill = 32

// AllocMany fills dst with live Handles, as len(dst) calls to Allocate would,
// and returns how many it wrote: len(dst), or fewer with ErrExhausted (the
// ones written are live) or none with ErrReleased. It takes what it needs
// from the shared free list with one swap and the rest of the fresh indices
// with one atomic add. O(len(dst)); no allocation but on error.
func (o *Owner) AllocMany(dst []Handle) (int, error) {
	if o.closed {
		return 0, fmt.Errorf("alloc: %w", ErrReleased)
	}
	k := 0
	for k < len(dst) && o.n > 0 {
		o.n--
		dst[k] = o.local[o.n]
		k++
	}
	k += o.sh.pop(0, dst[k:])
	n, err := o.sh.fresh(dst[k:])
	return k + n, err
}

// Free frees h: h and every copy of it become stale, and its index is
// buffered for reuse with the next generation. An index whose generations
// are spent is retired instead. Free fails with ErrStale when h is not
// live (freed already, never issued, the zero Handle) and ErrReleased after
// Release. O(1) but when its buffer is full, and it flushes (see Flush). It
// allocates only on error, for the first free of an index in a chunk of
// the generation table not yet made (chunks double: 23 in all), and when
// its flush grows a ring.
func (o *Owner) Free(h Handle) error {
	// Fast path: an index freed before (so its chunk exists, and its
	// generation is not 0, which proves it issued), live, not at its last
	// generation nor retired (g-1 < retired-2 excludes 0, retired-1 and
	// retired in one unsigned comparison), with room in the buffer.
	g := h.Generation()
	k, off := locate(h.Index())
	if c := o.gens[k]; g-1 < retired-2 && uint(o.n) < localCap && !o.closed &&
		c != nil && c[off] == g {
		c[off] = g + 1
		o.local[o.n] = h + 1<<32 // the next generation
		o.n++
		return nil
	}
	return o.free(h)
}

func (o *Owner) free(h Handle) error {
	if o.closed {
		return fmt.Errorf("free %v: %w", h, ErrReleased)
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
	for k := 0; k < len(hs); k++ {
		k += o.freeRun(hs[k:])
		if k == len(hs) {
			break
		}
		if err := o.free(hs[k]); err != nil {
			return fmt.Errorf("handle %d of %d: %w", k, len(hs), err)
		}
	}
	return nil
}

// freeRun frees the Handles at the start of hs that Free's fast path
// takes, as many as the buffer has room for, and returns how many it
// freed. FreeMany's inner loop: one call for a run of Handles, where Free
// is a call each.
func (o *Owner) freeRun(hs []Handle) int {
	n := o.n
	if o.closed {
		return 0
	}
	room := localCap - n
	if len(hs) > room {
		hs = hs[:room]
	}
	for k, h := range hs {
		g := h.Generation()
		ck, off := locate(h.Index())
		c := o.gens[ck]
		if g-1 >= retired-2 || c == nil || c[off] != g { // as in Free
			o.n = n + k
			return k
		}
		c[off] = g + 1
		o.local[n+k] = h + 1<<32
	}
	o.n = n + len(hs)
	return len(hs)
}

// Flush moves the frees buffered in o to the shared free list, where
// remote allocators can reuse them, spread evenly over the stripes of the
// Remotes made so far. It never blocks them: they keep popping while it
// runs. O(buffered frees + stripes), plus a retried swap for each pop that
// overlaps it. It allocates only when a stripe's ring is full: a ring
// twice as large, into which it copies the ring's Handles, O(1) a Handle
// amortized (see the package documentation).
func (o *Owner) Flush() {
	if o.n == 0 {
		return
	}
	k := o.sh.active.Load()
	q, r := uint32(o.n)/k, uint32(o.n)%k
	hs := o.local[:o.n]
	// Stripes cursor, cursor+1, ... take q+1 Handles while the remainder
	// lasts, q after; the next flush starts where the remainder ended, so
	// that small flushes take turns.
	start := o.cursor % k
	i := start
	for range min(k, uint32(o.n)) {
		m := q
		if r > 0 {
			m++
			r--
		}
		o.sh.push(&o.sh.stripes[i], hs[:m])
		hs = hs[m:]
		if i++; i == k {
			i = 0
		}
	}
	o.cursor = (start + uint32(o.n)%k) % k
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

// Release ends o: every later allocation or free, by o or its remote
// allocators, fails with ErrReleased. Live and Stats still work. Release is
// idempotent and nil-safe. (The table holds no device memory; what it
// gives up is its handles.)
func (o *Owner) Release() {
	if o == nil {
		return
	}
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
		Shared:   o.sh.length(),
		Retired:  o.retired,
	}
	s.Live = s.Issued - uint64(s.Buffered) - s.Shared - s.Retired
	return s
}
