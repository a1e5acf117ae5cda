package offset

import "unsafe"

// This file fences the allocator's unsafe code: reads and writes of the
// node array and the unused-node stack without bounds checks, which cost
// about a tenth of an Allocate+Free pair in the replay loop.
//
// A link names a node by its byte offset in the node array, not by its
// index, so reaching a node is one addition: no scaling, no extension (a
// 32-bit load already zero-extends). Every link field (binPrev, binNext,
// prev, next), the unused-node stack and an Allocation's node hold links.
//
// The array starts with sentinel nodes: one per bin, heading that bin's
// circular list (binList(b)), then one heading the circular address-order
// list (end); node 0 follows. Links never need a "no node" value: the
// first region's prev and the last one's next are end, an empty bin's
// sentinel links to itself, so the hot paths relink neighbours without
// testing for the ends of a list.
//
// Safety rests on two invariants that Check verifies and the fuzz target
// exercises after every step: every link is a multiple of nodeSize below
// limit (a sentinel or a node), and nfree stays within [0, len(free)].
// Links from outside (an Allocation's node) are checked against limit
// before they reach at.

// nodeSize is the size of a node, a power of two so links scale by a
// shift where they must (see ID).
const nodeSize = 32

// The compiler refuses this if nodeSize is not the size of a node.
var _ = [1]struct{}{}[unsafe.Sizeof(node{})-nodeSize]

const (
	// sentinels is the number of sentinel nodes before node 0.
	sentinels = numBins + 1
	// end is the link of the address-order sentinel. Its gen is odd, so
	// it reads as used and no free region merges with it.
	end uint32 = numBins * nodeSize
	// firstNode is the link of node 0.
	firstNode uint32 = sentinels * nodeSize
	// MaxNodes is the largest node limit New accepts (2^27-258): every
	// link, a byte offset into the node array, fits in 32 bits.
	MaxNodes = (1<<32-1)/nodeSize - sentinels
)

// binList returns the link of bin b's sentinel.
func binList(b uint32) uint32 { return b * nodeSize }

// linkOf returns the link of node i; idOf is its inverse.
func linkOf(i uint32) uint32 { return firstNode + i*nodeSize }
func idOf(l uint32) uint32   { return (l - firstNode) / nodeSize }

// newNodes returns the sentinels and n nodes after them.
func newNodes(n uint32) []node {
	return make([]node, sentinels+int(n))
}

// at returns the node linked by l, which must be a valid link.
func (a *Allocator) at(l uint32) *node {
	return a.array().at(l)
}

// pop takes a node from the unused stack. The stack must not be empty.
func (a *Allocator) pop() uint32 {
	a.nfree--
	return *(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(a.free)), uintptr(a.nfree)*4))
}

// push returns node l to the unused stack, which must not be full.
func (a *Allocator) push(l uint32) {
	*(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(a.free)), uintptr(a.nfree)*4)) = l
	a.nfree++
}

// nodeArray is the base of the node array, for the hot paths to hold in a
// local: Go assumes any store may change a.nodes, so a.at reloads the
// slice's base after every store, where a local stays in a register.
type nodeArray struct{ p unsafe.Pointer }

// array returns the base of a's node array.
func (a *Allocator) array() nodeArray { return nodeArray{unsafe.Pointer(unsafe.SliceData(a.nodes))} }

// at returns the node linked by l, which must be a valid link.
func (ns nodeArray) at(l uint32) *node {
	return (*node)(unsafe.Add(ns.p, uintptr(l)))
}

// unbin takes free region n out of its bin's circular list and reports
// whether that emptied the bin: n's neighbours in the list are the same
// node only when that is the sentinel. The bin's mask bits are the
// caller's to clear.
func (ns nodeArray) unbin(n *node) bool {
	bp, bn := n.binPrev, n.binNext
	ns.at(bp).binNext = bn
	ns.at(bn).binPrev = bp
	return bp == bn
}
