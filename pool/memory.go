package pool

import (
	"fmt"

	"github.com/gpumem/gpumem/memory"
)

// Memory returns the pool's buffers as they are now, read-only (a
// memory.Holder): each buffer it holds, of kind memory.PoolBuffer, named by
// Options.Label and its creation number ("readback #3"): first the
// leased ones, each one region of kind "pool" named "leased", then the
// idle ones, oldest first, free. O(buffers); it allocates the snapshot.
func (p *Pool) Memory() []memory.Buffer {
	if p.released {
		return nil
	}
	var bufs []memory.Buffer
	add := func(e *entry, leased bool) {
		used := uint64(0)
		if leased {
			used = e.size
		}
		bufs = append(bufs, memory.Block(fmt.Sprintf("%s #%d", p.opts.Label, e.id), memory.PoolBuffer, e.size, used,
			memory.Region{Kind: "pool", Name: "leased"}, e.uc.usage))
	}
	for e := p.leased; e != nil; e = e.next {
		add(e, true)
	}
	for e := p.oldest; e != nil; e = e.newer {
		add(e, false)
	}
	return bufs
}

var _ memory.Holder = (*Pool)(nil)
