package devicetest

import (
	"encoding/binary"
	"testing"

	"github.com/gpumem/gpumem/device"
)

func testPatch(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	const size = 64 << 10
	b, want := filled(t, d, r, size, rwStore)
	// Wraparound: words set to known values, deltas that carry past 2^32.
	words := make([]byte, 16)
	binary.LittleEndian.PutUint32(words[0:], 0xFFFFFFFF)
	binary.LittleEndian.PutUint32(words[4:], 0x80000000)
	binary.LittleEndian.PutUint32(words[8:], 5)
	binary.LittleEndian.PutUint32(words[12:], 0)
	must(t, d.WriteBuffer(b, 0, words))
	copy(want, words)
	wrap := []device.Patch{
		{Index: 0, Delta: 2},          // 0xFFFFFFFF + 2 = 1
		{Index: 1, Delta: 0x80000000}, // 0x80000000 + 0x80000000 = 0
		{Index: 2, Delta: 0xFFFFFFFB}, // 5 - 5 = 0
		{Index: 3, Delta: 0xFFFFFFFF}, // 0 - 1
	}
	must(t, d.Patch(b, wrap))
	refPatch(want, wrap)
	got := read(t, d, b, 0, 16)
	for i, w := range []uint32{1, 0, 0, 0xFFFFFFFF} {
		if v := binary.LittleEndian.Uint32(got[4*i:]); v != w {
			t.Errorf("word %d after wraparound: %#x, want %#x", i, v, w)
		}
	}
	// Random batches with repeated indices, first and last word included.
	for _, n := range []int{1, 100, 20000} {
		p := make([]device.Patch, n)
		for i := range p {
			p[i] = device.Patch{Index: uint32(r.IntN(size / 4)), Delta: r.Uint32()}
		}
		p = append(p, device.Patch{Index: 0, Delta: 1}, device.Patch{Index: size/4 - 1, Delta: 1}, p[0], p[0])
		must(t, d.Patch(b, p))
		refPatch(want, p)
		check(t, d, b, want)
	}
	must(t, d.Patch(b, nil))
	check(t, d, b, want)
}

func testPatchErrors(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	const size = 1024
	b, want := filled(t, d, r, size, rwStore)
	ok := device.Patch{Index: 3, Delta: 9}
	wantErr(t, "Patch past the last word", d.Patch(b, []device.Patch{{Index: size / 4, Delta: 1}}), device.ErrOutOfBounds)
	wantErr(t, "Patch far past the end", d.Patch(b, []device.Patch{{Index: 1<<32 - 1, Delta: 1}}), device.ErrOutOfBounds)
	wantErr(t, "Patch batch with a bad index", d.Patch(b, []device.Patch{ok, {Index: size / 4}, ok}), device.ErrOutOfBounds)
	check(t, d, b, want)
	nb := mustBuffer(t, d, 256, rw)
	wantErr(t, "Patch a buffer without Storage", d.Patch(nb, []device.Patch{ok}), device.ErrInvalidUsage)
}
