//go:build cgo || js

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
// order, and consecutive dispatches are ordered (WebGPU puts a barrier
// between dispatches that write the same buffer), so a batch becomes a
// sequence of dispatches, each a set of copies that may run in any order.
//
// The batch is cut into passes, and each pass runs as
//
//  1. gather: copy the source of every gathered move into a scratch buffer;
//  2. levels 0, 1, ..., n-1: level L copies every direct move of level L
//     from its source and every gathered move of level L from scratch, to
//     their destinations.
//
// A move joins the current pass only if its source and its destination
// overlap no destination of an earlier move in the pass: then no move of a
// pass reads what an earlier one wrote (sequentially it would see the new
// byte), and no two write the same byte. A move that breaks the rule
// starts a new pass. What remains inside a pass is the other order: a
// later move j may write over the source of an earlier move i (a
// compaction sweep does that all along: each block slides into space some
// earlier block was read from). Then i's read must come before j's write,
// in an earlier dispatch:
//
//   - a gathered move reads in the gather step, before every level;
//   - a direct move reads and writes in its level;
//   - level(j) = 1 + the highest level of an earlier direct move whose
//     source overlaps j's destination, or 0 if none does (sources of
//     gathered moves need nothing: they were read first).
//
// In one level no move writes what another of the level reads: if j is
// later, its level is higher; if j is earlier, the pass rule excludes it.
// No two write the same byte (the pass rule), and a gathered move's write
// from scratch races no read (its source is in scratch). So each level is
// one set of independent copies, and the pass equals its moves in order.
//
// Which moves are gathered:
//
//   - a move whose source overlaps its own destination (a block sliding
//     over itself) is always gathered: its threads would race on the
//     overlap;
//   - a move whose level would reach maxLevels-1 is gathered (it still
//     writes at its level, but its source pushes no later move up), so
//     no pass has more than maxLevels levels: a chain of moves each
//     reading what the next one writes runs in at most maxLevels+1
//     dispatches (with the gather) instead of one per link;
//   - on the copy path every move is gathered (one buffer's copy cannot
//     read and write itself).
//
// Every other move is direct: its bytes are read and written once. (Gathering
// the lowest levels of a pass, whose bytes are few, would save dispatches
// at the cost of a trip through scratch; measured on the compaction
// benchmark's batch, 512 MiB, the levels hold 4 to 70 MiB each, and a cost
// model traded up to 140 MiB of traffic for 15 levels: not done.)
//
// A compaction sweep is one pass: block i+1's source lies above every
// destination so far. A block whose destination lies in what was free
// space is level 0; one that slides into space an earlier block was read
// from is one level above it. With a quarter of the space free, spread
// evenly, block x waits for the block that was at 3x/4: about
// log(live/first hole)/log(4/3) levels: 20, 22 and 27 on three draws of
// that batch (TestPlanSweepLevels checks the shape on many sweeps).
//
// The scratch buffer holds at most scratchCap bytes; a pass whose gathered
// bytes (with alignment padding, see gatherCost) exceed it is cut into
// smaller passes (any run of consecutive moves of a valid pass is a valid
// pass, and its levels, recomputed, are no higher), and a single move
// larger than scratchCap is first cut into pieces that, done in order,
// equal the whole move: ascending for a move down, descending for a move
// up, so no piece reads what an earlier piece wrote.

// maxLevels bounds the levels of a pass: a move whose level would reach it
// is gathered (see above). Each level is a dispatch and a barrier, a few
// microseconds of a large GPU's time whatever its size; a compaction
// sweep of 512 MiB needs 20 to 27 (see above).
const maxLevels = 32

// span is the byte range [lo, hi).
type span struct{ lo, hi uint64 }

// planner holds the plan of one batch. Its slices are reused between
// batches, so a steady stream of batches does not allocate.
type planner struct {
	// moves is the batch, zero sizes dropped, large moves cut: the
	// caller's slice itself when nothing was dropped or cut (read only,
	// valid until the next plan), else own.
	moves  []device.Move
	own    []device.Move // moves when plan rewrote the batch
	direct []bool        // per move: read in its level, not gathered
	level  []int32       // per move: the level that writes it
	passes []int         // pass i is moves[passes[i]:passes[i+1]]
	nlevel []int32       // per pass: its number of levels
	dsts   []span        // destinations of the pass being built, sorted, disjoint
	order  []int32       // move indices by destination (onePass)
	reads  []segment     // levels of the sources read so far (levels)
}

// segment is a byte range of sources read by direct moves, with the
// highest level that reads it.
type segment struct {
	lo, hi uint64
	level  int32
}

