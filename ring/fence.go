package ring

import (
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/fenced"
)

// Frames and fences, shared by Buffer and Frame. See doc.go for the
// contract: memory handed out in a frame comes back once the device's
// Completed reaches the fence the frame ended with.

// grave is a device buffer waiting for the GPU to finish fence.
type grave struct {
	buf   device.Buffer
	fence uint64
}

// graveyard keeps device buffers that were replaced (by growth) alive
// until the GPU has finished every frame that could use them.
//
// Buffers retired during the open frame wait in open until EndFrame gives
// them the frame's fence; tagged holds the rest in fence order.
type graveyard struct {
	open   []device.Buffer
	tagged fenced.Queue[grave]
}

func (g *graveyard) retire(b device.Buffer) { g.open = append(g.open, b) }

// endFrame tags the buffers retired during the frame with its fence.
func (g *graveyard) endFrame(fence uint64) {
	for i, b := range g.open {
		g.tagged.Push(grave{b, fence})
		g.open[i] = nil
	}
	g.open = g.open[:0]
}

// collect releases the buffers whose fence is at most completed.
func (g *graveyard) collect(completed uint64) {
	for g.tagged.Len() > 0 && g.tagged.Front().fence <= completed {
		g.tagged.Pop().buf.Release()
	}
}

// release releases every buffer; the device defers the frees until the
// GPU has finished the work recorded on them.
func (g *graveyard) release() {
	for _, b := range g.open {
		b.Release()
	}
	g.open = nil
	for g.tagged.Len() > 0 {
		g.tagged.Pop().buf.Release()
	}
}

// len returns how many buffers the graveyard holds.
func (g *graveyard) len() int { return len(g.open) + g.tagged.Len() }

// alignUp rounds n up to a multiple of align, a power of two. ok is false
// when the result overflows.
func alignUp(n, align uint64) (v uint64, ok bool) {
	v = (n + align - 1) &^ (align - 1)
	return v, v >= n
}
