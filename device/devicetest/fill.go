package devicetest

import (
	"errors"
	"testing"

	"github.com/gpumem/gpumem/device"
)

// testFillBuffer checks device.FillBuffer on a MapWrite and a CopyDst
// buffer: fill gets exactly the range, once; the bytes it writes reach
// copies and read-back in call order, as WriteBuffer's do; bad arguments
// are refused as WriteBuffer refuses them, without calling fill.
func testFillBuffer(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	const size = 4096
	m := mustBuffer(t, d, size, device.MapWrite|device.CopySrc)
	c := mustBuffer(t, d, size, rw)
	one, two := randBytes(r, size), randBytes(r, size)
	fill := func(src []byte) (func([]byte), *int) {
		calls := 0
		return func(dst []byte) {
			calls++
			if len(dst) != len(src) {
				t.Fatalf("fill got %d bytes, want %d", len(dst), len(src))
			}
			copy(dst, src)
		}, &calls
	}
	for _, buf := range []device.Buffer{m, c} {
		f, calls := fill(one[:1024])
		must(t, device.FillBuffer(d, buf, 0, 1024, f))
		f2, calls2 := fill(one[1024:])
		must(t, device.FillBuffer(d, buf, 1024, size-1024, f2))
		if *calls != 1 || *calls2 != 1 {
			t.Fatalf("fill called %d and %d times, want once each", *calls, *calls2)
		}
	}
	a := mustBuffer(t, d, size, rw)
	must(t, d.CopyBuffer(m, 0, a, 0, size))
	// The copy is recorded, maybe not run: this fill must not reach it.
	f, _ := fill(two)
	must(t, device.FillBuffer(d, m, 0, size, f))
	b := mustBuffer(t, d, size, rw)
	must(t, d.CopyBuffer(m, 0, b, 0, size))
	check(t, d, a, one)
	check(t, d, b, two)
	check(t, d, c, one)

	never := func([]byte) { t.Fatal("fill called for refused arguments") }
	for _, bad := range []struct {
		name      string
		buf       device.Buffer
		off, size uint64
		want      error
	}{
		{"past the end", m, size - 4, 8, device.ErrOutOfBounds},
		{"unaligned offset", m, 2, 4, device.ErrInvalidAlignment},
		{"unaligned size", c, 0, 6, device.ErrInvalidAlignment},
		{"no write usage", mustBuffer(t, d, 64, device.CopySrc), 0, 4, device.ErrInvalidUsage},
		{"nil buffer", nil, 0, 4, device.ErrInvalidObject},
	} {
		if err := device.FillBuffer(d, bad.buf, bad.off, bad.size, never); !errors.Is(err, bad.want) {
			t.Errorf("%s: %v, want %v", bad.name, err, bad.want)
		}
	}
	must(t, device.FillBuffer(d, m, 8, 0, never))
}