// plan fills p for moves with gathering limited to scratchCap bytes a pass
// (a multiple of 16). With allGathered every move is gathered (the copy
// path, where a move within one buffer cannot be one copy).
func (p *planner) plan(moves []device.Move, scratchCap uint64, allGathered bool) {
	piece := scratchCap - 48 // so that gatherCost(piece) <= scratchCap
	// Most batches (every compaction's) need no move dropped or cut:
	// then the plan reads the caller's moves, copying none.
	p.moves = moves
	for i, m := range moves {
		if m.Size == 0 || m.Src == m.Dst || m.Size > piece {
			p.moves = p.rewrite(moves, i, piece)
			break
		}
	}
	n := len(p.moves)
	p.direct = slices.Grow(p.direct[:0], n)[:n]
	p.level = slices.Grow(p.level[:0], n)[:n]
	p.passes = append(p.passes[:0], 0)
	p.nlevel = p.nlevel[:0]
	if n == 0 {
		return
	}
	if !allGathered && p.sweep() {
		p.cut(0, n, scratchCap)
		return
	}
	if p.onePass() {
		p.closePass(0, n, scratchCap, allGathered)
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

// rewrite returns moves with zero sizes and moves onto themselves dropped
// and moves larger than piece cut, in p.own; moves[:from] need neither.
func (p *planner) rewrite(moves []device.Move, from int, piece uint64) []device.Move {
	out := append(p.own[:0], moves[:from]...)
	for _, m := range moves[from:] {
		switch {
		case m.Size == 0 || m.Src == m.Dst:
			// Nothing to do: a move onto itself leaves the bytes as they are.
		case m.Size <= piece:
			out = append(out, m)
		case m.Dst < m.Src:
			for off := uint64(0); off < m.Size; off += piece {
				n := min(piece, m.Size-off)
				out = append(out, device.Move{Src: m.Src + off, Dst: m.Dst + off, Size: n})
			}
		default:
			for end := m.Size; end > 0; {
				n := min(piece, end)
				end -= n
				out = append(out, device.Move{Src: m.Src + end, Dst: m.Dst + end, Size: n})
			}
		}
	}
	p.own = out
	return out
}

// sweep plans the batch as one pass, as closePass would, and reports true,
// when the batch has a compaction sweep's shape: every move goes down,
// and destinations and sources each ascend without overlapping one
// another. Then no move reads what an earlier one wrote (its source lies
// at or above its destination, above every earlier destination) and no
// byte is written twice: the batch is one pass. Levels come from one walk
// in step with the sources read so far, which ascend too. O(n), the hot
// path of arena compaction; false (and nothing planned) at the first move
// out of shape.
func (p *planner) sweep() bool {
	p.reads = p.reads[:0]
	var lastDst, lastSrc uint64 // ends of the previous move's ranges
	k := 0                      // the first read that ends after the current destination
	for j, m := range p.moves {
		if m.Dst < lastDst || m.Src < lastSrc || m.Dst >= m.Src {
			return false
		}
		lastDst, lastSrc = m.Dst+m.Size, m.Src+m.Size
		for k < len(p.reads) && p.reads[k].hi <= m.Dst {
			k++
		}
		level := int32(0)
		for i := k; i < len(p.reads) && p.reads[i].lo < lastDst; i++ {
			level = max(level, p.reads[i].level+1)
		}
		p.level[j] = level
		direct := m.Src >= lastDst && level < maxLevels-1 // not over itself; see levels
		p.direct[j] = direct
		if direct {
			p.reads = append(p.reads, segment{m.Src, lastSrc, level})
		}
	}
	return true
}

// onePass reports whether the whole batch is one pass: the fast path for
// the common batches (a sweep, a set of disjoint moves), O(n) for
// destinations in increasing or decreasing order, O(n log n) otherwise.
// The batch is one pass when its destinations are disjoint and no move's
// source overlaps the destination of an earlier move.
func (p *planner) onePass() bool {
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
		for ; k < n && dst(k).lo < s.hi; k++ {
			if int(p.order[k]) < j {
				return false
			}
		}
	}
	return true
}

// closePass plans the pass moves[start:end]: which moves are gathered,
// the level of each, and the cuts that keep each part's gathered bytes
// within scratchCap.
func (p *planner) closePass(start, end int, scratchCap uint64, allGathered bool) {
	if allGathered {
		for i := start; i < end; i++ {
			p.direct[i], p.level[i] = false, 0
		}
		p.cut(start, end, scratchCap)
		return
	}
	for i := start; i < end; i++ {
		p.direct[i] = !selfOverlaps(p.moves[i])
	}
	p.levels(start, end, true)
	p.cut(start, end, scratchCap)
}

// selfOverlaps reports whether m's source overlaps its own destination.
func selfOverlaps(m device.Move) bool {
	return m.Src < m.Dst+m.Size && m.Dst < m.Src+m.Size
}

// levels gives each move of moves[start:end] its level (see above), the
// moves' classes given; with capped, a direct move whose level would reach
// maxLevels-1 is gathered, so that no level reaches maxLevels. It returns
// the number of levels. O(n) when the direct moves' sources come in
// increasing order (a sweep); O(n) a move at worst otherwise.
func (p *planner) levels(start, end int, capped bool) int32 {
	p.reads = p.reads[:0]
	top := int32(0)
	hint := 0
	for j := start; j < end; j++ {
		m := p.moves[j]
		d := span{m.Dst, m.Dst + m.Size}
		// The reads that end after d starts: try the previous answer
		// first (a sweep's destinations ascend), then search.
		k := p.firstRead(hint, d.lo)
		hint = k
		level := int32(0)
		for ; k < len(p.reads) && p.reads[k].lo < d.hi; k++ {
			level = max(level, p.reads[k].level+1)
		}
		p.level[j] = level
		top = max(top, level+1)
		if !p.direct[j] {
			continue
		}
		if capped && level >= maxLevels-1 {
			p.direct[j] = false
			continue
		}
		p.read(span{m.Src, m.Src + m.Size}, level)
	}
	return top
}

// firstRead returns the index of the first read segment that ends after
// lo, trying a few steps on from hint (the previous answer) before a
// binary search.
func (p *planner) firstRead(hint int, lo uint64) int {
	n := len(p.reads)
	if hint <= n && (hint == 0 || p.reads[hint-1].hi <= lo) {
		for k := hint; k < n && k < hint+8; k++ {
			if p.reads[k].hi > lo {
				return k
			}
		}
		if hint+8 >= n {
			return n
		}
	}
	return sort.Search(n, func(i int) bool { return p.reads[i].hi > lo })
}

// read records that the direct move of level level reads s.
func (p *planner) read(s span, level int32) {
	n := len(p.reads)
	if n == 0 || p.reads[n-1].hi <= s.lo {
		p.reads = append(p.reads, segment{s.lo, s.hi, level}) // a sweep: always here
		return
	}
	// Merge into the sorted, disjoint segments: parts of s already read
	// keep the higher level, the rest is new.
	i := sort.Search(n, func(i int) bool { return p.reads[i].hi > s.lo })
	j := i
	for j < n && p.reads[j].lo < s.hi {
		j++
	}
	var buf [8]segment
	out := buf[:0]
	cur := s.lo
	for _, r := range p.reads[i:j] {
		if r.lo < s.lo {
			out = append(out, segment{r.lo, s.lo, r.level})
		}
		if cur < r.lo {
			out = append(out, segment{cur, r.lo, level})
		}
		lo, hi := max(r.lo, s.lo), min(r.hi, s.hi)
		out = append(out, segment{lo, hi, max(r.level, level)})
		cur = hi
		if r.hi > s.hi {
			out = append(out, segment{s.hi, r.hi, r.level})
		}
	}
	if cur < s.hi {
		out = append(out, segment{cur, s.hi, level})
	}
	p.reads = slices.Replace(p.reads, i, j, out...)
}

// cut records the planned pass moves[start:end], cut where its gathered
// bytes exceed scratchCap; each part gets its levels again, no higher
// than in the whole pass (a move has fewer earlier moves to wait for), so
// no move joins the gathered ones.
func (p *planner) cut(start, end int, scratchCap uint64) {
	gathered := uint64(0)
	from := start
	for i := start; i < end; i++ {
		if p.direct[i] {
			continue
		}
		cost := gatherCost(p.moves[i].Size)
		if gathered+cost > scratchCap && i > from {
			p.closePart(from, i, true)
			from = i
			gathered = 0
		}
		gathered += cost
	}
	p.closePart(from, end, from != start)
}

// closePart records moves[start:end] as a pass, leveling it again when it
// is part of a larger one.
func (p *planner) closePart(start, end int, part bool) {
	top := int32(0)
	if part {
		top = p.levels(start, end, false)
	} else {
		for i := start; i < end; i++ {
			top = max(top, p.level[i]+1)
		}
	}
	p.passes = append(p.passes, end)
	p.nlevel = append(p.nlevel, top)
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

// pass returns the moves of pass i, whether each is direct, the level
// of each, and the pass's number of levels.
func (p *planner) pass(i int) ([]device.Move, []bool, []int32, int) {
	lo, hi := p.passes[i], p.passes[i+1]
	return p.moves[lo:hi], p.direct[lo:hi], p.level[lo:hi], int(p.nlevel[i])
}
