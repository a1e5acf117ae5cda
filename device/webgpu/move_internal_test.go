//go:build cgo

package webgpu

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/device"
)

// TestMovesInBounds checks Move's one-loop bounds check against the rule,
// device.CheckMoves: a batch it passes, CheckMoves passes (moves at the
// edges of the buffer, past them, misaligned, and sizes that overflow).
func TestMovesInBounds(t *testing.T) {
	const size = 1 << 20
	edge := []uint64{0, 4, size - 8, size - 4, size, size + 4, 1 << 63, ^uint64(0) - 3, 2, size - 2}
	r := rand.New(rand.NewPCG(3, 4))
	pick := func() uint64 {
		if r.IntN(2) == 0 {
			return edge[r.IntN(len(edge))]
		}
		return r.Uint64N(size+64) &^ 3
	}
	passed := 0
	for range 100000 {
		batch := make([]device.Move, 1+r.IntN(3))
		for i := range batch {
			batch[i] = device.Move{Src: pick(), Dst: pick(), Size: pick()}
		}
		fast := movesInBounds(size, batch)
		rule := device.CheckMoves(size, batch) == nil
		if fast && !rule {
			t.Fatalf("%v: movesInBounds passes a batch CheckMoves refuses", batch)
		}
		if fast {
			passed++
		}
	}
	if passed < 1000 {
		t.Fatalf("only %d batches passed: the check is not exercised", passed)
	}
	if !movesInBounds(size, []device.Move{{Src: 0, Dst: size - 16, Size: 16}, {Src: size - 4, Dst: 0, Size: 4}}) {
		t.Fatal("movesInBounds refuses moves inside the buffer")
	}
}

// TestPlanLeavesBatch plans batches that need no rewrite (the plan reads
// the caller's slice) between batches that do (zero sizes, moves onto
// themselves, moves cut to fit scratch) on one planner, and checks that
// no plan changes the caller's moves and each plan's moves are the batch
// as rewritten.
func TestPlanLeavesBatch(t *testing.T) {
	const scratch = 4096
	piece := uint64(scratch - 48)
	clean := []device.Move{{Src: 1024, Dst: 0, Size: 512}, {Src: 2048, Dst: 512, Size: 256}}
	dirty := []device.Move{{Src: 64, Dst: 64, Size: 32}, {Src: 16, Dst: 0, Size: 0}, {Src: 3 * piece, Dst: 0, Size: 2*piece + 16}, {Src: 0, Dst: 9 * piece, Size: piece + 4}}
	want := func(ms []device.Move) []device.Move {
		var out []device.Move
		for _, m := range ms {
			if m.Size == 0 || m.Src == m.Dst {
				continue
			}
			if m.Dst < m.Src {
				for off := uint64(0); off < m.Size; off += piece {
					out = append(out, device.Move{Src: m.Src + off, Dst: m.Dst + off, Size: min(piece, m.Size-off)})
				}
				continue
			}
			for end := m.Size; end > 0; {
				n := min(piece, end)
				end -= n
				out = append(out, device.Move{Src: m.Src + end, Dst: m.Dst + end, Size: n})
			}
		}
		return out
	}
	var p planner
	for i, batch := range [][]device.Move{clean, dirty, clean, slices.Concat(clean, dirty), clean, dirty} {
		in := slices.Clone(batch)
		p.plan(batch, scratch, i%2 == 0)
		if !slices.Equal(batch, in) {
			t.Fatalf("batch %d: plan changed the caller's moves: %v, was %v", i, batch, in)
		}
		if got := p.moves; !slices.Equal(got, want(in)) {
			t.Fatalf("batch %d: planned moves %v, want %v", i, got, want(in))
		}
	}
}

