package offset

import (
	"fmt"
	"math/bits"
	"sync/atomic"
)

// none is what search returns when no region fits. It is never stored in
// a link: lists end at sentinels (see nodes.go).
const none = ^uint32(0)

// node is one region of the range: a live allocation or a free region. Nodes
// tile the range: following next links from the end sentinel visits regions
// whose offsets are contiguous from 0 to the capacity, and returns to end.
type node struct {
	off  uint32
	size uint32
	// binPrev and binNext link the free regions of one bin, in a circular
	// list through the bin's sentinel; unused while the node is an
	// allocation.
	binPrev, binNext uint32
	// prev and next link address-order neighbours.
	prev, next uint32
	// gen counts the times this node was taken for an allocation and
	// given back: it is odd exactly while the node is a live allocation
	// (see used), and an Allocation is live only while its gen matches.
	// Keeping the state in gen's parity lets Free test liveness with one
	// comparison.
	gen uint32
	// bin is the bin a free region is filed in: binRoundDown(size).
	bin uint8
}

// used reports whether n is a live allocation rather than a free region.
func (n *node) used() bool { return n.gen&1 != 0 }

// lastID hands every allocator an identity of its own, so an Allocation from
// one is refused by another. Ids run from 1 and skip 0 when the counter
// wraps: with id 0 the zero Allocation's key (0) would match the bin
// sentinel its zero node link names.
var lastID atomic.Uint32

// newID returns the next allocator id, never 0.
func newID() uint32 {
	for {
		if id := lastID.Add(1); id != 0 {
			return id
		}
	}
}

// Policy chooses where Allocate looks for a free region.
type Policy uint8

const (
	// Exact places every request where the reference OffsetAllocator
	// algorithm places it: the same capacity, node limit and calls give the
	// same offsets and the same refusals. It refuses, as the reference
	// does, some requests a free region could serve: the region is filed
	// in the bin its size rounds down to, the request looked up from the
	// bin its size rounds up to. So an empty allocator of capacity 1000
	// refuses Allocate(1000) (the region files in the bin of 960, the
	// request looks from the bin of 1024); sizes that are bin sizes
	// (RoundUp) meet exactly, and Fit serves such requests.
	Exact Policy = iota
	// Fit first looks for a large enough region in the bin just below the
	// request's bin — where Exact never looks, since regions there may be
	// too small — examining at most fitProbe of them, so it stays O(1).
	// When none fits it places as Exact does. It refuses fewer requests
	// than Exact and keeps larger regions whole longer.
	Fit
)

// fitProbe bounds how many regions of the lower bin Fit examines. Most
// lower-bin lists are shorter (on the shared traces, fits are found in a
// bin's first region about two times in three), so the bound rarely stops a
// walk; it keeps Allocate O(1). Refusals on the shared thinning trace, first
// fit in the order of the list: 1,647 at 16, 1,672 at 8, 1,858 at 4, 2,388
// at 1 (Exact 3,244; the Vulkan Memory Allocator's TLSF 1,786).
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
	// node is the link of the allocation's node (see nodes.go).
	node uint32
	// key is the allocator's id in the high half and the node's gen in the
	// low half: see Allocator.key. Four fields, not five, so the compiler
	// keeps an Allocation in registers (it spills structs of more than
	// four fields to memory), which matters in a replay loop.
	key uint64
}

// Allocator hands out ranges of [0, Capacity) units in O(1): a
// two-level segregated fit over 256 size bins, placing as Sebastian
// Aaltonen's OffsetAllocator does under the Exact policy.
//
// An Allocator is not safe for concurrent use.
type Allocator struct {
	// nodes holds the sentinels, then the nodes (see nodes.go).
	nodes []node
	// limit is one past the last valid link.
	limit uint32
	// free is a stack of the links of unused nodes; free[:nfree] are
	// valid.
	free  []uint32
	nfree uint32

	leafMask [numTopBins]uint8
	topMask  uint32

	capacity    uint32
	freeUnits   uint32
	freeRegions uint32
	// owner is the allocator's id shifted to the high half of a key.
	owner  uint64
	policy Policy
}

