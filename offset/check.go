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
//   - The regions reached from first by next links tile [0, Capacity): the
//     first starts at 0, each starts where the one before ends, none is
//     empty, the last ends at Capacity and is the node last names; prev
//     links mirror next links.
//   - No two free regions are neighbours (frees merge).
//   - Each free region is in the bin its size rounds down to, each bin's
//     list is doubly linked correctly, and a bin's bits in the leaf and top
//     masks are set exactly when its list is non-empty.
//   - The free-unit, free-region and allocation counters match the regions.
//   - Every node is either in the address list or on the unused stack, never
//     both, and the stack holds no node twice. Nodes on the stack have even
//     gens (free), which Allocate relies on when it files a remainder.
func (a *Allocator) Check() error {
	nodes := a.nodes
	seen := make([]bool, len(nodes))
	var (
		off                uint32
		freeUnits, regions uint32
		live               uint32
		prev               = none
		steps              int
	)
	if a.first == none || a.last == none {
		return errors.New("offset: first or last node missing")
	}
	for i := a.first; i != none; i = nodes[i].next {
		if int(i) >= len(nodes) {
			return fmt.Errorf("offset: node index %d out of range", i)
		}
		if steps++; steps > len(nodes) || seen[i] {
			return errors.New("offset: address list has a cycle")
		}
		seen[i] = true
		n := &nodes[i]
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
			if prev != none && !nodes[prev].used() {
				return fmt.Errorf("offset: free regions at %d and %d are neighbours", nodes[prev].off, n.off)
			}
			freeUnits += n.size
			regions++
		}
		off += n.size
		prev = i
	}
	if off != a.capacity {
		return fmt.Errorf("offset: regions end at %d, capacity %d", off, a.capacity)
	}
	if prev != a.last {
		return fmt.Errorf("offset: last node is %d, walk ends at %d", a.last, prev)
	}
	if freeUnits != a.freeUnits || regions != a.freeRegions || live != a.live {
		return fmt.Errorf("offset: counters free=%d regions=%d live=%d, regions say %d, %d, %d",
			a.freeUnits, a.freeRegions, a.live, freeUnits, regions, live)
	}
	inBins := uint32(0)
	for b := uint32(0); b < numBins; b++ {
		top, leaf := b>>topBinShift, b&leafBinMask
		bit := a.leafMask[top]&(1<<leaf) != 0
		if bit != (a.binHead[b] != none) {
			return fmt.Errorf("offset: bin %d: leaf bit %v, head %d", b, bit, a.binHead[b])
		}
		binPrev := none
		for i := a.binHead[b]; i != none; i = nodes[i].binNext {
			if int(i) >= len(nodes) || !seen[i] || nodes[i].used() {
				return fmt.Errorf("offset: bin %d lists node %d, not a free region", b, i)
			}
			if inBins++; inBins > regions {
				return fmt.Errorf("offset: bins list more nodes than the %d free regions", regions)
			}
			if got := binRoundDown(nodes[i].size); got != b {
				return fmt.Errorf("offset: region of %d units in bin %d, want %d", nodes[i].size, b, got)
			}
			if nodes[i].binPrev != binPrev {
				return fmt.Errorf("offset: bin %d: node %d binPrev %d, want %d", b, i, nodes[i].binPrev, binPrev)
			}
			binPrev = i
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
	if int(a.nfree)+steps != len(nodes) {
		return fmt.Errorf("offset: %d unused + %d in use != %d nodes", a.nfree, steps, len(nodes))
	}
	for _, i := range a.free[:a.nfree] {
		if int(i) >= len(nodes) || seen[i] {
			return fmt.Errorf("offset: unused stack holds node %d twice or in use", i)
		}
		if nodes[i].used() {
			return fmt.Errorf("offset: unused node %d has the odd gen %d of an allocation", i, nodes[i].gen)
		}
		if nodes[i].used() {
			return fmt.Errorf("offset: unused node %d has the odd gen %d of an allocation", i, nodes[i].gen)
		}
		seen[i] = true
	}
	return nil
}