// TestWindowStep checks the window step of the compute path: none for a
// buffer one binding sees, else the largest multiple of the alignment
// whose windows of two steps fit a binding (a power of two where the
// binding limit is one).
func TestWindowStep(t *testing.T) {
	for _, c := range []struct{ size, binding, align, want uint64 }{
		{128 << 20, 128 << 20, 256, 0},
		{128<<20 + 4, 128 << 20, 256, 64 << 20},
		{512 << 20, 128 << 20, 256, 64 << 20},
		{1 << 30, 1<<31 - 1, 256, 0},
		{4 << 30, 1 << 31, 256, 1 << 30},
		{2 << 30, 1<<31 - 1, 256, 1<<30 - 256},
		{4 << 30, 3 << 29, 256, 3 << 28},
		{1 << 20, 100 << 10, 256, 50 << 10},
	} {
		got := windowStep(c.size, c.binding, c.align)
		if got != c.want {
			t.Errorf("windowStep(%d, %d, %d) = %d, want %d", c.size, c.binding, c.align, got, c.want)
		}
		if got != 0 && (got%c.align != 0 || 2*got > c.binding || c.binding&(c.binding-1) == 0 && got&(got-1) != 0) {
			t.Errorf("windowStep(%d, %d, %d) = %d: not a multiple of the alignment, half a binding at most, a power of two where the binding is one", c.size, c.binding, c.align, got)
		}
	}
}

// TestMoveBindGroupsPerBuffer moves in two buffers in turn and checks that
// each keeps its bind groups (the second round makes none, and each
// buffer's bytes are the moves done in order), that a released buffer's
// bind groups are dropped at the next move, and that a larger scratch
// buffer drops them all.
func TestMoveBindGroupsPerBuffer(t *testing.T) {
	d := newTestDevice(t, Options{Moves: MoveCompute})
	const size = 1 << 20
	var bufs []device.Buffer
	var want [][]byte
	for i := range 2 {
		b, err := d.CreateBuffer(device.BufferDesc{Label: "bind groups", Size: size, Usage: device.CopySrc | device.CopyDst})
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(j*7 + i)
		}
		if err := d.WriteBuffer(b, 0, data); err != nil {
			t.Fatal(err)
		}
		bufs, want = append(bufs, b), append(want, data)
	}
	// A sweep (direct moves and a slide over itself: gathered through
	// scratch) and a word-aligned move (the word and shift kernels).
	batch := []device.Move{{Src: 4096, Dst: 0, Size: 2048}, {Src: 8192, Dst: 2048, Size: 8192}, {Src: 65540, Dst: 32768, Size: 1000}}
	round := func() {
		for i, b := range bufs {
			if err := d.Move(b, batch); err != nil {
				t.Fatal(err)
			}
			refMoves(want[i], batch)
		}
	}
	round()
	made := d.kernels.table.made
	if made == 0 || len(d.kernels.table.bound) != 2 {
		t.Fatalf("after a round: %d bind groups made, %d buffers cached", made, len(d.kernels.table.bound))
	}
	round()
	if got := d.kernels.table.made; got != made {
		t.Fatalf("the second round made %d bind groups", got-made)
	}
	for i, b := range bufs {
		got := make([]byte, size)
		if err := d.ReadBuffer(b, 0, got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want[i]) {
			t.Fatalf("buffer %d: bytes differ from the moves done in order", i)
		}
	}
	bufs[0].Release()
	if err := d.Move(bufs[1], batch); err != nil {
		t.Fatal(err)
	}
	if n := len(d.kernels.table.bound); n != 1 {
		t.Fatalf("after releasing a buffer: %d buffers cached, want 1", n)
	}
	if err := d.Move(bufs[0], batch); !errors.Is(err, device.ErrReleased) {
		t.Fatalf("move in a released buffer: %v", err)
	}
	// A batch gathering more than scratch holds grows it: the bind
	// groups, which bind the old scratch, go.
	big := []device.Move{{Src: 16, Dst: 0, Size: size - 16}}
	before := d.scratchSize
	if err := d.Move(bufs[1], big); err != nil {
		t.Fatal(err)
	}
	if d.scratchSize == before {
		t.Skipf("scratch held %d bytes already", before)
	}
	if got := len(d.kernels.table.bound[0].groups); got != 2 {
		t.Fatalf("after scratch grew: %d bind groups for the buffer, want the 2 of the new batch", got)
	}
	refMoves(want[1], batch)
	refMoves(want[1], big)
	got := make([]byte, size)
	if err := d.ReadBuffer(bufs[1], 0, got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want[1]) {
		t.Fatal("bytes differ from the moves done in order after scratch grew")
	}
}