// New returns an allocator of capacity units, with room for maxAllocs nodes
// (allocations and free regions together; at most maxAllocs-1 are in use at
// once, as in the reference), placing as the Exact policy does. It allocates
// 36*maxAllocs bytes (and 8 KiB of list sentinels) up front and nothing
// afterwards. maxAllocs may be at most MaxNodes.
func New(capacity, maxAllocs uint32) (*Allocator, error) {
	return NewPolicy(capacity, maxAllocs, Exact)
}

// NewPolicy is New with a placement policy.
func NewPolicy(capacity, maxAllocs uint32, p Policy) (*Allocator, error) {
	if capacity == 0 {
		return nil, fmt.Errorf("%w: capacity 0", ErrInvalidCapacity)
	}
	if maxAllocs < 2 || maxAllocs > MaxNodes {
		return nil, fmt.Errorf("%w: node limit %d, need 2 to %d", ErrInvalidCapacity, maxAllocs, MaxNodes)
	}
	if p > Fit {
		return nil, fmt.Errorf("offset: unknown policy %d", p)
	}
	a := &Allocator{
		nodes:    newNodes(maxAllocs),
		limit:    linkOf(maxAllocs),
		free:     make([]uint32, maxAllocs),
		capacity: capacity,
		policy:   p,
		owner:    uint64(newID()) << 32,
	}
	a.Reset()
	return a, nil
}

// Reset frees every allocation at once: the range is one free region again.
// Allocations made before Reset are no longer live. O(maxAllocs).
func (a *Allocator) Reset() {
	nodes := a.nodes[sentinels:]
	n := uint32(len(nodes))
	for b := range uint32(numBins) {
		s := a.at(binList(b))
		s.binPrev, s.binNext = binList(b), binList(b)
	}
	a.leafMask = [numTopBins]uint8{}
	a.topMask = 0
	a.freeUnits = 0
	a.freeRegions = 0
	// The stack pops node 0 first, as the reference's does.
	for i := range nodes {
		a.free[i] = linkOf(n - 1 - uint32(i))
		// An odd gen (a live allocation) becomes even, free. Even gens
		// match no Allocation already, as Allocations carry odd ones.
		nodes[i].gen += nodes[i].gen & 1
	}
	a.nfree = n
	a.at(end).gen = 1 // odd: end reads as used
	a.at(end).prev, a.at(end).next = end, end
	a.replace(end, end, 0, a.capacity)
}

// Capacity returns the size of the range in units.
func (a *Allocator) Capacity() uint32 { return a.capacity }

// Policy returns the placement policy.
func (a *Allocator) Policy() Policy { return a.policy }

// Len returns the number of live allocations. O(1).
func (a *Allocator) Len() int { return int(a.live()) }

// live returns the number of live allocations: every node off the unused
// stack is a live allocation or a free region, so no counter need be kept
// by Allocate and Free.
func (a *Allocator) live() uint32 { return uint32(a.maxAllocs()) - a.nfree - a.freeRegions }

// maxAllocs returns the node limit given to New.
func (a *Allocator) maxAllocs() int { return len(a.nodes) - sentinels }

// refuse returns the error for a request of size units that is zero, too
// large, or needs more than the spare nodes the allocator has.
func (a *Allocator) refuse(size, spare uint32) error {
	switch {
	case size == 0:
		return ErrZeroSize
	case size > a.capacity:
		return fmt.Errorf("%w: %d units, capacity %d", ErrTooLarge, size, a.capacity)
	case a.nfree <= spare:
		return fmt.Errorf("%w: %d nodes", ErrNodeLimit, a.maxAllocs())
	}
	return nil
}

