//go:build cgo

package webgpu

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gpumem/gpumem/device"
)

// refMoves applies moves one by one, in order: the semantics Move promises.
func refMoves(buf []byte, moves []device.Move) {
	for _, m := range moves {
		copy(buf[m.Dst:m.Dst+m.Size], buf[m.Src:m.Src+m.Size])
	}
}

// runPlan executes a plan on buf the way the GPU does: for each pass, the
// gather step, then each level, with the copies of a level in the order
// given by reverse: any dependence the plan failed to cut shows up as a
// difference between the two orders or against the reference. It also
// checks the invariants the kernels rely on: no byte written twice in a
// pass, no direct move reading a byte written in its level, no direct
// move overlapping itself, every level below the pass's count.
func runPlan(t *testing.T, p *planner, buf []byte, reverse bool) {
	t.Helper()
	for i := range p.numPasses() {
		moves, direct, level, levels := p.pass(i)
		written := make([]bool, len(buf))
		scratch := make([][]byte, len(moves))
		for j, m := range moves {
			if level[j] < 0 || int(level[j]) >= levels {
				t.Fatalf("pass %d: move %d at level %d of %d", i, j, level[j], levels)
			}
			if direct[j] && selfOverlaps(m) {
				t.Fatalf("pass %d: direct move %d %v overlaps itself", i, j, m)
			}
			if !direct[j] {
				scratch[j] = bytes.Clone(buf[m.Src : m.Src+m.Size])
			}
			for k := m.Dst; k < m.Dst+m.Size; k++ {
				if written[k] {
					t.Fatalf("pass %d: byte %d written twice", i, k)
				}
				written[k] = true
			}
		}
		for l := range int32(levels) {
			inLevel := make([]bool, len(buf))
			var order []int
			for j, m := range moves {
				if level[j] == l {
					order = append(order, j)
					for k := m.Dst; k < m.Dst+m.Size; k++ {
						inLevel[k] = true
					}
				}
			}
			for _, j := range order {
				m := moves[j]
				if direct[j] {
					for k := m.Src; k < m.Src+m.Size; k++ {
						if inLevel[k] {
							t.Fatalf("pass %d: direct move %d reads byte %d written in its level %d", i, j, k, l)
						}
					}
				}
			}
			if reverse {
				slices.Reverse(order)
			}
			for _, j := range order {
				m := moves[j]
				if direct[j] {
					copy(buf[m.Dst:m.Dst+m.Size], buf[m.Src:m.Src+m.Size])
				} else {
					copy(buf[m.Dst:m.Dst+m.Size], scratch[j])
				}
			}
		}
	}
}

// randomBatch makes a batch of n moves in a buffer of size bytes, mixing
// chains (each move's source is the previous one's destination), sweeps,
// self-overlapping slides and random moves.
func randomBatch(r *rand.Rand, size uint64, n int) []device.Move {
	var moves []device.Move
	word := func(limit uint64) uint64 { return r.Uint64N(limit/4) * 4 }
	for len(moves) < n {
		switch r.IntN(4) {
		case 0: // chain
			sz := 4 + word(min(size/8, 4096))
			at := word(size - sz)
			for range 1 + r.IntN(6) {
				next := word(size - sz)
				moves = append(moves, device.Move{Src: at, Dst: next, Size: sz})
				at = next
			}
		case 1: // sweep: blocks slide down over the gaps before them
			at := word(size / 2)
			dst := at - word(at+4)
			for range 1 + r.IntN(8) {
				sz := 4 + word(512)
				if at+sz > size {
					break
				}
				moves = append(moves, device.Move{Src: at, Dst: dst, Size: sz})
				dst += sz
				at += sz + word(64)
			}
		case 2: // slide over itself, either way
			sz := 8 + word(min(size/2, 8192))
			src := word(size - sz)
			dst := word(size - sz)
			moves = append(moves, device.Move{Src: src, Dst: dst, Size: sz})
		default:
			sz := word(size / 4)
			moves = append(moves, device.Move{Src: word(size - sz), Dst: word(size - sz), Size: sz})
		}
	}
	return moves
}

func TestPlanEqualsSequential(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var p planner
	for iter := range 500 {
		size := 64 + uint64(r.IntN(16<<10))&^3
		moves := randomBatch(r, size, 1+r.IntN(20))
		init := make([]byte, size)
		for i := range init {
			init[i] = byte(r.Uint32())
		}
		want := bytes.Clone(init)
		refMoves(want, moves)
		scratchCap := []uint64{1 << 20, 4096, 512}[iter%3]
		for _, all := range []bool{false, true} {
			p.plan(moves, scratchCap, all)
			for _, rev := range []bool{false, true} {
				got := bytes.Clone(init)
				runPlan(t, &p, got, rev)
				if !bytes.Equal(got, want) {
					t.Fatalf("iteration %d (cap %d, all gathered %v, reverse %v): moves %v: result differs from sequential", iter, scratchCap, all, rev, moves)
				}
			}
		}
	}
}

