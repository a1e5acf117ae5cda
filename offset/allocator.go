package offset

import (
	"fmt"
	"math/bits"
	"sync/atomic"
)

// none marks an absent node index in every link.
const none = ^uint32(0)

// node is one region of the range: a live allocation or a free region. Nodes
// tile the range: following next links from Allocator.first visits regions
// whose offsets are contiguous from 0 to the capacity.
type node struct {
	off  uint32
	size uint32
	// binPrev and binNext link the free regions of one bin; unused while
	// the node is an allocation.
	binPrev, binNext uint32
	// prev and next link address-order neighbours.
	prev, next uint32
	// gen counts the allocations this node has held; an Allocation is live
	// only while its gen matches.
	gen  uint32
	used bool
}

// lastID hands every allocator an identity of its own, so an Allocation from
// one is refused by another.
var lastID atomic.Uint32

// Policy chooses where Allocate looks for a free region.
type Policy uint8

const (
	// Exact places every request where the reference OffsetAllocator
	// algorithm places it: the same capacity, node limit and calls give the
	// same offsets and the same refusals.
	Exact Policy = iota
	// Fit first looks for a large enough region in the bin just below the
	// request's bin — where Exact never looks, since regions there may be
	// too small — examining at most fitProbe of them, so it stays O(1).
	// When none fits it places as Exact does. It refuses fewer requests
	// than Exact and keeps larger regions whole longer.
	Fit
)

// fitProbe bounds how many regions of the lower bin Fit examines.
const fitProbe = 16

