package arena

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/invariant"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/offset"
)

// none marks an absent allocation id (a sweep pointer with nothing to name).
const none = ^uint32(0)

// Handle names one allocation of an Arena for its whole life, whatever
// moves it. Handles are comparable: use them as map keys. The zero Handle
// names nothing. A Handle carries its arena's identity, so an arena
// refuses another arena's handles (ErrInvalidHandle) even where the two
// allocations have the same ID and generation.
type Handle struct {
	id    uint32 // the allocation's offset.Allocation.ID
	gen   uint32 // slot generation; 0 never names a live slot
	arena uint32 // the arena's serial number (Arena.serial); never 0
}

// serials numbers arenas for their handles: each New takes the next
// number, skipping 0 (the zero Handle's). The counter wraps after 2^32
// arenas; only then can two arenas share a number, and a foreign handle
// go unnoticed.
var serials atomic.Uint32

func nextSerial() uint32 {
	for {
		if s := serials.Add(1); s != 0 {
			return s
		}
	}
}

// ID returns a small integer naming the allocation among the arena's live
// ones: below Options.MaxAllocs, fixed for the allocation's life, and
// reused by a later allocation once this one is freed. Index side tables
// with it instead of hashing handles. The zero Handle's ID is 0.
func (h Handle) ID() uint32 { return h.id }

// Move reports one allocation moved by a sweep or a compaction: its
// elements now start at To instead of From. Growth moves nothing: offsets
// survive it, only the buffer changes (see Arena.Buffer).
type Move struct {
	Handle
	// Owner is the tag the allocation was given (AllocateOwned; 0 for
	// Allocate): who to tell, without a map from handles.
	Owner           uint64
	From, To, Elems uint32
}

// slot is the arena's record of one live allocation, indexed by its id.
type slot struct {
	alloc offset.Allocation // Offset kept current across slides
	owner uint64            // the caller's tag (AllocateOwned)
	elems uint32            // elements asked for (alloc.Size may be rounded)
	gen   uint32
	// change is the index of its pending move in the change log
	// (memory.ChangeLog.MovedWithin).
	change int32
	// from is where the allocation was before its moves not yet in the
	// change log; valid while moved is set (changes.go).
	from  uint32
	moved bool
}

// sweep is the state of the incremental compaction. An episode is armed by
// a fragmentation refusal and ends when a pass reaches the end of the range
// with nothing left behind it, or by a full compaction.
type sweep struct {
	armed bool
	// grew reports whether this episode has spent its one growth.
	grew bool
	// cursor is the allocation the running pass visits next; none when no
	// pass runs or it reached the end.
	cursor uint32
	// restart is the allocation just after the lowest hole opened behind
	// the running pass (or, with no pass running, since the range was last
	// packed): where the next pass starts. none when no such hole is known.
	restart uint32
}

// Arena is one growable device buffer whose space an offset allocator hands
// out in elements, and which compacts itself incrementally: handles are
// stable while offsets change, and every move is reported (OnMove, and
// the lists Sweep and Compact return).
//
// An Arena is not safe for concurrent use.
type Arena struct {
	dev  device.Device
	opts Options
	buf  device.Buffer
	// ahead is the next growth's buffers, prepared (ahead.go); nil when
	// none are.
	ahead *ahead
	// planes are the buffers of Options.Planes, in its order.
	planes []device.Buffer
	alloc  *offset.Allocator
	slots  []slot
	sw     sweep
	moves  []device.Move // reused batch
	// planeMoves is the batch scaled to a plane's element size.
	planeMoves []device.Move
	done       []Move // reused report
	stats      Stats
	// timing is the GPU timing of batches of moves (timing.go).
	timing moveTiming
	// changes is what Changes reports next (changes.go), but for the
	// moves of movedIDs, entered into it only when needed (logMoves).
	changes memory.ChangeLog
	// movedIDs lists the allocations with a move not yet in changes: the
	// live ones among them have slot.moved set, and a slot's from is
	// where its first such move started.
	movedIDs []uint32
	// occupied is the sum of elements asked for by live allocations.
	occupied uint64
	// serial names the arena in its handles (see Handle).
	serial uint32
	// guard is opts.MarginElems(), computed once: size needs it for every
	// request, and it costs a division.
	guard    uint32
	released bool
	// lowSweeps counts the Sweep calls in a row that found occupancy low
	// (shrink.go).
	lowSweeps int
	// Guards (guard.go): the fill of new margins, CheckGuards' scratch.
	guardFill []byte
	guards    []device.Guard
	guardIDs  []uint32
	// Place's scratch and state (place.go).
	sizes      []uint32         // per request: what it takes from the allocator
	rest       []int32          // requests left after the holes
	order      []written        // placed requests by offset
	placeMoves []Move           // the moves Place reports
	placing    bool             // a compaction inside Place: flush reports to placeMoves
	fresh      []Placement      // the batch's placements so far, while placing
	isFresh    []bool           // by allocation id, set only inside reportMoves
	wReqs      []Request        // the batch being written
	wRun       []written        // the run being written
	wPlane     int              // the plane being written
	gather     func(dst []byte) // gatherRun, made once
	split      splitGather      // a run's gather in parts
}