// TestMoveTablesWindows builds the compaction batch's table with window
// steps that are a power of two (a shift finds the window) and that are
// not (a division does), and checks that every entry of a direct move,
// its offsets taken back to the buffer through its group's windows, lies
// inside both windows and copies bytes of one move to where that move
// puts them, and that the entries copy every byte of the batch.
func TestMoveTablesWindows(t *testing.T) {
	moves := compactionMoves(rand.New(rand.NewPCG(5, 6)))
	var p planner
	var mt moveTables
	for _, half := range []uint64{64 << 20, 48<<20 + 256, 20<<20 + 4096} {
		p.plan(moves, 128<<20, false)
		byDst := slices.Clone(p.moves)
		slices.SortFunc(byDst, func(a, b device.Move) int { return int(int64(a.Dst) - int64(b.Dst)) })
		phases, _ := mt.build(&p, half, 256, 1<<20)
		var copied uint64
		want := copyBytes(&p)
		for _, ph := range phases {
			for _, g := range ph.used() {
				su, du := uint64(4), uint64(4)
				switch g.kernel {
				case kernelVec4:
					su, du = 16, 16
				case kernelShift:
					du = 16
				}
				for e := 0; e < len(g.entries); e += 4 {
					s, d, n := uint64(g.entries[e])*su, uint64(g.entries[e+1])*du, uint64(g.entries[e+2])*du
					copied += n
					if g.src.scratch || g.dst.scratch {
						continue
					}
					if s+n > 2*half || d+n > 2*half {
						t.Fatalf("H %d: an entry [%d, +%d) -> [%d, +%d) leaves its windows of %d bytes", half, s, n, d, n, 2*half)
					}
					s += g.src.window * half
					d += g.dst.window * half
					k, _ := slices.BinarySearchFunc(byDst, d, func(m device.Move, d uint64) int {
						if m.Dst+m.Size <= d {
							return -1
						}
						if m.Dst > d {
							return 1
						}
						return 0
					})
					if k == len(byDst) || d < byDst[k].Dst || d+n > byDst[k].Dst+byDst[k].Size || s-byDst[k].Src != d-byDst[k].Dst {
						t.Fatalf("H %d: an entry %d -> %d of %d bytes is no part of a move", half, s, d, n)
					}
				}
			}
		}
		if copied != want {
			t.Fatalf("H %d: entries copy %d bytes, want %d", half, copied, want)
		}
	}
}

// TestMoveTableBufferSettles records rounds of batches back to back into
// one encoder, a submit between rounds, and checks that the table buffer
// grows only in the first rounds (doubling) and that later rounds make no
// table buffer and no bind group, with every byte as the moves done in
// order.
func TestMoveTableBufferSettles(t *testing.T) {
	d := newTestDevice(t, Options{Moves: MoveCompute})
	const size = 4 << 20
	b, err := d.CreateBuffer(device.BufferDesc{Label: "table settles", Size: size, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i * 13)
	}
	if err := d.WriteBuffer(b, 0, want); err != nil {
		t.Fatal(err)
	}
	// 2,048 moves of 1 KiB, upper half to lower half: a table of 32 KiB,
	// half the first table buffer's, so the second batch outgrows it.
	var batch []device.Move
	for i := range uint64(2048) {
		batch = append(batch, device.Move{Src: size/2 + i<<10, Dst: (2047 - i) << 10, Size: 1 << 10})
	}
	var buffers, made []int
	for range 6 {
		for range 20 {
			if err := d.Move(b, batch); err != nil {
				t.Fatal(err)
			}
			refMoves(want, batch)
		}
		if err := d.Submit(); err != nil {
			t.Fatal(err)
		}
		buffers = append(buffers, d.kernels.table.buffers)
		made = append(made, d.kernels.table.made)
	}
	if buffers[2] != buffers[5] || made[2] != made[5] {
		t.Fatalf("table buffers made after each round %v, bind groups %v: later rounds still make them", buffers, made)
	}
	if buffers[5] > 8 {
		t.Fatalf("%d table buffers for rounds of 20 batches: not doubling", buffers[5])
	}
	got := make([]byte, size)
	if err := d.ReadBuffer(b, 0, got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatal("bytes differ from the moves done in order")
	}
}