func (p Policy) String() string {
	switch p {
	case Exact:
		return "exact"
	case Fit:
		return "fit"
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// Allocation identifies one allocation for its whole life. Offset and Size
// are in the allocator's units; Size is the size asked for. The zero value
// is not a live allocation. Offset is the offset when the value was made:
// after SlideDown moves the allocation, Lookup gives the current one, and the
// old copy still identifies (and frees) the same allocation.
type Allocation struct {
	Offset uint32
	Size   uint32
	node   uint32
	gen    uint32
	owner  uint32
}

// Allocator hands out ranges of [0, Capacity) units. See doc.go.
//
// An Allocator is not safe for concurrent use.
type Allocator struct {
	nodes []node
	// free is a stack of unused node indices; free[:nfree] are valid.
	free  []uint32
	nfree uint32

	binHead  [numBins]uint32
	leafMask [numTopBins]uint8
	topMask  uint32

	capacity  uint32
	freeUnits uint32
	// first and last are the nodes at offset 0 and at the end of the range.
	first, last uint32
	live        uint32
	freeRegions uint32
	id          uint32
	policy      Policy
}

// New returns an allocator of capacity units, with room for maxAllocs nodes
// (allocations and free regions together; at most maxAllocs-1 are in use at
// once, as in the reference), placing as the Exact policy does. It allocates
// 36*maxAllocs bytes up front and nothing afterwards.
func New(capacity, maxAllocs uint32) (*Allocator, error) {
	return NewPolicy(capacity, maxAllocs, Exact)
}

// NewPolicy is New with a placement policy.
func NewPolicy(capacity, maxAllocs uint32, p Policy) (*Allocator, error) {
	if capacity == 0 {
		return nil, fmt.Errorf("%w: capacity 0", ErrInvalidCapacity)
	}
	if maxAllocs < 2 {
		return nil, fmt.Errorf("%w: node limit %d, need at least 2", ErrInvalidCapacity, maxAllocs)
	}
	if p > Fit {
		return nil, fmt.Errorf("offset: unknown policy %d", p)
	}
	a := &Allocator{
		nodes:    make([]node, maxAllocs),
		free:     make([]uint32, maxAllocs),
		capacity: capacity,
		policy:   p,
		id:       lastID.Add(1),
	}
	a.Reset()
	return a, nil
}

// Reset frees every allocation at once: the range is one free region again.
// Allocations made before Reset are no longer live. O(maxAllocs).
func (a *Allocator) Reset() {
	n := uint32(len(a.nodes))
	for i := range a.binHead {
		a.binHead[i] = none
	}
	a.leafMask = [numTopBins]uint8{}
	a.topMask = 0
	a.freeUnits = 0
	a.live = 0
	a.freeRegions = 0
	// The stack pops node 0 first, as the reference's does.
	for i := uint32(0); i < n; i++ {
		a.free[i] = n - 1 - i
		a.nodes[i].used = false
		a.nodes[i].gen++
	}
	a.nfree = n
	idx := a.insert(0, a.capacity)
	a.nodes[idx].prev, a.nodes[idx].next = none, none
	a.first, a.last = idx, idx
}

// Capacity returns the size of the range in units.
func (a *Allocator) Capacity() uint32 { return a.capacity }

// Policy returns the placement policy.
func (a *Allocator) Policy() Policy { return a.policy }

// Len returns the number of live allocations.
func (a *Allocator) Len() int { return int(a.live) }

// Allocate returns a range of size units. O(1); it never allocates memory.
// It returns ErrOutOfSpace (bare) when no free region can serve the request,
// ErrNodeLimit when the node limit is reached, and ErrZeroSize or ErrTooLarge
// for a size of zero or above the capacity.
func (a *Allocator) Allocate(size uint32) (Allocation, error) {
	if size == 0 || size > a.capacity {
		return Allocation{}, a.badSize(size)
	}
	// The reference refuses with one node left, whether or not the
	// request would split a region; keep that for identical refusals.
	if a.nfree <= 1 {
		return Allocation{}, fmt.Errorf("%w: %d nodes", ErrNodeLimit, len(a.nodes))
	}
	idx := a.search(size)
	if idx == none {
		return Allocation{}, ErrOutOfSpace
	}
	return a.take(idx, 0, size), nil
}

func (a *Allocator) badSize(size uint32) error {
	if size == 0 {
		return ErrZeroSize
	}
	return fmt.Errorf("%w: %d units, capacity %d", ErrTooLarge, size, a.capacity)
}

// search finds the free region Allocate serves size from, or none.
func (a *Allocator) search(size uint32) uint32 {
	minBin := binRoundUp(size)
	if a.policy == Fit && minBin > 0 && binSize(minBin) != uint64(size) {
		// Regions filed in the bin below may be large enough too, and
		// they are the tighter fit.
		n := a.binHead[minBin-1]
		for i := 0; n != none && i < fitProbe; i++ {
			if a.nodes[n].size >= size {
				return n
			}
			n = a.nodes[n].binNext
		}
	}
	minTop := minBin >> topBinShift
	if a.topMask&(1<<minTop) != 0 {
		leaf := uint32(a.leafMask[minTop]) &^ (1<<(minBin&leafBinMask) - 1)
		if leaf != 0 {
			return a.binHead[minTop<<topBinShift|uint32(bits.TrailingZeros32(leaf))]
		}
	}
	// Every bin of a higher top bin fits, since minBin was rounded up.
	if top := a.topMask &^ (1<<(minTop+1) - 1); top != 0 {
		t := uint32(bits.TrailingZeros32(top))
		return a.binHead[t<<topBinShift|uint32(bits.TrailingZeros32(uint32(a.leafMask[t])))]
	}
	return none
}

// take turns free region idx into an allocation of size units at pad units
// into the region; the pad before it and the remainder after it are filed
// as free regions. The caller has checked the region is large enough and
// that enough nodes are free for the splits.
func (a *Allocator) take(idx, pad, size uint32) Allocation {
	a.unlink(idx)
	nodes := a.nodes
	n := &nodes[idx]
	total := n.size
	if pad > 0 {
		p := a.insert(n.off, pad)
		nodes[p].prev = n.prev
		nodes[p].next = idx
		if n.prev != none {
			nodes[n.prev].next = p
		} else {
			a.first = p
		}
		n.prev = p
		n.off += pad
		total -= pad
	}
	n.size = size
	n.used = true
	n.gen++
	a.live++
	if rest := total - size; rest > 0 {
		r := a.insert(n.off+size, rest)
		nodes[r].prev = idx
		nodes[r].next = n.next
		if n.next != none {
			nodes[n.next].prev = r
		} else {
			a.last = r
		}
		n.next = r
	}
	return Allocation{Offset: n.off, Size: size, node: idx, gen: n.gen, owner: a.id}
}

// Free returns an allocation's range to the free space, merging it with free
// neighbours. O(1); it never allocates memory. An Allocation that is not live
// (see ErrInvalidAllocation) is refused and nothing changes.
func (a *Allocator) Free(h Allocation) error {
	idx, err := a.resolve(h)
	if err != nil {
		return err
	}
	nodes := a.nodes
	n := &nodes[idx]
	off, size := n.off, n.size
	prev, next := n.prev, n.next
	if prev != none && !nodes[prev].used {
		p := a.absorb(prev)
		off = p.off
		size += p.size
		prev = p.prev
	}
	if next != none && !nodes[next].used {
		q := a.absorb(next)
		size += q.size
		next = q.next
	}
	n.used = false
	a.live--
	a.release(idx)
	a.replace(prev, next, off, size)
	return nil
}

// replace files the free region [off, off+size) between address neighbours
// prev and next (either may be none) and links it to them.
func (a *Allocator) replace(prev, next, off, size uint32) {
	m := a.insert(off, size)
	nodes := a.nodes
	nodes[m].prev, nodes[m].next = prev, next
	if prev != none {
		nodes[prev].next = m
	} else {
		a.first = m
	}
	if next != none {
		nodes[next].prev = m
	} else {
		a.last = m
	}
}

// resolve returns the node of a live allocation.
func (a *Allocator) resolve(h Allocation) (uint32, error) {
	if h.owner != a.id {
		if h.owner == 0 {
			return none, fmt.Errorf("%w: zero Allocation", ErrInvalidAllocation)
		}
		return none, fmt.Errorf("%w: made by another allocator", ErrInvalidAllocation)
	}
	if h.node >= uint32(len(a.nodes)) {
		return none, fmt.Errorf("%w: node %d out of range", ErrInvalidAllocation, h.node)
	}
	n := &a.nodes[h.node]
	if !n.used || n.gen != h.gen {
		return none, fmt.Errorf("%w: offset %d size %d was freed", ErrInvalidAllocation, h.Offset, h.Size)
	}
	return h.node, nil
}

// Lookup returns the current value of a live allocation: its offset may have
// changed since h was made, if SlideDown moved it. O(1).
func (a *Allocator) Lookup(h Allocation) (Allocation, error) {
	idx, err := a.resolve(h)
	if err != nil {
		return Allocation{}, err
	}
	return a.handle(idx), nil
}

// ID returns a small integer naming the allocation among the live ones of
// its allocator: below the node limit given to New, the same for every copy
// of h and for the allocation's whole life, and reused by a later
// allocation once this one is freed. Callers index side tables with it.
// The zero Allocation's ID is 0, which a live allocation may also have.
func (h Allocation) ID() uint32 { return h.node }

func (a *Allocator) handle(idx uint32) Allocation {
	n := &a.nodes[idx]
	return Allocation{Offset: n.off, Size: n.size, node: idx, gen: n.gen, owner: a.id}
}

// insert takes a node from the stack and files it as the free region
// [off, off+size) at the head of its bin. Links to neighbours are the
// caller's job.
func (a *Allocator) insert(off, size uint32) uint32 {
	b := binRoundDown(size)
	top, leaf := b>>topBinShift, b&leafBinMask
	head := a.binHead[b]
	if head == none {
		a.leafMask[top] |= 1 << leaf
		a.topMask |= 1 << top
	}
	a.nfree--
	idx := a.free[a.nfree]
	n := &a.nodes[idx]
	n.off, n.size = off, size
	n.binPrev, n.binNext = none, head
	n.used = false
	if head != none {
		a.nodes[head].binPrev = idx
	}
	a.binHead[b] = idx
	a.freeUnits += size
	a.freeRegions++
	return idx
}

// unlink removes free region idx from its bin. The node stays in the
// address-order list; the caller reuses or releases it.
func (a *Allocator) unlink(idx uint32) {
	nodes := a.nodes
	n := &nodes[idx]
	if n.binPrev != none {
		nodes[n.binPrev].binNext = n.binNext
		if n.binNext != none {
			nodes[n.binNext].binPrev = n.binPrev
		}
	} else {
		b := binRoundDown(n.size)
		a.binHead[b] = n.binNext
		if n.binNext != none {
			nodes[n.binNext].binPrev = none
		} else {
			top := b >> topBinShift
			a.leafMask[top] &^= 1 << (b & leafBinMask)
			if a.leafMask[top] == 0 {
				a.topMask &^= 1 << top
			}
		}
	}
	a.freeUnits -= n.size
	a.freeRegions--
}

// absorb takes free region idx out of its bin and puts its node back on
// the stack, for a neighbour that merges it; the node's fields stay
// readable until the next insert.
func (a *Allocator) absorb(idx uint32) *node {
	a.unlink(idx)
	a.release(idx)
	return &a.nodes[idx]
}

// release pushes node idx back on the stack of unused nodes.
func (a *Allocator) release(idx uint32) {
	a.free[a.nfree] = idx
	a.nfree++
}