// New creates an arena on dev with its first buffer. It returns
// ErrInvalidOptions for options that cannot work (those Options.Validate
// refuses), or the device's error when the buffer cannot be created.
func New(dev device.Device, opts Options) (*Arena, error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: nil device", ErrInvalidOptions)
	}
	o, err := opts.resolve(dev.Limits())
	if err != nil {
		return nil, err
	}
	alloc, err := offset.NewPolicy(o.InitialElems, o.MaxAllocs, o.Policy)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	bufs, err := o.createBuffers(dev, o.InitialElems)
	if err != nil {
		return nil, fmt.Errorf("arena %q: create buffer: %w", o.Label, err)
	}
	a := &Arena{
		dev:    dev,
		opts:   o,
		buf:    bufs[0],
		planes: bufs[1:],
		alloc:  alloc,
		slots:  make([]slot, o.MaxAllocs),
		sw:     sweep{cursor: none, restart: none},
		serial: nextSerial(),
		guard:  o.MarginElems(),
	}
	a.startTiming()
	return a, nil
}

// createBuffers creates the arena's buffers for capacity elems: the
// first, then one per plane. On failure it releases those it made.
func (o *Options) createBuffers(dev device.Device, elems uint32) ([]device.Buffer, error) {
	bufs := make([]device.Buffer, 1+len(o.Planes))
	for i := range bufs {
		b, err := dev.CreateBuffer(o.bufferDesc(i, elems))
		if err != nil {
			for _, b := range bufs[:i] {
				b.Release()
			}
			return nil, err
		}
		bufs[i] = b
	}
	return bufs, nil
}

// bufferDesc describes plane i's buffer for capacity elems.
func (o *Options) bufferDesc(i int, elems uint32) device.BufferDesc {
	desc := device.BufferDesc{Label: o.Label, Size: uint64(elems) * uint64(o.planeElemSize(i)), Usage: o.Usage}
	if i > 0 {
		desc.Label += " plane " + strconv.Itoa(i)
	}
	return desc
}

// planeElemSize returns the element size of plane i: 0 is the first
// buffer's.
func (o *Options) planeElemSize(i int) uint32 {
	if i == 0 {
		return o.ElemSize
	}
	return o.Planes[i-1]
}

// Planes returns how many buffers the arena keeps in lockstep: 1 and one
// per Options.Planes entry.
func (a *Arena) Planes() int { return 1 + len(a.planes) }

// PlaneBuffer returns plane i's current buffer: 0 is Buffer's, 1 on those
// of Options.Planes. Growth replaces every plane's buffer, as Buffer says.
// nil for an i out of range.
func (a *Arena) PlaneBuffer(i int) device.Buffer {
	switch {
	case i == 0:
		return a.buf
	case i > 0 && i <= len(a.planes):
		return a.planes[i-1]
	}
	return nil
}

// Buffer returns the arena's current buffer. Growth replaces it: read it
// again after any Allocate, Sweep or Shrink (compare Stats().Growths and
// Stats().Shrinks to notice cheaply).
func (a *Arena) Buffer() device.Buffer { return a.buf }

// ElemSize returns the size of one element in bytes.
func (a *Arena) ElemSize() uint32 { return a.opts.ElemSize }

