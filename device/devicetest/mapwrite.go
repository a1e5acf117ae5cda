package devicetest

import (
	"testing"

	"github.com/gpumem/gpumem/device"
)

// testMapWrite checks writes to MapWrite|CopySrc buffers, the upload
// path without staging: bytes written reach copies and read-back; a
// write after a copy from the buffer does not change what the copy
// carries (call order holds even while the GPU still reads); after the
// copy's fence completes, the buffer takes writes again.
func testMapWrite(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	const size = 4096
	m := mustBuffer(t, d, size, device.MapWrite|device.CopySrc)
	equal(t, "new MapWrite buffer", read(t, d, m, 0, size), make([]byte, size))

	one, two, three := randBytes(r, size), randBytes(r, size), randBytes(r, size)
	must(t, d.WriteBuffer(m, 0, one[:1024]))
	must(t, d.WriteBuffer(m, 1024, one[1024:]))
	a := mustBuffer(t, d, size, rw)
	must(t, d.CopyBuffer(m, 0, a, 0, size))
	// The copy is recorded, maybe not run: this write must not reach it.
	must(t, d.WriteBuffer(m, 0, two))
	b := mustBuffer(t, d, size, rw)
	must(t, d.CopyBuffer(m, 0, b, 0, size))
	check(t, d, a, one)
	check(t, d, b, two)

	// Fenced reuse: once the copy's fence completes, writing maps again.
	must(t, d.WriteBuffer(m, 8, three[8:64]))
	must(t, d.CopyBuffer(m, 0, a, 0, size))
	f, err := d.Fence()
	must(t, err)
	for i := 0; ; i++ {
		c, err := d.Completed()
		must(t, err)
		if c >= f {
			break
		}
		if i == 1e7 {
			t.Fatalf("fence %d not completed", f)
		}
	}
	must(t, d.WriteBuffer(m, 4, three[4:8]))
	want := append(append(append([]byte{}, two[:4]...), three[4:64]...), two[64:]...)
	equal(t, "MapWrite buffer read back", read(t, d, m, 0, size), want)
	want2 := append(append([]byte{}, two[:8]...), three[8:64]...)
	want2 = append(want2, two[64:]...)
	check(t, d, a, want2)

	// The belt's pattern: write a piece, copy it, write the next piece of
	// the same buffer, copy it; no copy sees a later piece's bytes.
	c := mustBuffer(t, d, size, rw)
	four := randBytes(r, size)
	for off := uint64(0); off < size; off += 512 {
		must(t, d.WriteBuffer(m, off, four[off:off+512]))
		must(t, d.CopyBuffer(m, off, c, size-512-off, 512))
	}
	flipped := make([]byte, 0, size)
	for off := int(size) - 512; off >= 0; off -= 512 {
		flipped = append(flipped, four[off:off+512]...)
	}
	check(t, d, c, flipped)

	wantErr(t, "misaligned write", d.WriteBuffer(m, 2, three[:4]), device.ErrInvalidAlignment)
	wantErr(t, "write past the end", d.WriteBuffer(m, size-4, three[:8]), device.ErrOutOfBounds)
	mr := mustBuffer(t, d, 64, device.MapRead|device.CopyDst)
	must(t, d.WriteBuffer(mr, 0, three[:4])) // CopyDst
	v := mustBuffer(t, d, 64, device.Vertex)
	wantErr(t, "write without CopyDst or MapWrite", d.WriteBuffer(v, 0, three[:4]), device.ErrInvalidUsage)
	m.Release()
	wantErr(t, "write after Release", d.WriteBuffer(m, 0, three[:4]), device.ErrReleased)
}