// TestPlanSweepIsOnePass checks that a compaction sweep, the hot path, runs
// as one pass, with the blocks that do not overlap their own destination
// copied directly.
func TestPlanSweepIsOnePass(t *testing.T) {
	var moves []device.Move
	src, dst := uint64(4096), uint64(0)
	for i := range 1000 {
		sz := uint64(64 + 16*(i%7))
		moves = append(moves, device.Move{Src: src, Dst: dst, Size: sz})
		dst += sz
		src += sz + 4096
	}
	var p planner
	p.plan(moves, 256<<20, false)
	if p.numPasses() != 1 {
		t.Fatalf("sweep took %d passes, want 1", p.numPasses())
	}
	_, direct, _, _ := p.pass(0)
	n := 0
	for _, d := range direct {
		if d {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no direct move in a sweep with wide gaps")
	}
}

// BenchmarkPlan measures the CPU cost of planning a batch: a sweep (one
// pass, destinations ascending) and a batch of chains (many passes).
func BenchmarkPlan(b *testing.B) {
	sweep := make([]device.Move, 20000)
	src, dst := uint64(4096), uint64(0)
	for i := range sweep {
		sweep[i] = device.Move{Src: src, Dst: dst, Size: 4096}
		dst += 4096
		src += 4096 + 64
	}
	chains := randomBatch(rand.New(rand.NewPCG(7, 8)), 64<<20, 20000)
	for _, c := range []struct {
		name  string
		moves []device.Move
	}{{"sweep", sweep}, {"chains", chains}} {
		b.Run(c.name, func(b *testing.B) {
			var p planner
			b.ReportAllocs()
			for b.Loop() {
				p.plan(c.moves, 128<<20, false)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.moves)), "ns/move")
			b.ReportMetric(float64(p.numPasses()), "passes")
		})
	}
}

// compactionMoves returns the moves of compacting a 512 MiB buffer of
// allocations of 16 to 256 KiB, a quarter of them freed: the arena's sweep
// benchmark's batch.
func compactionMoves(r *rand.Rand) []device.Move {
	var moves []device.Move
	src, dst := uint64(0), uint64(0)
	for {
		n := 16 * uint64(1024+r.Uint32N(15*1024))
		if src+n > 512<<20 {
			return moves
		}
		if r.IntN(4) != 0 { // live: slides down
			if src != dst {
				moves = append(moves, device.Move{Src: src, Dst: dst, Size: n})
			}
			dst += n
		}
		src += n
	}
}

// TestMoveTables builds the tables of batches of different sizes on one
// moveTables, largest first, so that later ones reuse its memory, and
// checks each table's layout, on both of encode's paths: no group empty
// (a dispatch of nothing), each group's entries, little-endian, at a
// multiple of the segment alignment, in the order the groups dispatch, and
// every byte of every move copied by exactly one entry of each phase.
func TestMoveTables(t *testing.T) {
	all := compactionMoves(rand.New(rand.NewPCG(1, 2)))
	var mt moveTables
	var p planner
	for _, n := range []int{len(all), 10, 500, 1} {
		for _, segAlign := range []uint64{16, 256} {
			p.plan(all[:n], 128<<20, false)
			phases, table := mt.build(&p, 64<<20, segAlign, 1<<20)
			le := bytes.Clone(table)
			be := bytes.Clone(mt.encode(phases, segAlign, false))
			if hostLittleEndian && !bytes.Equal(le, be) {
				t.Fatalf("%d moves: the two encodings differ", n)
			}
			off, bytesCopied := uint64(0), uint64(0)
			for _, ph := range phases {
				for _, g := range ph.used() {
					if len(g.entries) == 0 {
						t.Fatalf("%d moves: an empty group (a dispatch of nothing)", n)
					}
					if off%segAlign != 0 {
						t.Fatalf("%d moves: a segment at %d, not a multiple of %d", n, off, segAlign)
					}
					if got := binary.LittleEndian.Uint32(be[off:]); got != uint32(len(g.entries)/4) {
						t.Fatalf("%d moves: a segment's header says %d entries, want %d", n, got, len(g.entries)/4)
					}
					for i, w := range g.entries {
						if got := binary.LittleEndian.Uint32(be[off+16+uint64(i)*4:]); got != w {
							t.Fatalf("%d moves: word %d of a segment at %d = %d, want %d", n, i, off, got, w)
						}
					}
					for i := 0; i < len(g.entries); i += 4 {
						unit := uint64(4)
						if g.kernel != kernelWord {
							unit = 16
						}
						bytesCopied += uint64(g.entries[i+2]) * unit
					}
					off = alignUp(off+segmentBytes(len(g.entries)), segAlign)
				}
			}
			if off != uint64(len(be)) {
				t.Fatalf("%d moves: table of %d bytes, its segments end at %d", n, len(be), off)
			}
			if want := copyBytes(&p); bytesCopied != want {
				t.Fatalf("%d moves: entries copy %d bytes, want %d", n, bytesCopied, want)
			}
		}
	}
}

