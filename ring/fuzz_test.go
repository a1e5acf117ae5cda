package ring_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/ring"
)

// runFrames drives a frame allocator with a command stream on a host
// device whose completion the stream controls, checking the invariants
// after every command (see checker). Each command is one byte, some with
// an argument byte:
//
//	0-4: allocate 1 + arg*arg bytes (up to 64 KiB); with op 4 and arg at
//	     least 240, a hostile size near 2^32 or 2^64 (see hostile), which
//	     must be refused with ErrFull or ErrInvalidSize
//	5:   end the frame
//	6:   complete the fences of all but the newest arg%4 frames
//	7:   complete everything
func runFrames(data []byte, open func(dev *host.Device) (frameAllocator, uint64, error)) error {
	dev, err := host.New(host.Options{HoldCompletion: true})
	if err != nil {
		return err
	}
	defer dev.Release()
	a, align, err := open(dev)
	if err != nil {
		return err
	}
	c := &checker{dev: dev, hold: dev, a: a, align: align}
	var fences []uint64
	for i := 0; i < len(data); i++ {
		op := data[i] % 8
		arg := byte(0)
		if op <= 4 || op == 6 {
			if i+1 < len(data) {
				i++
				arg = data[i]
			}
		}
		switch {
		case op == 4 && arg >= 240:
			size := hostile[int(arg-240)%len(hostile)]
			_, err := c.alloc(size)
			if err == nil && size > 1<<20 {
				return fmt.Errorf("command %d: Allocate(%d) succeeded", i, size)
			}
			if err != nil && !errors.Is(err, ring.ErrFull) && !errors.Is(err, ring.ErrInvalidSize) {
				return fmt.Errorf("command %d: Allocate(%d): %w", i, size, err)
			}
		case op <= 4:
			size := 1 + uint64(arg)*uint64(arg)
			if _, err := c.alloc(size); err != nil && !errors.Is(err, ring.ErrFull) {
				return fmt.Errorf("command %d: %w", i, err)
			}
		case op == 5:
			f, err := c.endFrame()
			if err != nil {
				return fmt.Errorf("command %d: %w", i, err)
			}
			fences = append(fences, f)
		case op == 6:
			keep := int(arg % 4)
			if len(fences) > keep {
				if err := c.complete(fences[len(fences)-1-keep]); err != nil {
					return err
				}
			}
		case op == 7:
			if len(fences) > 0 {
				if err := c.complete(fences[len(fences)-1]); err != nil {
					return err
				}
			}
		}
		if err := c.verify(); err != nil {
			return fmt.Errorf("command %d (%d): %w", i, op, err)
		}
	}
	return nil
}

// hostile are request sizes near 2^32 and 2^64, where a sum of a
// position and a size wraps: uint64(-256) is the issue 21 case.
var hostile = []uint64{1<<64 - 256, 1<<64 - 4, 1<<64 - 1, 1<<64 - 8192, 1 << 63, 1<<63 + 4,
	1 << 32, 1<<32 - 4, 1<<32 + 256, 1<<64 - 1<<32, 1<<64 - 65536, 1<<64 - 512, 1<<64 - 1024, 1<<64 - 12, 1<<64 - 2, 1 << 20}

func openRing(grow bool) func(dev *host.Device) (frameAllocator, uint64, error) {
	return func(dev *host.Device) (frameAllocator, uint64, error) {
		b, err := ring.NewBuffer(dev, ring.BufferOptions{SizeBytes: 8 << 10, Grow: grow, MaxSizeBytes: 256 << 10, Usage: testUsage})
		if err != nil {
			return nil, 0, err
		}
		return b, b.Alignment(), nil
	}
}

var fuzzSeeds = [][]byte{
	{0, 10, 1, 20, 5, 2, 30, 5, 3, 40, 5, 6, 1, 0, 50, 5, 7, 0, 60},
	{0, 255, 0, 255, 5, 0, 255, 5, 0, 90, 6, 0, 0, 90},
	{0, 1, 0, 1, 0, 1, 0, 1, 5, 0, 1, 5, 0, 1, 5, 6, 2, 0, 1, 5, 6, 0},
	{4, 128, 4, 128, 4, 128, 4, 128, 5, 4, 128, 5, 7, 4, 200, 4, 200, 5},
	{0, 32, 4, 240, 0, 16, 4, 241, 0, 16, 5, 4, 242, 4, 253, 0, 16},
}

func FuzzBuffer(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, grow := range []bool{false, true} {
			if err := runFrames(data, openRing(grow)); err != nil {
				t.Fatalf("grow %v: %v", grow, err)
			}
		}
	})
}

func openArena(grow bool) func(dev *host.Device) (frameAllocator, uint64, error) {
	return func(dev *host.Device) (frameAllocator, uint64, error) {
		a, err := ring.NewFrame(dev, ring.FrameOptions{BlockBytes: 8 << 10, Grow: grow, MaxBlockBytes: 256 << 10, MaxBlocks: 8, Usage: arenaUsage})
		if err != nil {
			return nil, 0, err
		}
		return a, a.Alignment(), nil
	}
}

func FuzzFrame(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, grow := range []bool{false, true} {
			if err := runFrames(data, openArena(grow)); err != nil {
				t.Fatalf("grow %v: %v", grow, err)
			}
		}
	})
}