// Allocate reserves elems elements and returns their handle, with owner
// tag 0: AllocateOwned(elems, 0).
func (a *Arena) Allocate(elems uint32) (Handle, error) { return a.AllocateOwned(elems, 0) }

// AllocateOwned reserves elems elements for owner and returns their handle.
// owner is the caller's tag for the allocation, kept as given: Owner
// returns it, and every Move and Region of the allocation carries it, so a
// manager learns whose range moved without a map of its own. When the
// allocator refuses, the arena makes room and tries again: it grows when
// short of space, and when the space is there but in pieces it arms a
// sweep and grows once to get through (a second such refusal before the
// sweep ends compacts fully); a device that refuses to grow gets a full
// compaction. Errors: ErrInvalidSize, ErrTooManyAllocations, ErrFull
// (wrapping the device's refusal, if any), or a device error from a copy
// or move. After an error every live allocation is intact. O(1) unless it
// grows or compacts; it does not allocate.
func (a *Arena) AllocateOwned(elems uint32, owner uint64) (Handle, error) {
	if a.released {
		return Handle{}, errReleased
	}
	size, err := a.size(elems)
	if err != nil {
		return Handle{}, err
	}
	h, err := offset.Allocation{}, offset.ErrOutOfSpace
	if size <= a.alloc.Capacity() {
		h, err = a.alloc.Allocate(size)
	}
	if err == offset.ErrOutOfSpace {
		if err = a.makeRoom(size); err != nil {
			return Handle{}, err
		}
		h, err = a.alloc.Allocate(size)
	}
	if err != nil {
		return Handle{}, a.refused(elems, err)
	}
	hd, err := a.place(h, elems, owner)
	if err == nil {
		a.prepareAhead()
	}
	return hd, err
}

// refused returns the error for the allocator's refusal err of a request
// of elems elements, other than a want of room.
func (a *Arena) refused(elems uint32, err error) error {
	if errors.Is(err, offset.ErrNodeLimit) {
		return fmt.Errorf("%w: %d (MaxAllocs)", ErrTooManyAllocations, a.opts.MaxAllocs)
	}
	return fmt.Errorf("arena %q: allocate %d elements: %w", a.opts.Label, elems, err)
}

// place records the allocator's new allocation h as elems elements for
// owner, fills its margin (guards) and returns its handle. When the margin
// cannot be written it frees h and returns the device's error.
func (a *Arena) place(h offset.Allocation, elems uint32, owner uint64) (Handle, error) {
	hd := a.record(h, elems, owner)
	if a.opts.GuardBytes > 0 {
		if err := a.fillGuard(hd.id); err != nil {
			_ = a.Free(hd) // the slot is live: cannot fail
			return Handle{}, fmt.Errorf("arena %q: fill the margin of %d elements: %w", a.opts.Label, elems, err)
		}
	}
	return hd, nil
}

// size returns what a request of elems takes from the allocator: elems, or
// its bin's size with RoundToBins. ErrInvalidSize for 0 or more than
// MaxElems.
func (a *Arena) size(elems uint32) (uint32, error) { return a.opts.size(a.guard, elems) }

// size is Arena.size for an arena of o whose margin is guard elements.
func (o *Options) size(guard, elems uint32) (uint32, error) {
	size := elems
	if g := guard; g > 0 {
		if size > o.MaxElems-min(g, o.MaxElems) {
			return 0, fmt.Errorf("%w: %d elements and a margin of %d (max %d)", ErrInvalidSize, elems, g, o.MaxElems)
		}
		size += g
	}
	if o.RoundToBins {
		size, _ = offset.RoundUp(size)
	}
	if elems == 0 || size == 0 || size > o.MaxElems {
		return 0, fmt.Errorf("%w: %d elements (max %d)", ErrInvalidSize, elems, o.MaxElems)
	}
	return size, nil
}

// handle returns the handle of the live allocation id.
func (a *Arena) handle(id uint32) Handle {
	return Handle{id: id, gen: a.slots[id].gen, arena: a.serial}
}

// slot returns the live slot h names.
func (a *Arena) slot(h Handle) (*slot, error) {
	if a.released {
		return nil, errReleased
	}
	if h.arena != a.serial || h.gen == 0 || h.id >= uint32(len(a.slots)) || a.slots[h.id].gen != h.gen {
		return nil, fmt.Errorf("%w: %v", ErrInvalidHandle, h)
	}
	// A slot's generation changes at every allocation and every free, so
	// a matching one is live.
	return &a.slots[h.id], nil
}