// BenchmarkMoveTables measures the CPU cost of planning a compaction batch
// and building the compute path's table for it, as a device does for each
// batch after its first: with 128 MiB storage bindings (WebGPU's default;
// the 512 MiB buffer is bound through windows) and with bindings that see
// the whole buffer (as 2 GiB bindings do on discrete GPUs). ns/move is
// the whole; plan-, build- and encode-ns/move its three steps (the plan,
// the groups of chunks, the table's words).
func BenchmarkMoveTables(b *testing.B) {
	moves := compactionMoves(rand.New(rand.NewPCG(7, 8)))
	for _, c := range []struct {
		name string
		half uint64
	}{{"windows", 64 << 20}, {"whole", 0}} {
		b.Run(c.name, func(b *testing.B) {
			var p planner
			var mt moveTables
			var plan, build, encode time.Duration
			b.ReportAllocs()
			entries := 0
			for b.Loop() {
				t0 := time.Now()
				p.plan(moves, 128<<20, false)
				t1 := time.Now()
				phases := mt.buildGroups(&p, c.half, 1<<20)
				t2 := time.Now()
				table := mt.encode(phases, 256, hostLittleEndian)
				t3 := time.Now()
				plan += t1.Sub(t0)
				build += t2.Sub(t1)
				encode += t3.Sub(t2)
				entries = len(table) / 16
			}
			n := float64(b.N * len(moves))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/move")
			b.ReportMetric(float64(plan.Nanoseconds())/n, "plan-ns/move")
			b.ReportMetric(float64(build.Nanoseconds())/n, "build-ns/move")
			b.ReportMetric(float64(encode.Nanoseconds())/n, "encode-ns/move")
			b.ReportMetric(float64(len(moves)), "moves")
			b.ReportMetric(float64(entries), "entries")
		})
	}
}

// sweepBatch returns the moves of compacting a buffer of size bytes of
// blocks of 16 bytes to maxBlock, holes of up to maxHole bytes (0: none)
// between some of them: each block slides down to the end of the one
// before it, in address order, as arena's Compact records them. Small
// holes make blocks slide over themselves; large ones, long chains of
// levels.
func sweepBatch(r *rand.Rand, size, maxBlock, maxHole uint64) []device.Move {
	var moves []device.Move
	src, dst := uint64(0), uint64(0)
	for {
		if maxHole > 0 && r.IntN(3) == 0 {
			src += 16 * (1 + r.Uint64N(maxHole/16))
		}
		n := 16 * (1 + r.Uint64N(maxBlock/16))
		if src+n > size {
			return moves
		}
		if src != dst {
			moves = append(moves, device.Move{Src: src, Dst: dst, Size: n})
		}
		src += n
		dst += n
	}
}

// TestPlanSweepLevels checks the plan of compaction sweeps of many shapes
// against sequential moves, and that it is what the planner promises for
// them: one pass (when scratch holds its gathered bytes), no move gathered
// but those over themselves and those past the level cap, fewer than
// maxLevels levels. Sweeps with unaligned sizes take the general table
// path; word-aligned ones the sweep fast path of the planner either way.
func TestPlanSweepLevels(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var p planner
	for iter := range 300 {
		size := uint64(4<<10 + r.IntN(60<<10))
		maxBlock := uint64(32 + r.IntN(2048))
		maxHole := []uint64{0, 16, 64, 1024, 8192}[iter%5]
		moves := sweepBatch(r, size, maxBlock, maxHole)
		init := make([]byte, size)
		for i := range init {
			init[i] = byte(r.Uint32())
		}
		want := bytes.Clone(init)
		refMoves(want, moves)
		p.plan(moves, 1<<20, false)
		if len(moves) > 0 && p.numPasses() != 1 {
			t.Fatalf("iteration %d: a sweep in %d passes", iter, p.numPasses())
		}
		for i := range p.numPasses() {
			ms, direct, level, levels := p.pass(i)
			if levels > maxLevels {
				t.Fatalf("iteration %d: %d levels, more than %d", iter, levels, maxLevels)
			}
			for j, m := range ms {
				if !direct[j] && !selfOverlaps(m) && level[j] < maxLevels-1 {
					t.Fatalf("iteration %d: move %v gathered at level %d: it overlaps no destination of its level", iter, m, level[j])
				}
			}
		}
		for _, rev := range []bool{false, true} {
			got := bytes.Clone(init)
			runPlan(t, &p, got, rev)
			if !bytes.Equal(got, want) {
				t.Fatalf("iteration %d (reverse %v): %d moves: result differs from sequential", iter, rev, len(moves))
			}
		}
	}
}

