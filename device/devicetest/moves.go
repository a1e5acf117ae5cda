package devicetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/device"
)

// moveCase runs batches of moves on a buffer of size random bytes and
// checks the whole buffer against refMove after each batch.
func moveCase(t *testing.T, d device.Device, r *rand.Rand, size uint64, usage device.Usage, batches ...[]device.Move) {
	t.Helper()
	b, want := filled(t, d, r, size, usage)
	for i, mv := range batches {
		if err := d.Move(b, mv); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		refMove(want, mv)
		equal(t, fmt.Sprintf("after batch %d of %d moves", i, len(mv)),
			read(t, d, b, 0, size), want)
	}
	b.Release()
}

// usages are the buffer usages moves are tested with: without Storage a
// backend must copy; with it, it may run a compute shader.
var usages = []struct {
	name  string
	usage device.Usage
}{{"copy", rw}, {"storage", rwStore}}

func testMoveSizeClasses(t *testing.T, s *suite) {
	d := s.device(t)
	for _, u := range usages {
		for _, sz := range []uint64{4, 256, 4 << 10, 64 << 10, 1 << 20} {
			t.Run(fmt.Sprintf("%s/%d", u.name, sz), func(t *testing.T) {
				size := 4*sz + 64
				needBuffer(t, d, size)
				r := newRand(t.Name())
				const base = 12 // not a multiple of 16: vector loads must cope
				h := max(4, sz/3&^3)
				moveCase(t, d, r, size, u.usage,
					[]device.Move{{Src: base, Dst: base + sz + 8, Size: sz}},              // disjoint forward
					[]device.Move{{Src: base + 2*sz + 20, Dst: base + 4, Size: sz}},       // disjoint backward
					[]device.Move{{Src: base, Dst: base + h, Size: sz}},                   // overlapping forward
					[]device.Move{{Src: base + h, Dst: base, Size: sz}},                   // overlapping backward
					[]device.Move{{Src: base + 4, Dst: base + 4, Size: sz}},               // onto itself
					[]device.Move{{Src: 0, Dst: 4, Size: sz}, {Src: 4, Dst: 0, Size: sz}}, // back and forth by one word
					[]device.Move{ // all of the above, in one batch
						{Src: base, Dst: base + sz + 8, Size: sz},
						{Src: base + 2*sz + 20, Dst: base + 4, Size: sz},
						{Src: base, Dst: base + h, Size: sz},
						{Src: base + h, Dst: base, Size: sz},
						{Src: 3 * sz, Dst: 3*sz + 60, Size: sz},
						{Src: 3*sz + 60, Dst: 0, Size: sz},
					},
				)
			})
		}
	}
}

// testMoveLarge moves 64 MiB forward and back over itself, once.
func testMoveLarge(t *testing.T, s *suite) {
	d := s.device(t)
	const mi = 1 << 20
	size := uint64(72 * mi)
	needBuffer(t, d, size)
	moveCase(t, d, newRand(t.Name()), size, rwStore, []device.Move{
		{Src: 0, Dst: 8 * mi, Size: 64 * mi},
		{Src: 8 * mi, Dst: 4*mi + 4, Size: 64 * mi},
	})
}

// sweep returns the moves of a compaction sweep over blocks (offset, size)
// sorted by offset: each block slides down to the end of the one before,
// into the space the previous move left; blocks with a gap smaller than
// their size overlap their own old place.
func sweep(blocks [][2]uint64) []device.Move {
	var mv []device.Move
	cursor := uint64(0)
	for _, b := range blocks {
		if b[0] != cursor {
			mv = append(mv, device.Move{Src: b[0], Dst: cursor, Size: b[1]})
		}
		cursor += b[1]
	}
	return mv
}

// randomBlocks lays out blocks with random gaps over size bytes.
func randomBlocks(r *rand.Rand, size, maxBlock, maxGap uint64) [][2]uint64 {
	var blocks [][2]uint64
	off := uint64(0)
	for {
		off += r.Uint64N(maxGap/4+1) * 4
		n := (1 + r.Uint64N(maxBlock/4)) * 4
		if off+n > size {
			return blocks
		}
		blocks = append(blocks, [2]uint64{off, n})
		off += n
	}
}

func testMoveSweep(t *testing.T, s *suite) {
	d := s.device(t)
	for _, u := range usages {
		t.Run(u.name, func(t *testing.T) {
			r := newRand(t.Name())
			const size = 1 << 20
			// Small gaps: most blocks overlap their own old place.
			small := sweep(randomBlocks(r, size, 16<<10, 256))
			// Large gaps: blocks jump over several of their neighbours' old places.
			large := sweep(randomBlocks(r, size, 4<<10, 16<<10))
			// Dependent chain: each move reads a word the move before it wrote.
			var chain []device.Move
			for i := range uint64(1000) {
				chain = append(chain, device.Move{Src: 4096 + i*256, Dst: 4096 + i*256 + 4, Size: 256})
			}
			// Slide up: blocks move toward the end, last first.
			blocks := randomBlocks(r, size/2, 4<<10, 1<<10)
			var up []device.Move
			for i := len(blocks) - 1; i >= 0; i-- {
				up = append(up, device.Move{Src: blocks[i][0], Dst: blocks[i][0] + size/2 - 4*uint64(i+1), Size: blocks[i][1]})
			}
			if len(small) < 50 || len(large) < 50 {
				t.Fatalf("sweeps of %d and %d moves: the generator is broken", len(small), len(large))
			}
			moveCase(t, d, r, size, u.usage, small, large, chain, up)
		})
	}
}

