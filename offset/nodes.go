package offset

import "unsafe"

// This file fences the allocator's unsafe code: reads and writes of the
// node array and the unused-node stack without bounds checks, which cost
// about a tenth of an Allocate+Free pair in the replay loop.
//
// Safety rests on two invariants that Check verifies and the fuzz target
// exercises after every step: every link (binPrev, binNext, prev, next,
// first, last, binHead) is none or an index below len(nodes), and nfree
// stays within [0, len(free)]. Indices from outside (an Allocation's node)
// are checked against len(nodes) in resolve before they reach at.

const nodeSize = unsafe.Sizeof(node{})

// at returns node i. i must be below len(a.nodes).
func (a *Allocator) at(i uint32) *node {
	return (*node)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(a.nodes)), uintptr(i)*nodeSize))
}

// pop takes a node from the unused stack. The stack must not be empty.
func (a *Allocator) pop() uint32 {
	a.nfree--
	return *(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(a.free)), uintptr(a.nfree)*4))
}

// push returns node i to the unused stack, which must not be full.
func (a *Allocator) push(i uint32) {
	*(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(a.free)), uintptr(a.nfree)*4)) = i
	a.nfree++
}

// nodeArray is the base of the node array, for the hot paths to hold in a
// local: Go assumes any store may change a.nodes, so a.at reloads the
// slice's base after every store, where a local stays in a register.
type nodeArray struct{ p unsafe.Pointer }

// array returns the base of a's node array.
func (a *Allocator) array() nodeArray { return nodeArray{unsafe.Pointer(unsafe.SliceData(a.nodes))} }

// at returns node i. i must be below len(a.nodes).
func (ns nodeArray) at(i uint32) *node {
	return (*node)(unsafe.Add(ns.p, uintptr(i)*nodeSize))
}
