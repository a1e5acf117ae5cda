//go:build cgo

package webgpu

import (
	"cmp"
	"slices"
	"sort"

	"github.com/gpumem/gpumem/device"
)

// Planning a batch of moves.
//
// Move must give the bytes that doing its moves one by one, in order, each
// as a memmove, would give. A GPU runs the threads of a dispatch in no
// order, so the batch is cut into passes, and each pass runs in two phases:
//
//  1. gather: copy the source of every gathered move into a scratch buffer;
//  2. scatter: copy every gathered move from scratch to its destination,
//     and every direct move from its source straight to its destination.
//
// All reads of phase 1 happen before any write of phase 2 (a barrier
// separates the dispatches), so a gathered move reads its source as it was
// when the pass began. The rules that make a pass equal to its moves done in
// order:
//
//   - A move joins the current pass only if its source and its destination
//     overlap no destination of an earlier move in the pass. Then no move
//     reads a byte that an earlier move of the pass wrote (sequentially it
//     would see the new byte; here it sees the old one, which is the same,
//     since no earlier move wrote it), and no two moves write the same byte
//     (whose final value would depend on thread order). A move that breaks
//     the rule starts a new pass.
//   - Within a closed pass, a move is direct when its source overlaps no
//     destination in the pass, its own included: nothing in phase 2 writes
//     what it reads, so it may read while others write. Every other move
//     is gathered: its source is read in phase 1, before the writes.
//   - A move's own source and destination may overlap (a block sliding
//     over itself): such a move is always gathered.
//
// A compaction sweep (each block slides down into the hole the previous one
// left) is one pass: block i+1's source lies above every destination so far.
// Moves that swap or chain (a to b, then b to c) take one pass each link.
//
// The scratch buffer holds at most scratchCap bytes; a pass whose gathered
// bytes (with alignment padding, see gatherCost) exceed it is cut into smaller passes (any run of consecutive moves
// of a valid pass is a valid pass), and a single move larger than scratchCap
// is first cut into pieces that, done in order, equal the whole move:
// ascending for a move down, descending for a move up, so no piece reads
// what an earlier piece wrote.

// span is the byte range [lo, hi).
type span struct{ lo, hi uint64 }

// planner holds the plan of one batch. Its slices are reused between
// batches, so a steady stream of batches does not allocate.
type planner struct {
	moves  []device.Move // the batch, zero sizes dropped, large moves cut
	direct []bool        // per move: runs in phase 2 without scratch
	passes []int         // pass i is moves[passes[i]:passes[i+1]]
	dsts   []span        // destinations of the pass being built, sorted, disjoint
	order  []int32       // move indices by destination (onePass)
}

// plan fills p for moves with gathering limited to scratchCap bytes a pass
// (a multiple of 16). With allGathered every move is gathered (the copy
// path, where a move within one buffer cannot be one copy).
func (p *planner) plan(moves []device.Move, scratchCap uint64, allGathered bool) {
	piece := scratchCap - 48 // so that gatherCost(piece) <= scratchCap
	p.moves = p.moves[:0]
	for _, m := range moves {
		switch {
		case m.Size == 0 || m.Src == m.Dst:
			// Nothing to do: a move onto itself leaves the bytes as they are.
		case m.Size <= piece:
			p.moves = append(p.moves, m)
		case m.Dst < m.Src:
			for off := uint64(0); off < m.Size; off += piece {
				n := min(piece, m.Size-off)
				p.moves = append(p.moves, device.Move{Src: m.Src + off, Dst: m.Dst + off, Size: n})
			}
		default:
			for end := m.Size; end > 0; {
				n := min(piece, end)
				end -= n
				p.moves = append(p.moves, device.Move{Src: m.Src + end, Dst: m.Dst + end, Size: n})
			}
		}
	}
	n := len(p.moves)
	p.direct = slices.Grow(p.direct[:0], n)[:n]
	clear(p.direct)
	p.passes = append(p.passes[:0], 0)
	if n == 0 {
		return
	}
	if p.onePass(allGathered) {
		p.cut(0, n, scratchCap)
		return
	}
	p.dsts = p.dsts[:0]
	start := 0
	for i, m := range p.moves {
		if p.overlaps(span{m.Src, m.Src + m.Size}) || p.overlaps(span{m.Dst, m.Dst + m.Size}) {
			p.closePass(start, i, scratchCap, allGathered)
			start = i
			p.dsts = p.dsts[:0]
		}
		p.insert(span{m.Dst, m.Dst + m.Size})
	}
	p.closePass(start, n, scratchCap, allGathered)
}