func testMoveRandomBatch(t *testing.T, s *suite) {
	d := s.device(t)
	for _, u := range usages {
		t.Run(u.name, func(t *testing.T) {
			r := newRand(t.Name())
			batch := func(size, maxMove uint64, n int) []device.Move {
				mv := make([]device.Move, n)
				for i := range mv {
					m := r.Uint64N(maxMove/4+1) * 4
					mv[i] = device.Move{Src: r.Uint64N((size-m)/4+1) * 4, Dst: r.Uint64N((size-m)/4+1) * 4, Size: m}
				}
				return mv
			}
			moveCase(t, d, r, 64<<10, u.usage, batch(64<<10, 4<<10, 300), batch(64<<10, 32<<10, 50), batch(64<<10, 64, 2000))
			moveCase(t, d, r, 4096, u.usage, batch(4096, 16, 1000), batch(4096, 1024, 100))
		})
	}
}

// testMoveManySmall runs a batch of 16,384 moves of 256 bytes: a backend
// that records one command per move must still get every byte right.
func testMoveManySmall(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	const n, sz = 16384, 256
	const size = 2 * n * sz
	perm := r.Perm(n)
	mv := make([]device.Move, n)
	for i, p := range perm {
		mv[i] = device.Move{Src: uint64(i) * sz, Dst: size/2 + uint64(p)*sz, Size: sz}
	}
	needBuffer(t, d, size)
	moveCase(t, d, r, size, rwStore, mv, sweep(randomBlocks(r, size, 256, 256)))
}

func testMoveErrors(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	const size = 4096
	b, want := filled(t, d, r, size, rwStore)
	ok := device.Move{Src: 0, Dst: 64, Size: 128}
	for _, c := range []struct {
		what string
		m    device.Move
		err  error
	}{
		{"source 2", device.Move{Src: 2, Dst: 64, Size: 4}, device.ErrInvalidAlignment},
		{"destination 6", device.Move{Src: 0, Dst: 6, Size: 4}, device.ErrInvalidAlignment},
		{"size 5", device.Move{Src: 0, Dst: 64, Size: 5}, device.ErrInvalidAlignment},
		{"source past the end", device.Move{Src: size - 4, Dst: 0, Size: 8}, device.ErrOutOfBounds},
		{"destination past the end", device.Move{Src: 0, Dst: size - 4, Size: 8}, device.ErrOutOfBounds},
		{"source beyond the end", device.Move{Src: size + 4, Dst: 0, Size: 0}, device.ErrOutOfBounds},
		{"overflow", device.Move{Src: math.MaxUint64 &^ 3, Dst: 0, Size: 8}, device.ErrOutOfBounds},
		{"overflowing size", device.Move{Src: 0, Dst: 0, Size: math.MaxUint64 &^ 3}, device.ErrOutOfBounds},
	} {
		wantErr(t, "Move "+c.what, d.Move(b, []device.Move{c.m}), c.err)
		// A bad move anywhere in the batch stops the whole batch.
		wantErr(t, "Move batch with "+c.what, d.Move(b, []device.Move{ok, c.m, ok}), c.err)
	}
	must(t, d.Move(b, nil))
	must(t, d.Move(b, []device.Move{}))
	must(t, d.Move(b, []device.Move{{Src: 8, Dst: 16, Size: 0}, {Src: size, Dst: size, Size: 0}}))
	check(t, d, b, want)

	for _, u := range []device.Usage{device.CopySrc | device.Storage, device.CopyDst | device.Storage} {
		nb := mustBuffer(t, d, 256, u)
		wantErr(t, fmt.Sprintf("Move in a buffer with usage %v", u), d.Move(nb, []device.Move{{Src: 0, Dst: 4, Size: 4}}), device.ErrInvalidUsage)
	}
}

// testMoveBeyondStorageBinding moves and patches across the end of the
// first MaxStorageBufferBindingSize bytes: a compute backend must bind the
// buffer in windows, or fall back to copies.
func testMoveBeyondStorageBinding(t *testing.T, s *suite) {
	d := s.device(t)
	const mi = 1 << 20
	lim := d.Limits().MaxStorageBufferBindingSize &^ 255
	size := lim + mi
	needBuffer(t, d, size)
	if size > 257*mi {
		t.Skipf("MaxStorageBufferBindingSize %d: too large a buffer for the suite", lim)
	}
	if lim < 4*mi {
		t.Skipf("MaxStorageBufferBindingSize %d: too small to cross", lim)
	}
	r := newRand(t.Name())
	b := mustBuffer(t, d, size, rwStore)
	want := make([]byte, size)
	lo, hi := randBytes(r, mi), randBytes(r, 3*mi)
	must(t, d.WriteBuffer(b, 0, lo))
	must(t, d.WriteBuffer(b, size-3*mi, hi))
	copy(want, lo)
	copy(want[size-3*mi:], hi)
	mv := []device.Move{
		{Src: size - 3*mi, Dst: size - 2*mi - 4, Size: 2 * mi}, // across the boundary, overlapping forward
		{Src: 0, Dst: lim - mi/2, Size: mi},                    // low to across the boundary
		{Src: size - mi + 4, Dst: 4096, Size: 64 << 10},        // beyond the boundary to low
		{Src: lim - 64, Dst: lim - 60, Size: 1024},             // a word forward, straddling it
		{Src: lim - mi/2 + 8, Dst: 256 << 10, Size: mi},        // from across the boundary to low
	}
	must(t, d.Move(b, mv))
	refMove(want, mv)
	p := []device.Patch{{Index: uint32(lim/4 - 1), Delta: 1}, {Index: uint32(lim / 4), Delta: 2}, {Index: uint32(size/4 - 1), Delta: 3}}
	must(t, d.Patch(b, p))
	refPatch(want, p)
	equal(t, "low window", read(t, d, b, 0, 2*mi), want[:2*mi])
	equal(t, "high window", read(t, d, b, size-4*mi, 4*mi), want[size-4*mi:])
}
