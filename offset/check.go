package offset

import (
	"errors"
	"fmt"
)

// Check verifies every invariant of the allocator's state and returns an
// error describing the first one broken, or nil. It is for tests and
// debugging: O(n) in the node limit, and it allocates.
//
// The invariants:
//   - The regions reached from the end sentinel by next links tile
//     [0, Capacity) and lead back to end: the first starts at 0, each
//     starts where the one before ends, none is empty, the last ends at
//     Capacity and is end's prev; prev links mirror next links. end reads
//     as used.
//   - No two free regions are neighbours (frees merge).
//   - Each free region is in the bin its size rounds down to, each bin's
//     circular list through its sentinel is doubly linked correctly, and
//     a bin's bits in the leaf and top
//     masks are set exactly when its list is non-empty.
//   - The free-unit, free-region and allocation counters match the regions.
//   - Every link is a node index or, where a list ends, its sentinel.
//   - Every node is either in the address list or on the unused stack, never
//     both, and the stack holds no node twice. Nodes on the stack have even
//     gens (free), which Allocate relies on when it files a remainder.
func (a *Allocator) Check() error {
	// node returns the node linked by l, and whether l is the link of a
	// node rather than of a sentinel; a link must be one or the other
	// (see nodes.go).
	node := func(l uint32) (*node, bool) {
		if l%nodeSize != 0 || l < firstNode || l >= a.limit {
			return nil, false
		}
		return &a.nodes[l/nodeSize], true
	}
	seen := make([]bool, len(a.nodes))
	var (
		off                uint32
		freeUnits, regions uint32
		live               uint32
		prev               = end
		steps              int
	)
	if z := a.at(end); !z.used() {
		return errors.New("offset: the end sentinel reads as free")
	}
	for i := a.first(); i != end; i = a.at(i).next {
		n, ok := node(i)
		if !ok {
			return fmt.Errorf("offset: address list links to %d, neither a node nor end", i)
		}
		if steps++; steps > a.maxAllocs() || seen[i/nodeSize] {
			return errors.New("offset: address list has a cycle")
		}
		seen[i/nodeSize] = true
		if n.prev != prev {
			return fmt.Errorf("offset: node %d at %d: prev link %d, want %d", i, n.off, n.prev, prev)
		}
		if n.off != off {
			return fmt.Errorf("offset: node %d starts at %d, want %d", i, n.off, off)
		}
		if n.size == 0 {
			return fmt.Errorf("offset: node %d at %d is empty", i, n.off)
		}
		if uint64(n.off)+uint64(n.size) > uint64(a.capacity) {
			return fmt.Errorf("offset: node %d [%d,+%d) passes capacity %d", i, n.off, n.size, a.capacity)
		}
		if n.used() {
			live++
		} else {
			if prev != end && !a.at(prev).used() {
				return fmt.Errorf("offset: free regions at %d and %d are neighbours", a.at(prev).off, n.off)
			}
			freeUnits += n.size
			regions++
		}
		off += n.size
		prev = i
	}
	if steps == 0 {
		return errors.New("offset: no regions")
	}
	if off != a.capacity {
		return fmt.Errorf("offset: regions end at %d, capacity %d", off, a.capacity)
	}
	if prev != a.last() {
		return fmt.Errorf("offset: last node is %d, walk ends at %d", a.last(), prev)
	}
	if freeUnits != a.freeUnits || regions != a.freeRegions || live != a.live() {
		return fmt.Errorf("offset: counters free=%d regions=%d live=%d, regions say %d, %d, %d",
			a.freeUnits, a.freeRegions, a.live(), freeUnits, regions, live)
	}
	inBins := uint32(0)
	for b := uint32(0); b < numBins; b++ {
		top, leaf := b>>topBinShift, b&leafBinMask
		s := binList(b)
		bit := a.leafMask[top]&(1<<leaf) != 0
		if bit != (a.head(b) != s) {
			return fmt.Errorf("offset: bin %d: leaf bit %v, head %d", b, bit, a.head(b))
		}
		binPrev := s
		for i := a.head(b); i != s; i = a.at(i).binNext {
			n, ok := node(i)
			if !ok || !seen[i/nodeSize] || n.used() {
				return fmt.Errorf("offset: bin %d lists node %d, not a free region", b, i)
			}
			if inBins++; inBins > regions {
				return fmt.Errorf("offset: bins list more nodes than the %d free regions", regions)
			}
			if got := binRoundDown(n.size); got != b || uint32(n.bin) != b {
				return fmt.Errorf("offset: region of %d units in bin %d (marked %d), want %d", n.size, b, n.bin, got)
			}
			if n.binPrev != binPrev {
				return fmt.Errorf("offset: bin %d: node %d binPrev %d, want %d", b, i, n.binPrev, binPrev)
			}
			binPrev = i
		}
		if got := a.at(s).binPrev; got != binPrev {
			return fmt.Errorf("offset: bin %d: sentinel's binPrev %d, want %d", b, got, binPrev)
		}
	}
	for top := uint32(0); top < numTopBins; top++ {
		if (a.topMask&(1<<top) != 0) != (a.leafMask[top] != 0) {
			return fmt.Errorf("offset: top bit %d disagrees with its leaf mask %08b", top, a.leafMask[top])
		}
	}
	if inBins != regions {
		return fmt.Errorf("offset: bins list %d regions, address list %d", inBins, regions)
	}
	if int(a.nfree)+steps != a.maxAllocs() {
		return fmt.Errorf("offset: %d unused + %d in use != %d nodes", a.nfree, steps, a.maxAllocs())
	}
	for _, i := range a.free[:a.nfree] {
		n, ok := node(i)
		if !ok || seen[i/nodeSize] {
			return fmt.Errorf("offset: unused stack holds node %d twice, in use or invalid", i)
		}
		if n.used() {
			return fmt.Errorf("offset: unused node %d has the odd gen %d of an allocation", i, n.gen)
		}
		seen[i/nodeSize] = true
	}
	return nil
}
