package ring

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/fenced"
	"github.com/gpumem/gpumem/internal/invariant"
	"github.com/gpumem/gpumem/memory"
)

// Memory returns the ring as it is now, read-only (a memory.Holder): its
// buffer (kind memory.RingBuffer, named by BufferOptions.Label) with a region of kind
// "ring" per frame in flight, oldest first ("frame (fence 12)"), and the
// open frame's ("open frame"), each from where the frame before it ended
// to where it ends, skips and alignment included (a frame that wraps is
// two regions); then each buffer the ring grew out of that waits for its
// frames' fence (the same kind, "(retired)" after the label), whole. Frames
// the GPU finished count until the ring next polls the device (Allocate,
// EndFrame). Growths are its history. O(frames in flight); it allocates
// the snapshot.
func (b *Buffer) Memory() []memory.Buffer {
	if b.buf == nil {
		return nil
	}
	var used []memory.Region
	add := func(from, to uint64, name string) {
		for from < to { // positions; at most size bytes apart
			off := from % b.size
			n := min(to-from, b.size-off)
			used = append(used, memory.Region{Offset: off, Size: n, Kind: "ring", Name: name})
			from += n
		}
	}
	start := b.tail
	for i := range b.frames.Len() {
		f := b.frames.At(i)
		add(start, f.end, fmt.Sprintf("frame (fence %d)", f.fence))
		start = f.end
	}
	add(b.frameStart, b.head, "open frame")
	cur, err := memory.NewBuffer(b.opts.Label, memory.RingBuffer, b.size, used)
	if err != nil {
		invariant.Broken("ring", "frames in flight overlap: %v", err)
	}
	cur.Usage = b.opts.Usage
	cur = cur.WithHistory(memory.Stats{Growths: uint64(b.stats.Growths)})
	bufs := []memory.Buffer{cur}
	retired := func(buf device.Buffer, why string) {
		r, err := memory.NewBuffer(fmt.Sprintf("%s (retired %d)", b.opts.Label, len(bufs)), memory.RingBuffer, buf.Size(),
			[]memory.Region{{Size: buf.Size(), Kind: "ring", Name: why}})
		if err != nil {
			invariant.Broken("ring", "retired buffer: %v", err)
		}
		r.Usage = b.opts.Usage
		bufs = append(bufs, r)
	}
	for i := range b.old.tagged.Len() {
		g := b.old.tagged.At(i)
		retired(g.buf, fmt.Sprintf("frames up to fence %d", g.fence))
	}
	for _, buf := range b.old.open {
		retired(buf, "frames up to the open one")
	}
	return bufs
}

// Memory returns the frame arena's blocks as they are now, read-only (a
// memory.Holder), each a buffer of kind memory.FrameBlock named by
// FrameOptions.Label and a number: first the open frame's (its earlier
// blocks, then the current one), then the blocks in flight, oldest first,
// then the free ones. A block holds one region of kind "ring" from offset
// 0, what its frame handed out ("open frame", "frame (fence 12)"); a
// free block holds none. O(blocks); it allocates the snapshot.
func (a *Frame) Memory() []memory.Buffer {
	if a.released {
		return nil
	}
	var bufs []memory.Buffer
	add := func(buf device.Buffer, used uint64, name string) {
		bufs = append(bufs, memory.Block(fmt.Sprintf("%s block %d", a.opts.Label, len(bufs)+1), memory.FrameBlock, buf.Size(), used,
			memory.Region{Kind: "ring", Name: name}, a.opts.Usage))
	}
	// The open frame's blocks: the earlier ones, then the current one.
	a.recycled.Each(func(b fenced.Block, st fenced.State) {
		if st == fenced.Open {
			add(b.Buf, b.Used, "open frame")
		}
	})
	if a.cur != nil {
		add(a.cur, a.used, "open frame")
	}
	a.recycled.Each(func(b fenced.Block, st fenced.State) {
		switch st {
		case fenced.InFlight:
			add(b.Buf, b.Used, fmt.Sprintf("frame (fence %d)", b.Fence))
		case fenced.Free:
			add(b.Buf, 0, "")
		}
	})
	return bufs
}

var (
	_ memory.Holder = (*Buffer)(nil)
	_ memory.Holder = (*Frame)(nil)
)
