package ring_test

import (
	"errors"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/ring"
	"github.com/gpumem/gpumem/staging"
)

// testUsage lets tests read back what they wrote.
const testUsage = device.Uniform | device.CopyDst | device.CopySrc

func newHeld(t *testing.T) *host.Device {
	return testdevice.Host(t, host.Options{HoldCompletion: true})
}

func newRing(t *testing.T, dev device.Device, opts ring.BufferOptions) *ring.Buffer {
	t.Helper()
	if opts.Usage == 0 {
		opts.Usage = testUsage
	}
	b, err := ring.NewBuffer(dev, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Release)
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestBufferNoWrapOverInFlight is the naive ring's failure made
// impossible: four 256-byte slots, one frame holds all four and the GPU
// has not finished it. The naive ring wraps to offset 0 and overwrites
// what the GPU is reading; this one refuses (or grows), and hands out
// offset 0 again only once the frame's fence completes.
func TestBufferNoWrapOverInFlight(t *testing.T) {
	for _, grow := range []bool{false, true} {
		name := map[bool]string{false: "ErrFull", true: "Grow"}[grow]
		t.Run(name, func(t *testing.T) {
			dev := newHeld(t)
			b := newRing(t, dev, ring.BufferOptions{SizeBytes: 1024, Grow: grow})
			c := &checker{dev: dev, hold: dev, a: b, align: 256}
			first := b.Buffer()
			for want := uint64(0); want < 1024; want += 256 {
				s, err := c.alloc(200)
				must(t, err)
				if s.OffsetBytes != want || s.Buffer != first {
					t.Fatalf("offset %d, want %d", s.OffsetBytes, want)
				}
			}
			f1, err := c.endFrame()
			must(t, err)
			before := b.Stats()

			s, err := c.alloc(4)
			if !grow {
				if !errors.Is(err, ring.ErrFull) {
					t.Fatalf("Allocate with every byte in flight: %v, want ErrFull", err)
				}
				after := b.Stats()
				after.Full--
				if after != before {
					t.Fatalf("a refused Allocate changed the stats: %+v, then %+v", before, b.Stats())
				}
			} else {
				must(t, err)
				if s.Buffer == first || b.Stats().Growths != 1 || b.Stats().SizeBytes != 2048 {
					t.Fatalf("grown ring: %+v, slice in the first buffer: %v", b.Stats(), s.Buffer == first)
				}
			}
			must(t, c.verify())
			f2, err := c.endFrame()
			must(t, err)
			must(t, c.verify()) // the old buffer lives while frame 1 and 2 are in flight

			must(t, c.complete(f1))
			s, err = c.alloc(256)
			must(t, err)
			if !grow && s.OffsetBytes != 0 {
				t.Fatalf("after fence %d completed: offset %d, want 0", f1, s.OffsetBytes)
			}
			must(t, c.verify())
			must(t, c.complete(f2))
			_, err = c.endFrame()
			must(t, err)
			if grow && b.Stats().OldBuffers != 0 {
				t.Fatalf("old buffer kept after its fence completed: %+v", b.Stats())
			}
			must(t, c.verify())
		})
	}
}

// TestBufferTable runs scripted frames: each step allocates sizes, then
// ends the frame, then completes fences up to complete frames back.
func TestBufferTable(t *testing.T) {
	type step struct {
		sizes    []uint64
		complete int // fences still in flight after the step; -1 keeps all
		full     int // how many of sizes are refused (the last ones)
	}
	for _, c := range []struct {
		name  string
		opts  ring.BufferOptions
		steps []step
		after ring.BufferStats // SizeBytes, Growths, Full checked
	}{
		{"triple buffered", ring.BufferOptions{SizeBytes: 3 * 1024}, []step{
			{[]uint64{256, 256, 512}, -1, 0},
			{[]uint64{1024}, -1, 0},
			{[]uint64{1024}, 2, 0}, // frame 1 done
			{[]uint64{1024}, 2, 0},
			{[]uint64{1024}, 2, 0},
		}, ring.BufferStats{SizeBytes: 3072}},
		{"skip at the end", ring.BufferOptions{SizeBytes: 1024}, []step{
			{[]uint64{768}, 0, 0},
			{[]uint64{512}, 0, 0}, // skips 256 at the end, lands at 0
			{[]uint64{1024}, 0, 0},
		}, ring.BufferStats{SizeBytes: 1024}},
		{"refuses while in flight", ring.BufferOptions{SizeBytes: 1024}, []step{
			{[]uint64{512, 256}, -1, 0},
			{[]uint64{256, 256}, -1, 1},
			{[]uint64{512}, 0, 1},
			{[]uint64{1024}, 0, 0},
		}, ring.BufferStats{SizeBytes: 1024, Full: 2}},
		{"request larger than the ring", ring.BufferOptions{SizeBytes: 512}, []step{
			{[]uint64{513}, 0, 1},
		}, ring.BufferStats{SizeBytes: 512, Full: 1}},
		{"grows to the request", ring.BufferOptions{SizeBytes: 512, Grow: true}, []step{
			{[]uint64{256, 4000}, 0, 0},
		}, ring.BufferStats{SizeBytes: 4096, Growths: 1}},
		{"grows up to the maximum", ring.BufferOptions{SizeBytes: 1024, Grow: true, MaxSizeBytes: 2048}, []step{
			{[]uint64{1024}, -1, 0},
			{[]uint64{1024, 1024, 256}, -1, 1},
		}, ring.BufferStats{SizeBytes: 2048, Growths: 1, Full: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev := newHeld(t)
			b := newRing(t, dev, c.opts)
			k := &checker{dev: dev, hold: dev, a: b, align: 256}
			var fences []uint64
			for i, st := range c.steps {
				for j, size := range st.sizes {
					_, err := k.alloc(size)
					refused := j >= len(st.sizes)-st.full
					if refused != errors.Is(err, ring.ErrFull) || (!refused && err != nil) {
						t.Fatalf("step %d: Allocate(%d): %v, want refused %v", i, size, err, refused)
					}
					must(t, k.verify())
				}
				f, err := k.endFrame()
				must(t, err)
				fences = append(fences, f)
				if st.complete >= 0 && len(fences) > st.complete {
					must(t, k.complete(fences[len(fences)-1-st.complete]))
				}
				must(t, k.verify())
			}
			got := b.Stats()
			if got.SizeBytes != c.after.SizeBytes || got.Growths != c.after.Growths || got.Full != c.after.Full {
				t.Fatalf("stats %+v, want size %d, growths %d, full %d", got, c.after.SizeBytes, c.after.Growths, c.after.Full)
			}
		})
	}
}

// TestBufferBackends runs frames on every backend with the device's own
// completion: Write, fence, read back.
func TestBufferBackends(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		b := newRing(t, dev, ring.BufferOptions{SizeBytes: 4096, Grow: true})
		c := &checker{dev: dev, a: b, align: b.Alignment()}
		if b.Alignment() != uint64(dev.Limits().UniformOffsetAlignment) {
			t.Fatalf("alignment %d, device's %d", b.Alignment(), dev.Limits().UniformOffsetAlignment)
		}
		for frame := range 20 {
			for i := range 1 + frame%5 {
				_, err := c.alloc(uint64(16 + 64*i))
				must(t, err)
			}
			f, err := c.endFrame()
			must(t, err)
			must(t, c.complete(f))
			must(t, c.verify())
		}
		s, err := b.Write([]byte{1, 2, 3, 4, 5, 6, 7, 8})
		must(t, err)
		got := make([]byte, 8)
		must(t, dev.ReadBuffer(s.Buffer, s.OffsetBytes, got))
		if got[0] != 1 || got[7] != 8 {
			t.Fatalf("Write then read: % x", got)
		}
		if _, err := b.Write([]byte{1, 2, 3}); !errors.Is(err, ring.ErrInvalidSize) {
			t.Fatalf("Write of 3 bytes: %v, want ErrInvalidSize", err)
		}
	})
}

