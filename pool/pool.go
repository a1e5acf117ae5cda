package pool

// Design
//
// Every buffer the pool holds has an entry. An idle entry is in two
// doubly linked lists: its usage's list for its class, most recently
// put back first (so reuse takes the warmest buffer and the others age
// toward eviction), and the pool's list of idle entries in release order,
// oldest first (eviction by age or budget takes from its head). A leased
// entry is in the pool's list of leased entries instead (so Release finds
// it), through the same links as the class list.
//
// Each usage has one list head per class and a bitmap of the classes with
// an idle entry. Acquire:
//
//  1. Compute the request's class c (class.go).
//  2. Read the bitmap's bits c to c+7 (at most two words). Of the classes
//     set there, the first whose size is a multiple of the alignment holds
//     the best fit: unlink its list's head and lease it.
//  3. Otherwise create a buffer of class c's size: check the budget
//     (counting idle bytes as room), create, then evict the oldest idle
//     entries until the new buffer fits, and lease it.
//
// Put checks the Lease against the entry (the entry's generation
// counts its leases, so a Lease is good for one release), pushes the entry
// on its class list and the idle list, sets the bitmap bit, and evicts
// from the idle list's head what has been idle for MaxIdle. Each entry is
// evicted once, so that work is O(1) amortized.

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/gpumem/gpumem/device"
)

// Pool keeps a device's buffers for reuse. See the package documentation;
// a Pool is not safe for concurrent use.
type Pool struct {
	dev    device.Device
	opts   Options
	maxBuf uint64

	usages map[device.Usage]*usageClasses
	last   *usageClasses // the usage of the last Acquire, to skip the map

	oldest, newest *entry // idle entries, in release order
	leased         *entry // leased entries, any order

	stats    Stats
	released bool
}

// usageClasses holds the idle entries of one usage.
type usageClasses struct {
	usage device.Usage
	heads [numClasses]*entry      // per class, most recently put back first
	bits  [numClasses / 64]uint64 // bit c: heads[c] != nil
}

// entry is one buffer the pool holds.
type entry struct {
	pool  *Pool
	buf   device.Buffer
	size  uint64
	uc    *usageClasses
	class int
	gen   uint64 // incremented by every Put: a Lease of another gen is stale
	id    uint64 // creation number, from 1: names the buffer in Memory
	inUse bool

	prev, next   *entry    // class list when idle, leased list when leased
	older, newer *entry    // idle list
	idleSince    time.Time // when put back, if MaxIdle is set
}

// Lease is a caller's claim on one pooled buffer, from Acquire until
// Release. It is a small value; copies are the same claim. The zero Lease
// is no claim.
type Lease struct {
	e   *entry
	gen uint64
}

// Buffer returns the leased buffer, or nil for the zero Lease and for a
// Lease put back already. O(1).
func (l Lease) Buffer() device.Buffer {
	if l.e == nil || !l.e.inUse || l.e.gen != l.gen {
		return nil
	}
	return l.e.buf
}

// Size returns the leased buffer's size in bytes: the request's class, at
// least what Acquire asked for. 0 for a Lease that Buffer returns nil for.
func (l Lease) Size() uint64 {
	if l.Buffer() == nil {
		return 0
	}
	return l.e.size
}

// New returns a pool of dev's buffers. It fails with ErrInvalidOptions
// (a nil dev too).
func New(dev device.Device, opts Options) (*Pool, error) {
	if dev == nil {
		return nil, fmt.Errorf("pool.New: %w: nil device", ErrInvalidOptions)
	}
	o, err := opts.resolve()
	if err != nil {
		return nil, fmt.Errorf("pool.New: %w", err)
	}
	return &Pool{
		dev:    dev,
		opts:   o,
		maxBuf: dev.Limits().MaxBufferSize,
		usages: make(map[device.Usage]*usageClasses),
	}, nil
}

