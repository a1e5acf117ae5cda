package ring

import "github.com/gpumem/gpumem/device"

// Frames and fences, shared by Buffer and Frame. See doc.go for the
// contract: memory handed out in a frame comes back once the device's
// Completed reaches the fence the frame ended with.

// queue is a FIFO of values that reuses its storage: after warm-up, push
// and pop do not allocate.
type queue[T any] struct {
	items []T // len(items) is a power of two, or 0
	first int // index of the oldest item
	n     int // number of items
}

func (q *queue[T]) len() int { return q.n }

// front returns the oldest item; q is not empty.
func (q *queue[T]) front() *T { return &q.items[q.first] }

// at returns the i-th oldest item; i < q.len().
func (q *queue[T]) at(i int) *T { return &q.items[(q.first+i)&(len(q.items)-1)] }

func (q *queue[T]) push(v T) {
	if q.n == len(q.items) {
		grown := make([]T, max(8, 2*len(q.items)))
		for i := range q.n {
			grown[i] = q.items[(q.first+i)&(len(q.items)-1)]
		}
		q.items, q.first = grown, 0
	}
	q.items[(q.first+q.n)&(len(q.items)-1)] = v
	q.n++
}

func (q *queue[T]) pop() T {
	var zero T
	v := q.items[q.first]
	q.items[q.first] = zero
	q.first = (q.first + 1) & (len(q.items) - 1)
	q.n--
	return v
}

func (q *queue[T]) clear() {
	clear(q.items)
	q.first, q.n = 0, 0
}

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
	tagged queue[grave]
}

func (g *graveyard) retire(b device.Buffer) { g.open = append(g.open, b) }

// endFrame tags the buffers retired during the frame with its fence.
func (g *graveyard) endFrame(fence uint64) {
	for i, b := range g.open {
		g.tagged.push(grave{b, fence})
		g.open[i] = nil
	}
	g.open = g.open[:0]
}

// collect releases the buffers whose fence is at most completed.
func (g *graveyard) collect(completed uint64) {
	for g.tagged.len() > 0 && g.tagged.front().fence <= completed {
		g.tagged.pop().buf.Release()
	}
}

// release releases every buffer; the device defers the frees until the
// GPU has finished the work recorded on them.
func (g *graveyard) release() {
	for _, b := range g.open {
		b.Release()
	}
	g.open = nil
	for g.tagged.len() > 0 {
		g.tagged.pop().buf.Release()
	}
}

// len returns how many buffers the graveyard holds.
func (g *graveyard) len() int { return len(g.open) + g.tagged.len() }

// alignUp rounds n up to a multiple of align, a power of two. ok is false
// when the result overflows.
func alignUp(n, align uint64) (v uint64, ok bool) {
	v = (n + align - 1) &^ (align - 1)
	return v, v >= n
}