// search finds the free region Allocate serves size from, or none.
//
// Under Fit, a request whose size is not a bin bound first looks at the
// regions of bin b, the bin its size rounds down to and the one just below
// the bin Exact looks it up in: every region filed there is at least
// binSize(b) and below binSize(b+1), so some may hold size units, and those
// are the tighter fits. It examines up to fitProbe of them in list order and
// takes the first that is large enough; when none is, it places as Exact
// does. The walk is written here rather than in a function of its own: a call
// costs Fit's Allocate about a tenth of its time on the replay traces.
func (a *Allocator) search(size uint32) uint32 {
	b, exact := bin(size)
	minBin := b
	if !exact {
		minBin++
		// The leaf mask, in the Allocator, says whether bin b has a
		// region at all, without touching its sentinel.
		if a.policy == Fit && a.leafMask[b>>topBinShift&(numTopBins-1)]&(1<<(b&leafBinMask)) != 0 {
			ns := a.array()
			s := binList(b & (numBins - 1))
			n := ns.at(s).binNext
			for i := 0; n != s && i < fitProbe; i++ {
				m := ns.at(n)
				if m.size >= size {
					return n
				}
				n = m.binNext
			}
		}
	}
	minTop := minBin >> topBinShift & (numTopBins - 1)
	if leaf := uint32(a.leafMask[minTop]) &^ (1<<(minBin&leafBinMask) - 1); leaf != 0 {
		return a.head(minTop<<topBinShift | uint32(bits.TrailingZeros32(leaf)))
	}
	// Every bin of a higher top bin fits, since minBin was rounded up.
	if top := a.topMask &^ (1<<(minTop+1) - 1); top != 0 {
		t := uint32(bits.TrailingZeros32(top)) & (numTopBins - 1)
		return a.head(t<<topBinShift | uint32(bits.TrailingZeros32(uint32(a.leafMask[t]))))
	}
	return none
}

// take turns free region idx into an allocation of size units at pad units
// into the region; the pad before it and the remainder after it are filed
// as free regions. The caller has checked the region is large enough and
// that enough nodes are free for the splits.
//
// Without a pad (Fit's Allocate; AllocateAligned when the region is already
// aligned) it unlinks and splits as Allocate's Exact path in hot.go does,
// written out the same way, with the node array in a local and the masks
// left alone when the remainder goes back into the bin the region came
// from: the region may come from any place in its bin's list here, not only
// the head. TestTakeMatchesAllocate keeps the two in step.
func (a *Allocator) take(idx, pad, size uint32) Allocation {
	if pad > 0 {
		return a.takePadded(idx, pad, size)
	}
	ns := a.array()
	n := ns.at(idx)
	b := uint32(n.bin)
	emptied := ns.unbin(n)
	total := n.size
	n.size = size
	n.gen++ // now odd: used
	a.freeUnits -= size
	rest := total - size
	if rest == 0 {
		if emptied {
			a.emptied(b)
		}
		a.freeRegions--
		return Allocation{Offset: n.off, Size: size, node: idx, key: a.key(n.gen)}
	}

	// file the remainder in a node from the stack, after n in address
	// order; the free-region count is unchanged.
	r := a.pop()
	rb := binRoundDown(rest) & (numBins - 1)
	rs := binList(rb)
	head := ns.at(rs).binNext
	if rb != b {
		if emptied {
			a.emptied(b)
		}
		if head == rs {
			a.filled(rb)
		}
	}
	ns.at(head).binPrev = r
	ns.at(rs).binNext = r
	next := n.next
	rn := ns.at(r)
	rn.off, rn.size, rn.bin = n.off+size, rest, uint8(rb)
	rn.binPrev, rn.binNext = rs, head
	rn.prev, rn.next = idx, next
	ns.at(next).prev = r
	n.next = r
	return Allocation{Offset: n.off, Size: size, node: idx, key: a.key(n.gen)}
}

// takePadded is take with a pad of at least one unit before the allocation,
// through the general helpers: only AllocateAligned needs it.
func (a *Allocator) takePadded(idx, pad, size uint32) Allocation {
	a.unlink(idx)
	n := a.at(idx)
	total := n.size
	p := a.insert(n.off, pad)
	a.at(p).prev = n.prev
	a.at(p).next = idx
	a.at(n.prev).next = p
	n.prev = p
	n.off += pad
	total -= pad
	n.size = size
	n.gen++ // now odd: used
	if rest := total - size; rest > 0 {
		r := a.insert(n.off+size, rest)
		a.at(r).prev = idx
		a.at(r).next = n.next
		a.at(n.next).prev = r
		n.next = r
	}
	return Allocation{Offset: n.off, Size: size, node: idx, key: a.key(n.gen)}
}

// replace files the free region [off, off+size) between address neighbours
// prev and next (either may be end) and links it to them.
func (a *Allocator) replace(prev, next, off, size uint32) {
	m := a.insert(off, size)
	a.at(m).prev, a.at(m).next = prev, next
	a.at(prev).next = m
	a.at(next).prev = m
}