// TestPlanChainCapped checks a batch where every move writes over the
// source of the move before it (blocks of one size sliding down by one
// block, each a level above the last without a cap): it runs in at most
// maxLevels levels, the moves past the cap gathered, and equals the
// sequential moves.
func TestPlanChainCapped(t *testing.T) {
	const block, n = 64, 200
	var moves []device.Move
	for i := range uint64(n) {
		moves = append(moves, device.Move{Src: (i + 1) * block, Dst: i * block, Size: block})
	}
	size := uint64((n + 1) * block)
	init := make([]byte, size)
	for i := range init {
		init[i] = byte(i * 7)
	}
	want := bytes.Clone(init)
	refMoves(want, moves)
	var p planner
	for _, scratch := range []uint64{1 << 20, 1024} {
		p.plan(moves, scratch, false)
		gathered := 0
		for i := range p.numPasses() {
			_, direct, _, levels := p.pass(i)
			if levels > maxLevels {
				t.Fatalf("scratch %d: pass %d has %d levels, more than %d", scratch, i, levels, maxLevels)
			}
			for _, d := range direct {
				if !d {
					gathered++
				}
			}
		}
		if gathered == 0 || gathered == n {
			t.Fatalf("scratch %d: %d of %d moves gathered: want the cap to gather some, not all", scratch, gathered, n)
		}
		got := bytes.Clone(init)
		runPlan(t, &p, got, true)
		if !bytes.Equal(got, want) {
			t.Fatalf("scratch %d: result differs from sequential", scratch)
		}
	}
}

// FuzzPlan plans batches decoded from the input (6 bytes a move: source,
// destination and size in words of a 16 KiB buffer) on every path and
// scratch size, and checks the plan, run in both orders of each level,
// against the moves done one by one.
func FuzzPlan(f *testing.F) {
	f.Add([]byte{0, 16, 0, 0, 0, 16, 0, 32, 0, 16, 0, 16})
	f.Add([]byte{0, 4, 0, 0, 0, 8, 0, 8, 0, 4, 0, 8, 0, 12, 0, 8, 0, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		const size = 16 << 10
		var moves []device.Move
		for len(data) >= 6 && len(moves) < 64 {
			w := func(i int) uint64 { return uint64(data[i])<<8 | uint64(data[i+1]) }
			src, dst, n := 4*(w(0)%(size/4)), 4*(w(2)%(size/4)), 4*(w(4)%(size/4))
			data = data[6:]
			n = min(n, size-src, size-dst)
			moves = append(moves, device.Move{Src: src, Dst: dst, Size: n})
		}
		init := make([]byte, size)
		for i := range init {
			init[i] = byte(i*131 + i>>8)
		}
		want := bytes.Clone(init)
		refMoves(want, moves)
		var p planner
		for _, scratch := range []uint64{1 << 20, 4096, 512} {
			for _, all := range []bool{false, true} {
				p.plan(moves, scratch, all)
				for _, rev := range []bool{false, true} {
					got := bytes.Clone(init)
					runPlan(t, &p, got, rev)
					if !bytes.Equal(got, want) {
						t.Fatalf("scratch %d, all gathered %v, reverse %v: moves %v: result differs from sequential", scratch, all, rev, moves)
					}
				}
			}
		}
	})
}

// copyBytes returns the bytes the move tables of p's passes must copy:
// each moved byte once when it moves directly, twice when it is gathered
// into scratch and scattered from there.
func copyBytes(p *planner) uint64 {
	var n uint64
	for i := range p.numPasses() {
		moves, direct, _, _ := p.pass(i)
		for j, m := range moves {
			n += m.Size
			if !direct[j] {
				n += m.Size
			}
		}
	}
	return n
}
