package devicetest

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/device"
)

// testCheckGuards fills 1,000 guards of a buffer with a pattern, spoils
// some words (the first, the last, a middle one of a guard) and checks
// that device.CheckGuards names exactly those guards, in order, after the
// writes (call order); that a storage-less buffer is checked too; and
// that bad guards are refused before anything runs.
func testCheckGuards(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	const pattern = 0xFDFD_FDFD
	for _, usage := range []device.Usage{rw | device.Storage, rw} {
		buf := mustBuffer(t, d, 64<<10, usage)
		var guards []device.Guard
		fill := make([]byte, 64<<10)
		for i := range 1000 {
			g := device.Guard{Offset: uint64(i) * 64, Size: 4 * (1 + r.Uint64N(8))}
			guards = append(guards, g)
			for w := g.Offset; w < g.Offset+g.Size; w += 4 {
				binary.LittleEndian.PutUint32(fill[w:], pattern)
			}
		}
		must(t, d.WriteBuffer(buf, 0, fill))
		var want []int
		for i := range guards {
			if r.IntN(50) != 0 {
				continue
			}
			g := guards[i]
			w := g.Offset + 4*r.Uint64N(g.Size/4) // any word of the guard
			must(t, d.WriteBuffer(buf, w, []byte{0xFD, 0xFD, 0xFD, 0xFC}))
			want = append(want, i)
		}
		if len(want) == 0 {
			t.Fatal("no guard spoiled: the test must fail some")
		}
		got, err := device.CheckGuards(d, buf, guards, pattern, nil)
		must(t, err)
		if !slices.Equal(got, want) {
			t.Fatalf("usage %v: CheckGuards %v, want %v", usage, got, want)
		}
		if got, err := device.CheckGuards(d, buf, nil, pattern, nil); err != nil || len(got) != 0 {
			t.Fatalf("no guards: %v, %v", got, err)
		}
		for _, c := range []struct {
			g    device.Guard
			want error
		}{
			{device.Guard{Offset: 64<<10 - 4, Size: 8}, device.ErrOutOfBounds},
			{device.Guard{Offset: 2, Size: 4}, device.ErrInvalidAlignment},
		} {
			if _, err := device.CheckGuards(d, buf, []device.Guard{{Offset: 0, Size: 4}, c.g}, pattern, nil); !errors.Is(err, c.want) {
				t.Errorf("guard %+v: %v, want %v", c.g, err, c.want)
			}
		}
	}
}
