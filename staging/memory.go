package staging

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/fenced"
	"github.com/gpumem/gpumem/memory"
)

// Memory returns the belt's chunks as they are now, read-only (a
// memory.Holder), each of kind memory.StagingChunk, named by Options.Label and its
// place: first the open frame's (the current chunk, its written bytes one
// region named "open frame", then the chunks filled this frame, whole),
// then those in flight, oldest first, whole and named by their fence
// ("fence 12"), then the free ones, free. O(chunks); it allocates the
// snapshot.
func (b *Belt) Memory() []memory.Buffer {
	if b.released {
		return nil
	}
	var bufs []memory.Buffer
	add := func(buf device.Buffer, used uint64, name string) {
		bufs = append(bufs, memory.Block(fmt.Sprintf("%s #%d", b.opts.Label, len(bufs)), memory.StagingChunk, b.size, used,
			memory.Region{Kind: "staging", Name: name}, buf.Desc().Usage))
	}
	if b.cur != nil {
		add(b.cur, b.used, "open frame")
	}
	b.recycled.Each(func(c fenced.Block, st fenced.State) {
		switch st {
		case fenced.Open:
			add(c.Buf, c.Used, "open frame")
		case fenced.InFlight:
			add(c.Buf, c.Used, fmt.Sprintf("fence %d", c.Fence))
		case fenced.Free:
			add(c.Buf, 0, "")
		}
	})
	return bufs
}

var _ memory.Holder = (*Belt)(nil)