// key returns the key of an Allocation of a whose node has generation gen.
func (a *Allocator) key(gen uint32) uint64 { return a.owner | uint64(gen) }

// isLive reports whether h is a live allocation of a: its node is in range
// and its key names a and the node's current gen, which must be odd. The
// key carries an odd gen for every Allocation made, and 0 for the zero
// Allocation, so equal keys imply a used node.
func (a *Allocator) isLive(h Allocation) bool {
	return h.node < a.limit && h.key == a.key(a.at(h.node).gen)
}

// invalid returns the error for an Allocation that is not live.
func (a *Allocator) invalid(h Allocation) error {
	switch owner := uint32(h.key >> 32); {
	case owner == 0:
		return fmt.Errorf("%w: zero Allocation", ErrInvalidAllocation)
	case owner != uint32(a.owner>>32):
		return fmt.Errorf("%w: made by another allocator", ErrInvalidAllocation)
	}
	return fmt.Errorf("%w: offset %d size %d was freed", ErrInvalidAllocation, h.Offset, h.Size)
}

// resolve returns the node of a live allocation.
func (a *Allocator) resolve(h Allocation) (uint32, error) {
	if !a.isLive(h) {
		return none, a.invalid(h)
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
func (h Allocation) ID() uint32 {
	if h.node < firstNode { // the zero Allocation
		return 0
	}
	return idOf(h.node)
}

func (a *Allocator) handle(idx uint32) Allocation {
	n := a.at(idx)
	return Allocation{Offset: n.off, Size: n.size, node: idx, key: a.key(n.gen)}
}

// insert takes a node from the stack and files it as the free region
// [off, off+size) at the head of its bin. Links to neighbours are the
// caller's job.
func (a *Allocator) insert(off, size uint32) uint32 {
	idx := a.pop()
	a.file(idx, off, size)
	return idx
}

// file makes node idx the free region [off, off+size), at the head of its
// bin. Links to neighbours are the caller's job.
func (a *Allocator) file(idx, off, size uint32) {
	b := binRoundDown(size) & (numBins - 1)
	s := binList(b)
	head := a.at(s).binNext
	if head == s {
		a.filled(b)
	}
	a.at(head).binPrev = idx
	a.at(s).binNext = idx
	n := a.at(idx)
	n.off, n.size, n.bin = off, size, uint8(b)
	n.binPrev, n.binNext = s, head
	a.freeUnits += size
	a.freeRegions++
}

// head returns the first region of bin b, or b's sentinel when it is empty.
func (a *Allocator) head(b uint32) uint32 { return a.at(binList(b & (numBins - 1))).binNext }

// first and last return the regions at offset 0 and at the end of the range.
func (a *Allocator) first() uint32 { return a.at(end).next }
func (a *Allocator) last() uint32  { return a.at(end).prev }

// unlink removes free region idx from its bin. The node stays in the
// address-order list; the caller reuses or releases it.
func (a *Allocator) unlink(idx uint32) { a.unlinkFast(a.at(idx)) }

// unlinkFast removes free region n from its bin.
func (a *Allocator) unlinkFast(n *node) {
	if a.array().unbin(n) {
		a.emptied(uint32(n.bin))
	}
	a.freeUnits -= n.size
	a.freeRegions--
}

// filled sets the mask bits of bin b, which is about to get its first
// region.
func (a *Allocator) filled(b uint32) {
	a.leafMask[b>>topBinShift&(numTopBins-1)] |= 1 << (b & leafBinMask)
	a.topMask |= 1 << (b >> topBinShift)
}

// emptied clears the mask bits of bin b, which has just become empty.
func (a *Allocator) emptied(b uint32) {
	top := b >> topBinShift & (numTopBins - 1)
	a.leafMask[top] &^= 1 << (b & leafBinMask)
	if a.leafMask[top] == 0 {
		a.topMask &^= 1 << top
	}
}

// absorb takes free region idx out of its bin and puts its node back on
// the stack, for a neighbour that merges it; the node's fields stay
// readable until the next insert.
func (a *Allocator) absorb(idx uint32) *node {
	a.unlink(idx)
	a.push(idx)
	return a.at(idx)
}
