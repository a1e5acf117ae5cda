package devicetest

import (
	"fmt"
	"math"
	"math/bits"
	"testing"

	"github.com/gpumem/gpumem/device"
)

func testLimits(t *testing.T, s *suite) {
	d := s.device(t)
	l := d.Limits()
	if l.CopyAlignment != device.CopyAlignment || l.MapAlignment != device.MapAlignment {
		t.Errorf("CopyAlignment %d, MapAlignment %d; want %d, %d", l.CopyAlignment, l.MapAlignment, device.CopyAlignment, device.MapAlignment)
	}
	for _, a := range []uint32{l.UniformOffsetAlignment, l.StorageOffsetAlignment} {
		if bits.OnesCount32(a) != 1 || a < 4 {
			t.Errorf("offset alignment %d: want a power of two, at least 4", a)
		}
	}
	if l.MaxBufferSize < 4 || l.MaxStorageBufferBindingSize == 0 || l.MaxUniformBufferBindingSize == 0 ||
		l.MaxTextureSize2D == 0 || l.MaxArrayLayers == 0 {
		t.Errorf("limits with zeros: %+v", l)
	}
	if d.Limits() != l {
		t.Error("Limits changed between calls")
	}
	def := device.DefaultLimits()
	if def.MaxBufferSize != 256<<20 || def.MaxStorageBufferBindingSize != 128<<20 ||
		def.UniformOffsetAlignment != 256 || def.StorageOffsetAlignment != 256 ||
		def.MaxArrayLayers != 256 || def.MaxTextureSize2D != 8192 || def.MaxUniformBufferBindingSize != 64<<10 {
		t.Errorf("DefaultLimits %+v differ from WebGPU's", def)
	}
	// A buffer of exactly MaxBufferSize is allowed; one more word is not.
	if l.MaxBufferSize <= 64<<20 {
		b := mustBuffer(t, d, l.MaxBufferSize&^3, device.CopyDst)
		b.Release()
	}
	_, err := d.CreateBuffer(device.BufferDesc{Size: (l.MaxBufferSize + 4) &^ 3, Usage: device.CopyDst})
	wantErr(t, "buffer over MaxBufferSize", err, device.ErrTooLarge)
}