// Offset returns where h's elements start now, in elements. O(1).
func (a *Arena) Offset(h Handle) (uint32, error) {
	s, err := a.slot(h)
	if err != nil {
		return 0, err
	}
	return s.alloc.Offset, nil
}

// Owner returns the tag h was allocated with (AllocateOwned; 0 for
// Allocate). O(1).
func (a *Arena) Owner(h Handle) (uint64, error) {
	s, err := a.slot(h)
	if err != nil {
		return 0, err
	}
	return s.owner, nil
}

// Len returns the number of live allocations. O(1).
func (a *Arena) Len() int {
	if a.released {
		return 0
	}
	return a.alloc.Len()
}

// Elems returns how many elements h was allocated with. O(1).
func (a *Arena) Elems(h Handle) (uint32, error) {
	s, err := a.slot(h)
	if err != nil {
		return 0, err
	}
	return s.elems, nil
}

// Free gives h's elements back. A running sweep's walk stays correct: its
// pointers step off h, and a hole opened behind the pass is remembered for
// the next one. Its bytes are left as they are. O(1).
func (a *Arena) Free(h Handle) error {
	s, err := a.slot(h)
	if err != nil {
		return err
	}
	a.changes.ForgetAt(&a.slots[h.id].change, uint64(h.id))
	s.moved = false
	a.forget(h.id)
	if err := a.alloc.Free(s.alloc); err != nil {
		invariant.Broken("arena", "%q: free of a live range: %v", a.opts.Label, err)
	}
	a.occupied -= uint64(s.elems)
	s.gen++
	if s.gen == 0 {
		s.gen = 1
	}
	return nil
}

// Write writes data at byte offset off into h's elements (in the first
// plane; see RewritePlane for the others). off and len(data)
// are multiples of 4 and the range [off, off+len(data)) lies inside the
// allocation's elements, whatever off (ErrInvalidSize: no sum wraps);
// ErrInvalidHandle for a handle not live in this arena. On error nothing
// is written. O(len(data)).
func (a *Arena) Write(h Handle, off uint64, data []byte) error {
	start, err := a.byteRange(h, off, uint64(len(data)))
	if err != nil {
		return err
	}
	if err := a.dev.WriteBuffer(a.buf, start, data); err != nil {
		return fmt.Errorf("arena %q: write: %w", a.opts.Label, err)
	}
	return nil
}

// Read reads h's bytes from byte offset off into dst, waiting for the
// device (for tests and inspection). Same rules as Write.
func (a *Arena) Read(h Handle, off uint64, dst []byte) error {
	start, err := a.byteRange(h, off, uint64(len(dst)))
	if err != nil {
		return err
	}
	if err := a.dev.ReadBuffer(a.buf, start, dst); err != nil {
		return fmt.Errorf("arena %q: read: %w", a.opts.Label, err)
	}
	return nil
}

// byteRange returns the buffer offset of bytes [off, off+n) of h. The
// check is written so that no sum of caller values can wrap.
func (a *Arena) byteRange(h Handle, off, n uint64) (uint64, error) {
	s, err := a.slot(h)
	if err != nil {
		return 0, err
	}
	e := uint64(a.opts.ElemSize)
	size := uint64(s.elems) * e // at most 2^32 * 2^32: no overflow
	if off%4 != 0 || n%4 != 0 || off > size || n > size-off {
		return 0, fmt.Errorf("%w: %d bytes at byte %d of an allocation of %d bytes", ErrInvalidSize, n, off, size)
	}
	return uint64(s.alloc.Offset)*e + off, nil
}

// Release releases the arena's buffer (once the device is done with it).
// Handles die with it. Idempotent; later calls return device.ErrReleased.
func (a *Arena) Release() {
	if a == nil || a.released {
		return
	}
	a.released = true
	a.dropAhead()
	a.buf.Release()
	a.logMoves()
	a.changes.Released(a.buf, nil)
	for _, p := range a.planes {
		p.Release()
		a.changes.Released(p, nil)
	}
}