// Acquire leases a buffer of at least size bytes, with a size that is a
// multiple of align (a power of two; 0 means 4) and exactly the given
// usage: an idle one if one fits (best fit, see the package
// documentation), else a new one. It fails with ErrInvalidRequest,
// ErrTooLarge, ErrOverBudget, the device's error (device.ErrOutOfMemory
// ...) or device.ErrReleased, and then changes nothing. O(1), plus the evictions a
// new buffer's budget needs; a reuse does not allocate, a creation
// allocates the entry and whatever the device allocates.
func (p *Pool) Acquire(size, align uint64, usage device.Usage) (Lease, error) {
	if p.released {
		return Lease{}, fmt.Errorf("acquire: %w", errReleased)
	}
	if align == 0 {
		align = device.CopyAlignment
	}
	switch {
	case size == 0:
		return Lease{}, fmt.Errorf("%w: zero size", ErrInvalidRequest)
	case align&(align-1) != 0 || align < device.CopyAlignment:
		return Lease{}, fmt.Errorf("%w: alignment %d is not a power of two of at least %d", ErrInvalidRequest, align, device.CopyAlignment)
	case size > p.maxBuf || align > p.maxBuf || size > math.MaxUint64-(align-1):
		return Lease{}, fmt.Errorf("%w: %d bytes aligned to %d, device maximum %d", ErrTooLarge, size, align, p.maxBuf)
	}
	c := requestClass(size, align)
	bytes := classBytes(c)
	// A class beyond 2^64 bytes wraps (a device that reports a maximum
	// near 2^64): bytes below size says so.
	if bytes > p.maxBuf || bytes < size {
		return Lease{}, fmt.Errorf("%w: %d bytes round to %d, device maximum %d", ErrTooLarge, size, bytes, p.maxBuf)
	}
	uc := p.last
	if uc == nil || uc.usage != usage {
		uc = p.usages[usage]
		if uc == nil {
			if err := usage.Validate(); err != nil {
				return Lease{}, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
			}
			uc = &usageClasses{usage: usage}
			p.usages[usage] = uc
		}
		p.last = uc
	}
	if e := uc.fit(c, align); e != nil {
		p.unlinkIdle(e)
		p.lease(e)
		p.stats.Reuses++
		p.stats.Acquires++
		return Lease{e, e.gen}, nil
	}
	return p.create(uc, c, bytes)
}

// create makes, leases and returns a new buffer of class c.
func (p *Pool) create(uc *usageClasses, c int, bytes uint64) (Lease, error) {
	if b := p.opts.BudgetBytes; b > 0 && (bytes > b || p.stats.BytesLeased > b-bytes) {
		p.stats.Refusals++
		return Lease{}, fmt.Errorf("%w: %d bytes more with %d leased of %d", ErrOverBudget, bytes, p.stats.BytesLeased, b)
	}
	buf, err := p.dev.CreateBuffer(device.BufferDesc{Label: p.opts.Label, Size: bytes, Usage: uc.usage})
	if err != nil {
		p.stats.Refusals++
		return Lease{}, fmt.Errorf("pool: create %d bytes for %v: %w", bytes, uc.usage, err)
	}
	if b := p.opts.BudgetBytes; b > 0 {
		for p.stats.BytesHeld > b-bytes { // bytes <= b: checked above
			p.evict(p.oldest) // there is one: the check above counted idle bytes as room
		}
	}
	e := &entry{pool: p, buf: buf, size: bytes, uc: uc, class: c, id: p.stats.Creations + 1}
	p.stats.Buffers++
	p.stats.BytesHeld += bytes
	p.lease(e)
	p.stats.Creations++
	p.stats.Acquires++
	return Lease{e, e.gen}, nil
}

// Put gives l's buffer back to the pool for reuse, and evicts what has
// been idle for MaxIdle. It fails with ErrUnknownLease for the zero Lease
// or one of another pool, ErrNotLeased for a Lease put back already, and
// device.ErrReleased. O(1) amortized; no allocation but on error.
func (p *Pool) Put(l Lease) error {
	e := l.e
	switch {
	case e == nil || e.pool != p:
		return fmt.Errorf("put: %w", ErrUnknownLease)
	case p.released:
		return fmt.Errorf("put: %w", errReleased)
	case !e.inUse || e.gen != l.gen:
		return fmt.Errorf("put of a %d-byte %v buffer: %w", e.size, e.uc.usage, ErrNotLeased)
	}
	e.inUse = false
	e.gen++
	p.listRemove(&p.leased, e)
	p.stats.Leased--
	p.stats.BytesLeased -= e.size
	p.stats.Puts++

	// Push on the class list and the tail of the idle list.
	uc := e.uc
	p.listPush(&uc.heads[e.class], e)
	uc.bits[e.class>>6] |= 1 << (e.class & 63)
	e.older, e.newer = p.newest, nil
	if p.newest != nil {
		p.newest.newer = e
	} else {
		p.oldest = e
	}
	p.newest = e
	p.stats.Idle++
	p.stats.BytesIdle += e.size
	if p.opts.MaxIdle > 0 {
		now := p.opts.Clock()
		e.idleSince = now
		p.evictExpired(now)
	}
	return nil
}