func testCreateBuffer(t *testing.T, s *suite) {
	d := s.device(t)
	for _, c := range []struct {
		size  uint64
		usage device.Usage
		want  error
	}{
		{0, rw, device.ErrInvalidDescriptor},
		{6, rw, device.ErrInvalidAlignment},
		{1, rw, device.ErrInvalidAlignment},
		{math.MaxUint64 &^ 3, rw, device.ErrTooLarge},
		{64, 0, device.ErrInvalidUsage},
		{64, 1 << 15, device.ErrInvalidUsage},
		{64, device.MapRead | device.CopySrc, device.ErrInvalidUsage},
		{64, device.MapRead | device.Storage, device.ErrInvalidUsage},
		{64, device.MapWrite | device.CopyDst, device.ErrInvalidUsage},
		{64, device.MapRead | device.MapWrite, device.ErrInvalidUsage},
		{64, device.MapRead | device.CopyDst, nil},
		{64, device.MapRead, nil},
		{64, device.MapWrite | device.CopySrc, nil},
		{64, device.Vertex | device.Index | device.Uniform | device.Storage | device.Indirect | rw, nil},
		{4, device.Uniform, nil},
	} {
		desc := device.BufferDesc{Label: "case", Size: c.size, Usage: c.usage}
		b, err := d.CreateBuffer(desc)
		what := fmt.Sprintf("CreateBuffer(size %d, %v)", c.size, c.usage)
		if c.want != nil {
			wantErr(t, what, err, c.want)
			if b != nil {
				t.Errorf("%s: returned a buffer with an error", what)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", what, err)
			continue
		}
		if b.Desc() != desc || b.Size() != c.size {
			t.Errorf("%s: Desc %+v, Size %d", what, b.Desc(), b.Size())
		}
		b.Release()
	}
	// New buffers are zeroed.
	b := mustBuffer(t, d, 64<<10, rw)
	equal(t, "new buffer", read(t, d, b, 0, 64<<10), make([]byte, 64<<10))
	m := mustBuffer(t, d, 256, device.MapRead|device.CopyDst)
	equal(t, "new MapRead buffer", read(t, d, m, 0, 256), make([]byte, 256))
}

func testWriteRead(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	const size = 64 << 10
	b := mustBuffer(t, d, size, rw)
	want := make([]byte, size)
	for range 50 {
		off := r.Uint64N(size/4) * 4
		n := r.Uint64N((size-off)/4+1) * 4
		data := randBytes(r, n)
		must(t, d.WriteBuffer(b, off, data))
		copy(want[off:], data)
		clear(data) // the device copied it
	}
	check(t, d, b, want)
	// Partial reads at aligned offsets.
	for range 20 {
		off := r.Uint64N(size/4) * 4
		n := r.Uint64N((size-off)/4+1) * 4
		equal(t, fmt.Sprintf("read [%d,+%d)", off, n), read(t, d, b, off, n), want[off:off+n])
	}
	must(t, d.WriteBuffer(b, size, nil))
	must(t, d.ReadBuffer(b, size, nil))

	// Errors leave the contents alone.
	four := []byte{1, 2, 3, 4}
	for _, c := range []struct {
		what string
		off  uint64
		data []byte
		want error
	}{
		{"offset 2", 2, four, device.ErrInvalidAlignment},
		{"length 3", 0, four[:3], device.ErrInvalidAlignment},
		{"past the end", size - 4, make([]byte, 8), device.ErrOutOfBounds},
		{"offset past the end", size + 4, nil, device.ErrOutOfBounds},
		{"overflowing offset", math.MaxUint64 &^ 3, four, device.ErrOutOfBounds},
	} {
		wantErr(t, "WriteBuffer "+c.what, d.WriteBuffer(b, c.off, c.data), c.want)
		dst := make([]byte, len(c.data))
		wantErr(t, "ReadBuffer "+c.what, d.ReadBuffer(b, c.off, dst), c.want)
	}
	check(t, d, b, want)

	// Usage: writes need CopyDst, reads CopySrc or MapRead.
	src := mustBuffer(t, d, 64, device.CopySrc|device.Vertex)
	wantErr(t, "write to a buffer without CopyDst", d.WriteBuffer(src, 0, four), device.ErrInvalidUsage)
	dst := mustBuffer(t, d, 64, device.CopyDst|device.Vertex)
	wantErr(t, "read from a buffer without CopySrc", d.ReadBuffer(dst, 0, make([]byte, 4)), device.ErrInvalidUsage)
	m := mustBuffer(t, d, 64, device.MapRead|device.CopyDst)
	must(t, d.WriteBuffer(m, 8, four))
	equal(t, "MapRead buffer", read(t, d, m, 8, 4), four)
}

func testCopyBuffer(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	const size = 256 << 10
	a, wa := filled(t, d, r, size, rw)
	b, wb := filled(t, d, r, size, rw)
	for range 30 {
		so := r.Uint64N(size/4) * 4
		do := r.Uint64N(size/4) * 4
		n := r.Uint64N((size-max(so, do))/4+1) * 4
		if r.IntN(2) == 0 {
			must(t, d.CopyBuffer(a, so, b, do, n))
			copy(wb[do:do+n], wa[so:so+n])
		} else {
			must(t, d.CopyBuffer(b, so, a, do, n))
			copy(wa[do:do+n], wb[so:so+n])
		}
	}
	must(t, d.CopyBuffer(a, 0, b, 0, 0))
	must(t, d.CopyBuffer(a, size, b, size, 0))
	check(t, d, a, wa)
	check(t, d, b, wb)

	for _, c := range []struct {
		what            string
		so, do, n       uint64
		same, bad, bad2 bool
		want            error
	}{
		{what: "same buffer, disjoint", so: 0, do: 1024, n: 64, same: true, want: device.ErrSameBuffer},
		{what: "same buffer, zero size", so: 0, do: 1024, n: 0, same: true, want: device.ErrSameBuffer},
		{what: "source offset 2", so: 2, n: 4, want: device.ErrInvalidAlignment},
		{what: "destination offset 6", do: 6, n: 4, want: device.ErrInvalidAlignment},
		{what: "size 6", n: 6, want: device.ErrInvalidAlignment},
		{what: "source past the end", so: size - 4, n: 8, want: device.ErrOutOfBounds},
		{what: "destination past the end", do: size - 4, n: 8, want: device.ErrOutOfBounds},
		{what: "overflow", so: math.MaxUint64 &^ 3, n: 8, want: device.ErrOutOfBounds},
	} {
		dst := b
		if c.same {
			dst = a
		}
		wantErr(t, "CopyBuffer "+c.what, d.CopyBuffer(a, c.so, dst, c.do, c.n), c.want)
	}
	noSrc := mustBuffer(t, d, 64, device.CopyDst)
	noDst := mustBuffer(t, d, 64, device.CopySrc)
	wantErr(t, "CopyBuffer from a buffer without CopySrc", d.CopyBuffer(noSrc, 0, b, 0, 4), device.ErrInvalidUsage)
	wantErr(t, "CopyBuffer to a buffer without CopyDst", d.CopyBuffer(a, 0, noDst, 0, 4), device.ErrInvalidUsage)
	check(t, d, a, wa)
	check(t, d, b, wb)
}

// testOrder checks that operations take effect in call order across every
// kind of operation, with and without Submit between them: a backend that
// records copies and writes the queue directly would reorder them.
func testOrder(t *testing.T, s *suite) {
	for _, submit := range []bool{false, true} {
		t.Run(fmt.Sprintf("submit=%v", submit), func(t *testing.T) {
			d := s.device(t)
			r := newRand(t.Name())
			const size = 4096
			a := mustBuffer(t, d, size, rwStore)
			b := mustBuffer(t, d, size, rwStore)
			wa, wb := make([]byte, size), make([]byte, size)
			step := func() {
				if submit {
					must(t, d.Submit())
				}
			}
			for i := range 8 {
				x := randBytes(r, size)
				must(t, d.WriteBuffer(a, 0, x))
				copy(wa, x)
				step()
				must(t, d.CopyBuffer(a, 0, b, 0, size/2))
				copy(wb[:size/2], wa[:size/2])
				step()
				y := randBytes(r, size/2)
				must(t, d.WriteBuffer(a, 0, y))
				copy(wa, y)
				step()
				mv := []device.Move{{Src: 0, Dst: 256, Size: 1024}, {Src: 2048, Dst: 0, Size: 512}}
				must(t, d.Move(a, mv))
				refMove(wa, mv)
				step()
				must(t, d.CopyBuffer(a, 256, b, size/2, size/2))
				copy(wb[size/2:], wa[256:256+size/2])
				step()
				p := []device.Patch{{Index: 0, Delta: uint32(i)}, {Index: size/4 - 1, Delta: 7}}
				must(t, d.Patch(b, p))
				refPatch(wb, p)
				step()
				must(t, d.WriteBuffer(b, 4, x[:8]))
				copy(wb[4:], x[:8])
			}
			if submit {
				must(t, d.Wait())
			}
			check(t, d, a, wa)
			check(t, d, b, wb)
			must(t, d.Submit())
			must(t, d.Wait())
			must(t, d.Wait())
		})
	}
}
