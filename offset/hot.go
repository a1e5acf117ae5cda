package offset

import "math/bits"

// This file holds the two hot paths, Allocate and Free, written out in full:
// the bin search, the unlinking from a bin and the filing into one appear
// here inline rather than as calls to search, unlink and file. Go keeps no
// register across a call, so each call on these paths spills and reloads
// the allocator's state; without them both functions are leaves on their
// common paths (only the error returns call). The general helpers in
// allocator.go serve the cold paths (AllocateAligned, Grow, SlideDown)
// and must place exactly as the code here does, under both policies: keep
// the two in step (TestTakeMatchesAllocate).

// Allocate returns a range of size units. O(1); it never allocates memory.
// It returns ErrOutOfSpace (bare) when no free region can serve the request,
// ErrNodeLimit when the node limit is reached, and ErrZeroSize or ErrTooLarge
// for a size of zero or above the capacity.
func (a *Allocator) Allocate(size uint32) (Allocation, error) {
	// size-1 wraps for 0. The reference refuses with one node left,
	// whether or not the request would split a region; keep that for
	// identical refusals.
	if size-1 >= a.capacity || a.nfree <= 1 {
		return Allocation{}, a.refuse(size, 1)
	}
	// search. Under Fit, a size that is not a bin bound first looks in the
	// bin it rounds down to, lb, at up to fitProbe regions (see search in
	// allocator.go, which must choose as this does). minBin is at most 240
	// (the bin 2^32-1 rounds up to), so minTop needs no mask; the leaf mask
	// of a top bin is non-zero exactly when its top bit is set, so the top
	// mask need not be tested first.
	ns := a.array()
	lb, exact := bin(size)
	minBin := lb
	b, idx := uint32(0), none
	if !exact {
		minBin++
		if a.policy == Fit && a.leafMask[lb>>topBinShift&(numTopBins-1)]&(1<<(lb&leafBinMask)) != 0 {
			s := binList(lb & (numBins - 1))
			n := ns.at(s).binNext
			for i := 0; n != s && i < fitProbe; i++ {
				m := ns.at(n)
				if m.size >= size {
					b, idx = lb&(numBins-1), n
					break
				}
				n = m.binNext
			}
		}
	}
	if idx == none {
		minTop := minBin >> topBinShift & (numTopBins - 1)
		if leaf := uint32(a.leafMask[minTop]) &^ (1<<(minBin&leafBinMask) - 1); leaf != 0 {
			b = minTop<<topBinShift | uint32(bits.TrailingZeros32(leaf))
		} else {
			// Every bin of a higher top bin fits, since minBin was
			// rounded up. For minTop 31 the shift gives 0 and the mask
			// clears all.
			top := a.topMask &^ (1<<(minTop+1) - 1)
			if top == 0 {
				return Allocation{}, ErrOutOfSpace
			}
			t := uint32(bits.TrailingZeros32(top)) & (numTopBins - 1)
			b = t<<topBinShift | uint32(bits.TrailingZeros32(uint32(a.leafMask[t])))
		}
		b &= numBins - 1
		idx = ns.at(binList(b)).binNext
	}
	n := ns.at(idx)

	// unlink: n is the head of bin b under Exact, anywhere in it under
	// Fit. If that empties the bin (its neighbours in the list are both
	// the sentinel), its mask bits are cleared below, unless the remainder
	// goes straight back into it.
	bp, bn := n.binPrev, n.binNext
	ns.at(bp).binNext = bn
	ns.at(bn).binPrev = bp
	total := n.size
	n.size = size
	n.gen++ // now odd: used
	a.freeUnits -= size
	rest := total - size
	if rest == 0 {
		if bn == bp {
			a.emptied(b)
		}
		a.freeRegions--
		return Allocation{Offset: n.off, Size: size, node: idx, key: a.key(n.gen)}, nil
	}

	// file the remainder in a node from the stack, after n in address
	// order. The free-region count is unchanged: n left, r came. Carving
	// from the one large region of a bin, as a growing heap does, empties
	// the bin and refiles the remainder in it: then the masks stay as
	// they are, rather than being cleared and set again.
	r := a.pop()
	rb := binRoundDown(rest) & (numBins - 1)
	rs := binList(rb)
	head := ns.at(rs).binNext
	if rb != b {
		if bn == bp {
			a.emptied(b)
		}
		if head == rs {
			a.filled(rb)
		}
	}
	ns.at(head).binPrev = r
	ns.at(rs).binNext = r
	next := n.next
	// Field by field: a node literal would be built on the stack and
	// copied. r's gen is even already, as every node on the stack is free.
	rn := ns.at(r)
	rn.off, rn.size, rn.bin = n.off+size, rest, uint8(rb)
	rn.binPrev, rn.binNext = rs, head
	rn.prev, rn.next = idx, next
	ns.at(next).prev = r
	n.next = r
	return Allocation{Offset: n.off, Size: size, node: idx, key: a.key(n.gen)}, nil
}

// Free returns an allocation's range to the free space, merging it with free
// neighbours. O(1); it never allocates memory. An Allocation that is not live
// (see ErrInvalidAllocation) is refused and nothing changes.
func (a *Allocator) Free(h Allocation) error {
	// isLive, written out.
	idx := h.node
	if idx >= a.limit {
		return a.invalid(h)
	}
	ns := a.array()
	n := ns.at(idx)
	if h.key != a.key(n.gen) {
		return a.invalid(h)
	}
	// Merge with free neighbours, taking them out of their bins and
	// putting their nodes back on the stack, then file the merged region
	// in n itself, which is what the reference's push-then-pop of the
	// same node amounts to.
	off, size := n.off, n.size
	prev, next := n.prev, n.next
	a.freeUnits += size
	regions := a.freeRegions + 1
	// end reads as used, so no test for the ends of the range.
	if p := ns.at(prev); !p.used() {
		if ns.unbin(p) {
			a.emptied(uint32(p.bin))
		}
		a.push(prev)
		regions--
		off, size, prev = p.off, size+p.size, p.prev
	}
	if q := ns.at(next); !q.used() {
		if ns.unbin(q) {
			a.emptied(uint32(q.bin))
		}
		a.push(next)
		regions--
		size, next = size+q.size, q.next
	}
	a.freeRegions = regions

	// file n as the free region [off, off+size).
	b := binRoundDown(size) & (numBins - 1)
	s := binList(b)
	head := ns.at(s).binNext
	if head == s {
		a.filled(b)
	}
	ns.at(head).binPrev = idx
	ns.at(s).binNext = idx
	n.off, n.size, n.bin = off, size, uint8(b)
	n.binPrev, n.binNext = s, head
	n.prev, n.next = prev, next
	n.gen++ // now even: free
	ns.at(prev).next = idx
	ns.at(next).prev = idx
	return nil
}
