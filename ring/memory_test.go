package ring_test

import (
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/ring"
)

// TestMemory runs a ring and a frame arena through frames the GPU
// finishes two behind, through a wrap and a growth, and checks their
// memory views after each: the ring's regions hold every slice of the
// frames it has not reclaimed, in a region named by the slice's frame,
// and add up to InFlightBytes; each of the arena's blocks holds its
// frame's bytes from offset 0.
func TestMemory(t *testing.T) {
	dev := newHeld(t)
	b := newRing(t, dev, ring.BufferOptions{Label: "consts", SizeBytes: 4096, Grow: true})
	a := newArena(t, dev, ring.FrameOptions{Label: "scratch", BlockBytes: 1024, Usage: device.Vertex | device.CopyDst})
	type held struct {
		s     ring.Slice
		frame string
	}
	var fences []uint64
	var slices []held
	for f := 1; f <= 12; f++ {
		for i := range 1 + f%4 {
			s, err := b.Allocate(uint64(100 + 300*i))
			must(t, err)
			slices = append(slices, held{s, "open frame"})
			_, err = a.Allocate(uint64(64 * (i + 1)))
			must(t, err)
		}
		fence, err := dev.Fence()
		must(t, err)
		fences = append(fences, fence)
		if len(fences) > 2 {
			dev.Complete(fences[len(fences)-3])
		}
		for i := range slices {
			if slices[i].frame == "open frame" {
				slices[i].frame = fmt.Sprintf("frame (fence %d)", fence)
			}
		}
		must(t, b.EndFrame(fence))
		must(t, a.EndFrame(fence))
		done, err := dev.Completed()
		must(t, err)

		bufs := b.Memory()
		cur := bufs[0]
		if err := cur.Check(); err != nil {
			t.Fatal(err)
		}
		if cur.Name != "consts" || cur.CapacityBytes != b.Stats().SizeBytes || cur.Stats.ReservedBytes != b.Stats().InFlightBytes {
			t.Fatalf("frame %d: ring buffer %q of %d, %d in flight; Stats %+v", f, cur.Name, cur.CapacityBytes, cur.Stats.ReservedBytes, b.Stats())
		}
		if len(bufs)-1 != b.Stats().OldBuffers {
			t.Fatalf("frame %d: %d buffers, %d old", f, len(bufs), b.Stats().OldBuffers)
		}
		for _, h := range slices {
			var fence uint64
			fmt.Sscanf(h.frame, "frame (fence %d)", &fence)
			if h.s.Buffer != b.Buffer() || fence <= done {
				continue
			}
			if !within(cur, h.s.OffsetBytes, h.s.SizeBytes, h.frame) {
				t.Fatalf("frame %d: slice [%d, +%d) of %s not in a region of its frame: %+v", f, h.s.OffsetBytes, h.s.SizeBytes, h.frame, cur.Regions)
			}
		}

		blocks := a.Memory()
		if len(blocks) != a.Stats().Blocks {
			t.Fatalf("frame %d: %d blocks shown, %d alive", f, len(blocks), a.Stats().Blocks)
		}
		inflight := 0
		for _, blk := range blocks {
			if err := blk.Check(); err != nil {
				t.Fatal(err)
			}
			if blk.Stats.Allocations > 0 {
				inflight++
			}
		}
		if inflight != a.Stats().InFlightBlocks {
			t.Fatalf("frame %d: %d blocks hold a frame, %d in flight", f, inflight, a.Stats().InFlightBlocks)
		}
	}
	if b.Stats().Growths == 0 {
		t.Fatal("the ring never grew: the test misses the retired buffers")
	}
}

// within reports whether [off, off+n) lies in a live region of b named
// name.
func within(b memory.Buffer, off, n uint64, name string) bool {
	for _, r := range b.Regions {
		if r.Live() && r.Name == name && off >= r.Offset && off+n <= r.Offset+r.Size {
			return true
		}
	}
	return false
}