// onePass reports whether the whole batch is one pass, and if so classifies
// its moves: the fast path for the common batches (a sweep, a set of
// disjoint moves), O(n) for destinations in increasing or decreasing order,
// O(n log n) otherwise. The batch is one pass when its destinations are
// disjoint and no move's source overlaps the destination of an earlier move.
func (p *planner) onePass(allGathered bool) bool {
	n := len(p.moves)
	p.order = slices.Grow(p.order[:0], n)[:n]
	up, down := true, true
	for i := 1; i < n; i++ {
		a, b := p.moves[i-1].Dst, p.moves[i].Dst
		up = up && a < b
		down = down && a > b
	}
	for i := range p.order {
		p.order[i] = int32(i)
		if down {
			p.order[i] = int32(n - 1 - i)
		}
	}
	if !up && !down {
		slices.SortFunc(p.order, func(a, b int32) int { return cmp.Compare(p.moves[a].Dst, p.moves[b].Dst) })
	}
	dst := func(k int) span {
		m := p.moves[p.order[k]]
		return span{m.Dst, m.Dst + m.Size}
	}
	for k := 1; k < n; k++ {
		if dst(k-1).hi > dst(k).lo {
			return false
		}
	}
	hint := 0
	for j, m := range p.moves {
		s := span{m.Src, m.Src + m.Size}
		// k is the first destination that ends after s starts. Sources
		// usually come in the order of the destinations, so try the
		// previous answer and its neighbour before a binary search.
		k := -1
		for _, c := range [2]int{hint, hint + 1} {
			if c <= n && (c == n || dst(c).hi > s.lo) && (c == 0 || dst(c-1).hi <= s.lo) {
				k = c
				break
			}
		}
		if k < 0 {
			k = sort.Search(n, func(k int) bool { return dst(k).hi > s.lo })
		}
		hint = k
		direct := !allGathered
		for ; k < n && dst(k).lo < s.hi; k++ {
			if int(p.order[k]) < j {
				return false
			}
			direct = false
		}
		p.direct[j] = direct
	}
	return true
}

// closePass classifies moves[start:end] (their destinations are in p.dsts)
// and records the pass.
func (p *planner) closePass(start, end int, scratchCap uint64, allGathered bool) {
	for i := start; i < end; i++ {
		m := p.moves[i]
		p.direct[i] = !allGathered && !p.overlaps(span{m.Src, m.Src + m.Size})
	}
	p.cut(start, end, scratchCap)
}

// cut records the classified pass moves[start:end], cut where its gathered
// bytes exceed scratchCap. The moves keep their class: a source that
// overlaps no destination of the whole pass overlaps none of a part of it.
// (A gathered move might have become direct; gathering it anyway is still
// correct.)
func (p *planner) cut(start, end int, scratchCap uint64) {
	gathered := uint64(0)
	for i := start; i < end; i++ {
		if p.direct[i] {
			continue
		}
		cost := gatherCost(p.moves[i].Size)
		if gathered+cost > scratchCap && i > start {
			p.passes = append(p.passes, i)
			gathered = 0
		}
		gathered += cost
	}
	p.passes = append(p.passes, end)
}

// gatherCost is the most scratch bytes a gathered move of n bytes takes:
// its place in scratch starts 16-byte aligned plus its source's offset
// modulo 16 (see scratchOffset).
func gatherCost(n uint64) uint64 { return (n+15)&^15 + 32 }

// overlaps reports whether s overlaps a destination of the current pass.
// O(log n).
func (p *planner) overlaps(s span) bool {
	i := sort.Search(len(p.dsts), func(i int) bool { return p.dsts[i].hi > s.lo })
	return i < len(p.dsts) && p.dsts[i].lo < s.hi
}

// insert adds s, which overlaps none of them, to the sorted destinations.
// Amortized O(1) when destinations come in increasing order (a sweep).
func (p *planner) insert(s span) {
	n := len(p.dsts)
	if n == 0 || p.dsts[n-1].lo < s.lo {
		p.dsts = append(p.dsts, s)
		return
	}
	i := sort.Search(n, func(i int) bool { return p.dsts[i].lo >= s.lo })
	p.dsts = append(p.dsts, span{})
	copy(p.dsts[i+1:], p.dsts[i:])
	p.dsts[i] = s
}

// numPasses returns the number of passes of the plan.
func (p *planner) numPasses() int { return len(p.passes) - 1 }

// pass returns the moves of pass i and whether each is direct.
func (p *planner) pass(i int) ([]device.Move, []bool) {
	lo, hi := p.passes[i], p.passes[i+1]
	return p.moves[lo:hi], p.direct[lo:hi]
}
