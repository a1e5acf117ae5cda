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
// buffer one binding sees, else a power of two that is a multiple of the
// alignment and whose windows of two steps fit a binding.
func TestWindowStep(t *testing.T) {
	for _, c := range []struct{ size, binding, align, want uint64 }{
		{128 << 20, 128 << 20, 256, 0},
		{128<<20 + 4, 128 << 20, 256, 64 << 20},
		{512 << 20, 128 << 20, 256, 64 << 20},
		{1 << 30, 1<<31 - 1, 256, 0},
		{4 << 30, 1<<32 - 1, 256, 1 << 30},
		{4 << 30, 3 << 29, 256, 1 << 29},
		{1 << 20, 100 << 10, 256, 32 << 10},
	} {
		got := windowStep(c.size, c.binding, c.align)
		if got != c.want {
			t.Errorf("windowStep(%d, %d, %d) = %d, want %d", c.size, c.binding, c.align, got, c.want)
		}
		if got != 0 && (got&(got-1) != 0 || got%c.align != 0 || 2*got > c.binding) {
			t.Errorf("windowStep(%d, %d, %d) = %d: not a power of two, a multiple of the alignment, half a binding at most", c.size, c.binding, c.align, got)
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