// TestBufferGrowthFailure: the device refuses the larger buffer. Allocate
// returns ErrFull wrapping device.ErrOutOfMemory; nothing changed.
func TestBufferGrowthFailure(t *testing.T) {
	dev := newHeld(t)
	b := newRing(t, dev, ring.BufferOptions{SizeBytes: 512, Grow: true})
	c := &checker{dev: dev, hold: dev, a: b, align: 256}
	_, err := c.alloc(512)
	must(t, err)
	_, err = c.endFrame()
	must(t, err)
	before, buf := b.Stats(), b.Buffer()
	dev.FailNextCreates(1)
	_, err = c.alloc(256)
	if !errors.Is(err, ring.ErrFull) || !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("Allocate with the growth refused: %v, want ErrFull and ErrOutOfMemory", err)
	}
	after := b.Stats()
	after.Full--
	if after != before || b.Buffer() != buf {
		t.Fatalf("a refused growth changed the ring: %+v, then %+v", before, b.Stats())
	}
	must(t, c.verify())
	_, err = c.alloc(256) // the device agrees now
	must(t, err)
	must(t, c.verify())
}

func TestBufferErrors(t *testing.T) {
	dev := newHeld(t)
	belt, err := staging.New(dev, staging.Options{ChunkBytes: 4 << 10})
	must(t, err)
	t.Cleanup(belt.Release)
	for _, opts := range []ring.BufferOptions{
		{Alignment: 384},
		{SizeBytes: 4096, MaxSizeBytes: 1024},
		{Usage: device.MapWrite | device.Uniform},
		// A belt that Write could not copy from: no CopyDst.
		{Usage: device.Uniform | device.Storage, Belt: belt},
	} {
		if _, err := ring.NewBuffer(dev, opts); !errors.Is(err, ring.ErrInvalidOptions) {
			t.Errorf("NewBuffer(%+v): %v, want ErrInvalidOptions", opts, err)
		}
	}
	dev.FailNextCreates(1)
	if _, err := ring.NewBuffer(dev, ring.BufferOptions{}); !errors.Is(err, device.ErrOutOfMemory) {
		t.Errorf("NewBuffer with the creation refused: %v", err)
	}
	b := newRing(t, dev, ring.BufferOptions{})
	if _, err := b.Allocate(0); !errors.Is(err, ring.ErrInvalidSize) {
		t.Errorf("Allocate(0): %v", err)
	}
	if _, err := b.Allocate(^uint64(0)); !errors.Is(err, ring.ErrInvalidSize) {
		t.Errorf("Allocate(max): %v", err)
	}
	if err := b.EndFrame(0); !errors.Is(err, ring.ErrInvalidFence) {
		t.Errorf("EndFrame(0): %v", err)
	}
	must(t, b.EndFrame(5))
	if err := b.EndFrame(4); !errors.Is(err, ring.ErrInvalidFence) {
		t.Errorf("EndFrame going back: %v", err)
	}
	b.Release()
	b.Release()
	if _, err := b.Allocate(4); !errors.Is(err, device.ErrReleased) {
		t.Errorf("Allocate after Release: %v", err)
	}
	if err := b.EndFrame(6); !errors.Is(err, device.ErrReleased) {
		t.Errorf("EndFrame after Release: %v", err)
	}
	var nilRing *ring.Buffer
	nilRing.Release()
	if st := dev.Stats(); st.Buffers != 0 {
		t.Errorf("%d buffers alive after Release", st.Buffers)
	}
}