// Evict evicts every buffer idle for at least MaxIdle and returns how many
// it evicted; none when MaxIdle is 0. O(evicted); it reads the clock once.
func (p *Pool) Evict() int {
	if p.released || p.opts.MaxIdle == 0 {
		return 0
	}
	return p.evictExpired(p.opts.Clock())
}

// Trim evicts idle buffers, oldest put back first, until at most keepBytes
// of idle buffers remain, and returns how many it evicted. Trim(0) evicts
// every idle buffer. O(evicted).
func (p *Pool) Trim(keepBytes uint64) int {
	n := 0
	for p.oldest != nil && p.stats.BytesIdle > keepBytes {
		p.evict(p.oldest)
		n++
	}
	return n
}

// Shrink evicts every idle buffer, Trim(0), and returns their bytes: a
// budget.Reclaimer as it is. It never fails. O(evicted).
func (p *Pool) Shrink() (freedBytes uint64, err error) {
	before := p.stats.BytesIdle
	p.Trim(0)
	return before - p.stats.BytesIdle, nil
}

// Release releases every buffer the pool holds to the device, idle and
// leased: every Lease becomes stale, and the device frees the memory once
// the GPU is done with it. Later Acquire and Put calls fail with
// device.ErrReleased; Stats still works. Release is idempotent and nil-safe.
func (p *Pool) Release() {
	if p == nil || p.released {
		return
	}
	for p.oldest != nil {
		e := p.oldest
		p.unlinkIdle(e)
		p.drop(e)
	}
	for p.leased != nil {
		e := p.leased
		p.listRemove(&p.leased, e)
		p.stats.Leased--
		p.stats.BytesLeased -= e.size
		e.inUse = false
		e.gen++
		p.drop(e)
	}
	p.usages, p.last = nil, nil
	p.released = true
}

// Stats returns the pool's statistics. O(1).
func (p *Pool) Stats() Stats { return p.stats }

// fit returns the idle entry that best fits a request of class c and the
// given alignment, or nil.
func (uc *usageClasses) fit(c int, align uint64) *entry {
	w, sh := c>>6, uint(c&63)
	window := uc.bits[w] >> sh
	if sh > 64-fitClasses && w+1 < len(uc.bits) {
		window |= uc.bits[w+1] << (64 - sh)
	}
	window &= 1<<fitClasses - 1
	for window != 0 {
		k := c + bits.TrailingZeros64(window)
		if classBytes(k)&(align-1) == 0 {
			return uc.heads[k]
		}
		window &= window - 1
	}
	return nil
}

// lease marks e leased and puts it on the leased list.
func (p *Pool) lease(e *entry) {
	e.inUse = true
	p.listPush(&p.leased, e)
	p.stats.Leased++
	p.stats.BytesLeased += e.size
}

// unlinkIdle takes idle e off its class list and the idle list.
func (p *Pool) unlinkIdle(e *entry) {
	uc := e.uc
	p.listRemove(&uc.heads[e.class], e)
	if uc.heads[e.class] == nil {
		uc.bits[e.class>>6] &^= 1 << (e.class & 63)
	}
	if e.older != nil {
		e.older.newer = e.newer
	} else {
		p.oldest = e.newer
	}
	if e.newer != nil {
		e.newer.older = e.older
	} else {
		p.newest = e.older
	}
	e.older, e.newer = nil, nil
	p.stats.Idle--
	p.stats.BytesIdle -= e.size
}

// evictExpired evicts the idle entries put back at least MaxIdle before
// now and returns how many.
func (p *Pool) evictExpired(now time.Time) int {
	n := 0
	for e := p.oldest; e != nil && now.Sub(e.idleSince) >= p.opts.MaxIdle; e = p.oldest {
		p.evict(e)
		n++
	}
	return n
}

// evict releases idle e to the device.
func (p *Pool) evict(e *entry) {
	p.unlinkIdle(e)
	p.drop(e)
	p.stats.Evictions++
}

// drop forgets e, no longer on any list, and releases its buffer.
func (p *Pool) drop(e *entry) {
	p.stats.Buffers--
	p.stats.BytesHeld -= e.size
	e.buf.Release()
	e.buf = nil
}

// listPush puts e at the front of the list at head.
func (p *Pool) listPush(head **entry, e *entry) {
	e.prev, e.next = nil, *head
	if *head != nil {
		(*head).prev = e
	}
	*head = e
}

// listRemove takes e off the list at head.
func (p *Pool) listRemove(head **entry, e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		*head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	}
	e.prev, e.next = nil, nil
}
