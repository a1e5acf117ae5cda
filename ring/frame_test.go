package ring_test

import (
	"errors"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/ring"
)

const arenaUsage = device.Vertex | device.Index | device.CopyDst | device.CopySrc

func newArena(t *testing.T, dev device.Device, opts ring.FrameOptions) *ring.Frame {
	t.Helper()
	if opts.Usage == 0 {
		opts.Usage = arenaUsage
	}
	a, err := ring.NewFrame(dev, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Release)
	return a
}

// TestFrameTable runs scripted frames: allocations, then the frame's end,
// then completion of all but the newest `inFlight` frames.
func TestFrameTable(t *testing.T) {
	type frame struct {
		sizes    []uint64
		refused  int // the last refused sizes fail with ErrFull
		inFlight int
	}
	for _, c := range []struct {
		name   string
		opts   ring.FrameOptions
		frames []frame
		want   ring.FrameStats // BlockBytes, Blocks, Chains, Full checked
	}{
		{"triple buffered", ring.FrameOptions{BlockBytes: 1024}, []frame{
			{[]uint64{100, 200, 300}, 0, 2},
			{[]uint64{1024}, 0, 2},
			{[]uint64{4, 4}, 0, 2},
			{[]uint64{512, 512}, 0, 2},
			{[]uint64{1000}, 0, 2},
		}, ring.FrameStats{BlockBytes: 1024, Blocks: 3}},
		{"overflow is an error", ring.FrameOptions{BlockBytes: 1024}, []frame{
			{[]uint64{1000, 24, 4}, 1, 0},
			{[]uint64{1028}, 1, 0},
		}, ring.FrameStats{BlockBytes: 1024, Blocks: 1, Full: 2}},
		{"overflow chains, then one block", ring.FrameOptions{BlockBytes: 1024, Grow: true}, []frame{
			{[]uint64{1000, 1000, 1000}, 0, 0}, // 1024 + 2048 chained
			{[]uint64{1000, 1000, 1000}, 0, 0}, // one block of 3000
		}, ring.FrameStats{BlockBytes: 3000, Blocks: 1, Chains: 1}},
		{"gpu behind", ring.FrameOptions{BlockBytes: 256, MaxBlocks: 2}, []frame{
			{[]uint64{4}, 0, 9},
			{[]uint64{4}, 0, 9},
			{[]uint64{4}, 1, 9},
		}, ring.FrameStats{BlockBytes: 256, Blocks: 2, Full: 1}},
		{"grows up to the maximum", ring.FrameOptions{BlockBytes: 1024, Grow: true, MaxBlockBytes: 2048}, []frame{
			{[]uint64{2048, 2052}, 1, 0},
		}, ring.FrameStats{BlockBytes: 2048, Blocks: 1, Full: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev := newHeld(t)
			a := newArena(t, dev, c.opts)
			k := &checker{dev: dev, hold: dev, a: a, align: 4}
			var fences []uint64
			for i, fr := range c.frames {
				for j, size := range fr.sizes {
					_, err := k.alloc(size)
					refused := j >= len(fr.sizes)-fr.refused
					if refused != errors.Is(err, ring.ErrFull) || (!refused && err != nil) {
						t.Fatalf("frame %d: Allocate(%d): %v, want refused %v", i, size, err, refused)
					}
					must(t, k.verify())
				}
				f, err := k.endFrame()
				must(t, err)
				fences = append(fences, f)
				if len(fences) > fr.inFlight {
					must(t, k.complete(fences[len(fences)-1-fr.inFlight]))
				}
				must(t, k.verify())
			}
			got := a.Stats()
			if got.BlockBytes != c.want.BlockBytes || got.Blocks != c.want.Blocks || got.Chains != c.want.Chains || got.Full != c.want.Full {
				t.Fatalf("stats %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestFrameBackends(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		a := newArena(t, dev, ring.FrameOptions{BlockBytes: 4096, Grow: true})
		c := &checker{dev: dev, a: a, align: 4}
		for frame := range 12 {
			for i := range 1 + frame%4 {
				_, err := c.alloc(uint64(12 + 700*i))
				must(t, err)
			}
			f, err := c.endFrame()
			must(t, err)
			must(t, c.complete(f))
			must(t, c.verify())
		}
		if st := a.Stats(); st.Blocks > 3 {
			t.Fatalf("%d blocks alive with every frame finished: %+v", st.Blocks, st)
		}
	})
}

// TestFrameFaults: the device refuses a block. ErrFull wraps the device's
// error, and the frame goes on in the block it has.
func TestFrameFaults(t *testing.T) {
	dev := newHeld(t)
	a := newArena(t, dev, ring.FrameOptions{BlockBytes: 1024, Grow: true})
	c := &checker{dev: dev, hold: dev, a: a, align: 4}
	_, err := c.alloc(1000)
	must(t, err)
	before := a.Stats()
	dev.FailNextCreates(1)
	_, err = c.alloc(100)
	if !errors.Is(err, ring.ErrFull) || !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("Allocate with the block refused: %v", err)
	}
	after := a.Stats()
	after.Full--
	if after != before {
		t.Fatalf("a refused block changed the arena: %+v, then %+v", before, a.Stats())
	}
	_, err = c.alloc(24) // still fits the block it has
	must(t, err)
	must(t, c.verify())
	for _, opts := range []ring.FrameOptions{{Alignment: 12}, {BlockBytes: 4096, MaxBlockBytes: 1024}, {MaxBlocks: -1}, {Usage: device.MapRead | device.Vertex}} {
		if _, err := ring.NewFrame(dev, opts); !errors.Is(err, ring.ErrInvalidOptions) {
			t.Errorf("NewFrame(%+v): %v", opts, err)
		}
	}
	if _, err := a.Allocate(0); !errors.Is(err, ring.ErrInvalidSize) {
		t.Errorf("Allocate(0): %v", err)
	}
	if err := a.EndFrame(0); !errors.Is(err, ring.ErrInvalidFence) {
		t.Errorf("EndFrame(0): %v", err)
	}
	a.Release()
	a.Release()
	if _, err := a.Allocate(4); !errors.Is(err, device.ErrReleased) {
		t.Errorf("Allocate after Release: %v", err)
	}
	if n := dev.Stats().Buffers; n != 0 {
		t.Errorf("%d buffers alive after Release", n)
	}
}

// TestFrameHostileSize: a size whose sum with the bytes used wraps past
// 2^64 is refused, and the next allocation does not land inside the first
// (issue 21).
func TestFrameHostileSize(t *testing.T) {
	for _, grow := range []bool{false, true} {
		dev := newHeld(t)
		a := newArena(t, dev, ring.FrameOptions{BlockBytes: 1024, Grow: grow})
		c := &checker{dev: dev, hold: dev, a: a, align: 4}
		_, err := c.alloc(64)
		must(t, err)
		before := a.Stats()
		for _, size := range []uint64{1<<64 - 4, 1<<64 - 64, 1<<64 - 1024, 1 << 63} {
			if _, err := a.Allocate(size); !errors.Is(err, ring.ErrFull) {
				t.Fatalf("grow %v: Allocate(%d) after Allocate(64): %v, want ErrFull", grow, size, err)
			}
		}
		after := a.Stats()
		after.Full -= 4
		if after != before {
			t.Fatalf("grow %v: refused allocations changed the arena: %+v, then %+v", grow, before, a.Stats())
		}
		for range 4 {
			_, err := c.alloc(64)
			must(t, err)
		}
		must(t, c.verify())
	}
}
