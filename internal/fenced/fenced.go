// Package fenced recycles device buffers by fence: the buffers a frame
// wrote are the GPU's until the device completes the fence the frame
// ended with (device.Device.Fence), and free for reuse after. The
// per-frame allocators keep their buffers here: ring.Frame's blocks and
// staging.Belt's chunks.
//
// Blocks holds every buffer of such an allocator but the one it is
// writing: the open frame's filled buffers, those in flight with their
// fences, and the free ones. Invariants:
//
//   - Every buffer is in exactly one place: open, in flight or free (or
//     the caller's current one, outside Blocks).
//   - In-flight fences do not decrease from the oldest to the newest, so
//     a buffer becomes free only when every older one has.
//   - A free buffer's fence has completed: the GPU no longer reads it.
//
// Blocks is not safe for concurrent use.
package fenced

import "github.com/gpumem/gpumem/device"

// Block is a buffer and what its frame used of it.
type Block struct {
	Buf   device.Buffer
	Used  uint64 // bytes its frame wrote or handed out
	Fence uint64 // the fence of its frame, once ended; 0 while open
}

// Blocks is the open, in-flight and free buffers of a frame allocator;
// the zero value is empty and ready.
type Blocks struct {
	open     []Block
	inflight Queue[Block]
	free     []device.Buffer // oldest completed first
}

// Fill puts buf, which the open frame has finished writing (used bytes
// of it), with the open frame's.
func (b *Blocks) Fill(buf device.Buffer, used uint64) {
	b.open = append(b.open, Block{Buf: buf, Used: used})
}

// EndFrame puts the open frame's buffers in flight under fence, and cur
// (the caller's current buffer, if not nil) after them.
func (b *Blocks) EndFrame(fence uint64, cur device.Buffer, used uint64) {
	for i, o := range b.open {
		o.Fence = fence
		b.inflight.Push(o)
		b.open[i] = Block{}
	}
	b.open = b.open[:0]
	if cur != nil {
		b.inflight.Push(Block{Buf: cur, Used: used, Fence: fence})
	}
}

// Reclaim polls dev when anything is in flight and frees the buffers
// whose fence completed, oldest first; those keep refuses (nil keeps
// all) are released instead. It returns how many it released.
func (b *Blocks) Reclaim(dev device.Device, keep func(device.Buffer) bool) (released int, err error) {
	if b.inflight.Len() == 0 {
		return 0, nil
	}
	done, err := dev.Completed()
	if err != nil {
		return 0, err
	}
	for b.inflight.Len() > 0 && b.inflight.Front().Fence <= done {
		buf := b.inflight.Pop().Buf
		if keep != nil && !keep(buf) {
			buf.Release()
			released++
			continue
		}
		b.free = append(b.free, buf)
	}
	return released, nil
}

// Drain frees every open and in-flight buffer, oldest first. The caller
// has waited for the device (Device.Wait): the GPU reads none of them.
func (b *Blocks) Drain() {
	for b.inflight.Len() > 0 {
		b.free = append(b.free, b.inflight.Pop().Buf)
	}
	for i, o := range b.open {
		b.free = append(b.free, o.Buf)
		b.open[i] = Block{}
	}
	b.open = b.open[:0]
}

// Take removes and returns the oldest free buffer fits accepts (nil
// accepts any): the oldest completed is the likeliest to be ready (a
// mapping resolves without waiting).
func (b *Blocks) Take(fits func(device.Buffer) bool) (device.Buffer, bool) {
	for i, buf := range b.free {
		if fits == nil || fits(buf) {
			last := len(b.free) - 1
			copy(b.free[i:], b.free[i+1:])
			b.free[last] = nil
			b.free = b.free[:last]
			return buf, true
		}
	}
	return nil, false
}

// Trim releases the free buffers keep refuses and returns how many.
func (b *Blocks) Trim(keep func(device.Buffer) bool) int {
	kept := b.free[:0]
	for _, buf := range b.free {
		if keep(buf) {
			kept = append(kept, buf)
		} else {
			buf.Release()
		}
	}
	n := len(b.free) - len(kept)
	clear(b.free[len(kept):])
	b.free = kept
	return n
}

// Len returns how many buffers are open, in flight and free.
func (b *Blocks) Len() (open, inflight, free int) {
	return len(b.open), b.inflight.Len(), len(b.free)
}

// Each calls f for every buffer: the open ones, then those in flight,
// oldest first, then the free ones (Used and Fence zero).
func (b *Blocks) Each(f func(blk Block, state State)) {
	for _, o := range b.open {
		f(o, Open)
	}
	for i := range b.inflight.Len() {
		f(*b.inflight.At(i), InFlight)
	}
	for _, buf := range b.free {
		f(Block{Buf: buf}, Free)
	}
}

// State says where a buffer is.
type State uint8

// Where a buffer is.
const (
	Open     State = iota // written in the open frame
	InFlight              // the GPU's until its fence completes
	Free                  // ready for reuse
)

// Release releases every buffer; the device frees each once the GPU has
// finished the work recorded on it. Blocks is empty after.
func (b *Blocks) Release() {
	for _, o := range b.open {
		o.Buf.Release()
	}
	for b.inflight.Len() > 0 {
		b.inflight.Pop().Buf.Release()
	}
	for _, buf := range b.free {
		buf.Release()
	}
	b.open, b.free = nil, nil
	b.inflight.Clear()
}