// TestBufferHostileSize: a size whose sum with the head wraps past 2^64 is
// refused and changes nothing, so later allocations of the frame do not
// overlap earlier ones (issue 21).
func TestBufferHostileSize(t *testing.T) {
	for _, grow := range []bool{false, true} {
		dev := newHeld(t)
		b := newRing(t, dev, ring.BufferOptions{SizeBytes: 64 << 10, Grow: grow})
		c := &checker{dev: dev, hold: dev, a: b, align: b.Alignment()}
		_, err := c.alloc(1024)
		must(t, err)
		before := b.Stats()
		for _, size := range []uint64{1<<64 - 256, 1<<64 - 1024, 1<<64 - 4, 1 << 63, 1<<64 - 64<<10} {
			if _, err := b.Allocate(size); !errors.Is(err, ring.ErrFull) && !errors.Is(err, ring.ErrInvalidSize) {
				t.Fatalf("grow %v: Allocate(%d) after Allocate(1024): %v, want ErrFull", grow, size, err)
			}
		}
		if after := b.Stats(); after.InFlightBytes != before.InFlightBytes || after.SizeBytes != before.SizeBytes || after.Allocs != before.Allocs {
			t.Fatalf("grow %v: refused allocations changed the ring: %+v, then %+v", grow, before, after)
		}
		for range 4 {
			_, err := c.alloc(256)
			must(t, err)
		}
		must(t, c.verify())
	}
}

func TestNilDevice(t *testing.T) {
	if _, err := ring.NewBuffer(nil, ring.BufferOptions{}); !errors.Is(err, ring.ErrInvalidOptions) {
		t.Errorf("NewBuffer(nil): %v, want ErrInvalidOptions", err)
	}
	if _, err := ring.NewFrame(nil, ring.FrameOptions{}); !errors.Is(err, ring.ErrInvalidOptions) {
		t.Errorf("NewFrame(nil): %v, want ErrInvalidOptions", err)
	}
}
