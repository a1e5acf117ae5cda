package ring

// A ring of frames over one device buffer.
//
// Positions are absolute byte counts that only grow: head is where the
// next allocation starts, tail the oldest byte a frame in flight may still
// have the GPU read, and the byte at position p lives at offset p % size.
// The bytes in [tail, head) are in use, by the open frame (from
// frameStart) and by the frames in flight (each ending at its end
// position, oldest first). An allocation of n bytes takes [head, head+n)
// when that does not cross the buffer's end, or else skips to the next
// multiple of size and takes n bytes from there (offset 0); the skipped
// bytes count as the open frame's. It fits when it stays within size
// bytes of tail:
//
//	head + skip + n - tail <= size
//
// so a new allocation never reaches a byte of an unfinished frame. This is
// the check the naive ring lacks: it wraps to offset 0 whatever frame
// still reads there.
//
// When an allocation does not fit, Buffer first asks the device which
// fences completed and moves tail past the frames they end. If it still
// does not fit: with Grow, a new buffer of twice the size (or what the
// request needs) replaces the old one, which waits in a graveyard until the
// open frame's fence completes (every frame in flight ends before that);
// positions restart at 0 in the new buffer. Without Grow, ErrFull.

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/fenced"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/staging"
)

// Slice is a range of a device buffer handed out for one frame.
type Slice struct {
	Buffer device.Buffer
	// OffsetBytes into Buffer, a multiple of the allocator's alignment.
	OffsetBytes uint64
	// SizeBytes, as asked for.
	SizeBytes uint64
}

// BufferOptions configure a Buffer. The zero value is a 64 KiB uniform ring
// that returns ErrFull rather than grow.
type BufferOptions struct {
	// Label names the device buffers.
	Label string
	// SizeBytes is the initial size, rounded up to Alignment; 0 means
	// 64 KiB.
	SizeBytes uint64
	// Grow makes a ring full of frames in flight grow instead of returning
	// ErrFull.
	Grow bool
	// MaxSizeBytes caps growth; 0 means the device's MaxBufferSize.
	MaxSizeBytes uint64
	// Usage of the device buffers; 0 means Uniform|CopyDst. It needs
	// CopyDst for Write.
	Usage device.Usage
	// Alignment of every offset, a power of two; 0 or anything below the
	// device's UniformOffsetAlignment means that alignment.
	Alignment uint32
	// Belt, if set, carries Write's bytes: written into the belt's mapped
	// staging chunks and copied on the GPU, instead of a queue write. On
	// WebGPU a large queue write copies the bytes into a staging buffer
	// the backend makes for it; the belt reuses mapped chunks. Sharing the
	// mesh allocator's belt also keeps a frame's writes from splitting its
	// recorded uploads into two submits (a queue write submits what is
	// recorded first). The belt must be on the ring's device, and the
	// caller ends every frame on it too (staging.Belt.EndFrame with the
	// frame's fence). The copies are recorded work: a renderer submitting
	// its own command buffers calls the device's Submit first, as for any
	// recorded gpumem work. Usage must have CopyDst (NewBuffer checks).
	Belt *staging.Belt
}

// BufferStats is a snapshot of a Buffer's counters.
type BufferStats struct {
	SizeBytes      uint64 // size of the current device buffer
	InFlightBytes  uint64 // bytes held by the open frame and frames in flight, skips included
	FramesInFlight int    // frames ended whose fence has not completed
	Frames         int    // EndFrame calls
	Allocs         int    // successful Allocate calls
	Growths        int    // buffers replaced by larger ones
	Full           int    // Allocate calls that returned ErrFull
	OldBuffers     int    // replaced buffers waiting for their frames' fence
}

// frame is a frame in flight: its bytes end at position end, and the GPU
// has finished with them once the device completes fence.
type frame struct {
	fence uint64
	end   uint64
}

// Buffer is a ring buffer of per-frame memory, typically constants bound
// as uniforms with dynamic offsets. Create one with NewBuffer. It is not
// safe for concurrent use.
//
// Invariants (see the design comment above):
//   - tail <= frameStart <= head, and head-tail <= size;
//   - frames holds increasing fences and end positions, the first end
//     above tail, the last end at most frameStart;
//   - every offset handed out is a multiple of align, and align divides
//     size.
type Buffer struct {
	// changes is what Changes reports next.
	changes memory.ChangeLog
	dev     device.Device
	opts    BufferOptions
	align   uint64
	max     uint64

	buf        device.Buffer // nil after Release
	size       uint64
	head, tail uint64
	frameStart uint64
	frames     fenced.Queue[frame]
	old        graveyard
	lastFence  uint64
	stats      BufferStats
}

// NewBuffer creates a ring with opts on dev. It fails with ErrInvalidOptions
// (a nil dev too) or the device's error for the first buffer.
func NewBuffer(dev device.Device, opts BufferOptions) (*Buffer, error) {
	if dev == nil {
		return nil, fmt.Errorf("ring.NewBuffer: nil device: %w", ErrInvalidOptions)
	}
	l := dev.Limits()
	align := uint64(max(opts.Alignment, l.UniformOffsetAlignment, device.CopyAlignment))
	if align&(align-1) != 0 {
		return nil, fmt.Errorf("ring.NewBuffer: alignment %d is not a power of two: %w", align, ErrInvalidOptions)
	}
	if opts.Usage == 0 {
		opts.Usage = device.Uniform | device.CopyDst
	}
	if err := opts.Usage.Validate(); err != nil {
		return nil, fmt.Errorf("ring.NewBuffer: %w: %w", ErrInvalidOptions, err)
	}
	if opts.Belt != nil && !opts.Usage.Has(device.CopyDst) {
		return nil, fmt.Errorf("ring.NewBuffer: a belt, and usage %v without the CopyDst its copies need: %w", opts.Usage, ErrInvalidOptions)
	}
	if opts.SizeBytes == 0 {
		opts.SizeBytes = 64 << 10
	}
	size, ok := alignUp(opts.SizeBytes, align)
	maxSize := opts.MaxSizeBytes
	if maxSize == 0 {
		maxSize = l.MaxBufferSize
	}
	maxSize = min(maxSize, l.MaxBufferSize) &^ (align - 1)
	if !ok || size > maxSize {
		return nil, fmt.Errorf("ring.NewBuffer: size %d over the maximum %d: %w", opts.SizeBytes, maxSize, ErrInvalidOptions)
	}
	b := &Buffer{dev: dev, opts: opts, align: align, max: maxSize}
	buf, err := b.create(size)
	if err != nil {
		return nil, fmt.Errorf("ring.NewBuffer: %w", err)
	}
	b.buf, b.size = buf, size
	return b, nil
}

func (b *Buffer) create(size uint64) (device.Buffer, error) {
	return b.dev.CreateBuffer(device.BufferDesc{Label: b.opts.Label, Size: size, Usage: b.opts.Usage})
}

// Buffer returns the current device buffer: where the next allocations
// go. It changes when the ring grows.
func (b *Buffer) Buffer() device.Buffer { return b.buf }

// Alignment returns the alignment of every offset in bytes.
func (b *Buffer) Alignment() uint64 { return b.align }

// Allocate hands out size bytes for the open frame, at an offset aligned to
// Alignment. It fails with ErrInvalidSize for 0 bytes or a size that
// overflows when rounded up to Alignment, and ErrFull when the bytes do not
// fit (see BufferOptions.Grow), whatever the size up to 2^64-1; then
// nothing changed. The bytes handed out never overlap bytes handed out
// earlier in the frame or in a frame whose fence has not completed.
//
// O(1) and no allocation, except when it polls the device (only when the
// bytes the GPU is known to have finished are not enough), reclaims the
// frames that completed, or grows.
func (b *Buffer) Allocate(size uint64) (Slice, error) {
	if b.buf == nil {
		return Slice{}, fmt.Errorf("ring: Allocate: %w", errReleased)
	}
	n, ok := alignUp(size, b.align)
	if size == 0 || !ok {
		return Slice{}, b.sizeError(size)
	}
	if off, ok := b.place(n); ok {
		b.stats.Allocs++
		return Slice{Buffer: b.buf, OffsetBytes: off, SizeBytes: size}, nil
	}
	return b.allocSlow(size, n)
}

func (b *Buffer) sizeError(size uint64) error {
	return fmt.Errorf("ring: Allocate of %d bytes: %w", size, ErrInvalidSize)
}

// place takes n bytes (a multiple of align) at head if they fit. n is the
// caller's and may be anything up to 2^64-1: it is compared with sizes,
// never added to an offset, until it is known to be at most size.
func (b *Buffer) place(n uint64) (offset uint64, ok bool) {
	if n > b.size {
		return 0, false
	}
	if b.head == b.tail {
		// Nothing in use (no frame in flight, the open frame empty):
		// start over at offset 0, so a request of the whole ring fits.
		b.head, b.tail, b.frameStart = 0, 0, 0
	}
	pos := b.head
	off := pos % b.size
	if n > b.size-off {
		pos += b.size - off
		off = 0
	}
	if pos-b.tail > b.size-n {
		return 0, false
	}
	b.head = pos + n
	return off, true
}

//go:noinline
func (b *Buffer) allocSlow(size, n uint64) (Slice, error) {
	if err := b.reclaim(); err != nil {
		return Slice{}, fmt.Errorf("ring: Allocate: %w", err)
	}
	if off, ok := b.place(n); ok {
		b.stats.Allocs++
		return Slice{Buffer: b.buf, OffsetBytes: off, SizeBytes: size}, nil
	}
	if err := b.grow(n); err != nil {
		b.stats.Full++
		if n > b.size && (!b.opts.Grow || n > b.max) {
			// No frame in flight could have made room: the request is
			// larger than the ring, and the ring cannot grow to it.
			why := "growing is off (BufferOptions.Grow)"
			if b.opts.Grow {
				why = fmt.Sprintf("its maximum is %d bytes", b.max)
			}
			return Slice{}, fmt.Errorf("ring: Allocate of %d bytes: larger than the ring's %d bytes, and %s: %w", size, b.size, why, ErrFull)
		}
		return Slice{}, fmt.Errorf("ring: Allocate of %d bytes with %d of the ring's %d bytes in flight: %w", size, b.head-b.tail, b.size, err)
	}
	off, _ := b.place(n) // the new buffer is empty and holds n
	b.stats.Allocs++
	return Slice{Buffer: b.buf, OffsetBytes: off, SizeBytes: size}, nil
}

// grow replaces the buffer with an empty one that holds at least n bytes,
// or returns an error wrapping ErrFull and changes nothing.
func (b *Buffer) grow(n uint64) error {
	if !b.opts.Grow {
		return ErrFull
	}
	size := max(2*b.size, n)
	size, ok := alignUp(size, b.align)
	if !ok || size > b.max {
		size = b.max
	}
	if size < n || size <= b.size {
		return fmt.Errorf("at the maximum size %d: %w", b.max, ErrFull)
	}
	buf, err := b.create(size)
	if err != nil {
		return fmt.Errorf("growing to %d bytes: %w: %w", size, ErrFull, err)
	}
	// Every frame in flight and the open frame use the old buffer; the
	// open frame's fence comes last, so it covers them all.
	b.old.retire(b.buf)
	b.changes.Replaced(b.buf, buf, nil, nil)
	b.buf, b.size = buf, size
	b.head, b.tail, b.frameStart = 0, 0, 0
	b.frames.Clear()
	b.stats.Growths++
	return nil
}

// reclaim polls the device and gives back the frames and old buffers
// whose fence completed.
func (b *Buffer) reclaim() error {
	done, err := b.dev.Completed()
	if err != nil {
		return err
	}
	for b.frames.Len() > 0 && b.frames.Front().fence <= done {
		b.tail = b.frames.Pop().end
	}
	if b.frames.Len() == 0 {
		b.tail = b.frameStart
	}
	b.old.collect(done)
	return nil
}

// Write allocates len(data) bytes as Allocate does and writes data there
// (through BufferOptions.Belt when set, else a queue write). The length is
// a multiple of 4 (ErrInvalidSize); the ring's usage has CopyDst. A write
// the device refuses leaves the bytes allocated for the open frame.
func (b *Buffer) Write(data []byte) (Slice, error) {
	if len(data)%device.CopyAlignment != 0 {
		return Slice{}, fmt.Errorf("ring: Write of %d bytes, not a multiple of 4: %w", len(data), ErrInvalidSize)
	}
	s, err := b.Allocate(uint64(len(data)))
	if err != nil {
		return Slice{}, err
	}
	if belt := b.opts.Belt; belt != nil {
		err = belt.Upload(s.Buffer, s.OffsetBytes, data)
	} else {
		err = b.dev.WriteBuffer(s.Buffer, s.OffsetBytes, data)
	}
	if err != nil {
		return Slice{}, fmt.Errorf("ring: Write: %w", err)
	}
	return s, nil
}

// EndFrame ends the open frame: its bytes are the GPU's until the device
// completes fence, the value device.Device.Fence returned for the
// submission that carries every use of them. It then polls the device and
// reclaims finished frames. fence is positive and at least the previous
// frame's (ErrInvalidFence). A frame that allocated nothing is fine. No
// allocation once the frame queue has warmed up.
func (b *Buffer) EndFrame(fence uint64) error {
	if b.buf == nil {
		return fmt.Errorf("ring: EndFrame: %w", errReleased)
	}
	if fence == 0 || fence < b.lastFence {
		return fmt.Errorf("ring: EndFrame with fence %d after %d: %w", fence, b.lastFence, ErrInvalidFence)
	}
	if b.head != b.frameStart {
		b.frames.Push(frame{fence: fence, end: b.head})
	}
	b.old.endFrame(fence)
	b.frameStart = b.head
	b.lastFence = fence
	b.stats.Frames++
	if err := b.reclaim(); err != nil {
		return fmt.Errorf("ring: EndFrame: %w", err)
	}
	return nil
}

// Stats returns a snapshot of the ring's counters.
func (b *Buffer) Stats() BufferStats {
	s := b.stats
	s.SizeBytes = b.size
	s.InFlightBytes = b.head - b.tail
	s.FramesInFlight = b.frames.Len()
	s.OldBuffers = b.old.len()
	return s
}

// Changes appends to dst what changed since the previous call, as
// memory.Change states: a Replaced per growth (coalesced: the buffer the
// caller last saw, the one now; slices of earlier frames keep naming the
// old one, valid until their frames' fences complete), a Released for
// Release. A ring moves nothing. O(changes); it allocates only when dst
// lacks room.
func (b *Buffer) Changes(dst []memory.Change) []memory.Change { return b.changes.Take(dst) }

// Release releases the ring's device buffers; the device frees them once
// the GPU has finished the work recorded on them. It is idempotent and
// nil-safe; later calls return device.ErrReleased.
func (b *Buffer) Release() {
	if b == nil || b.buf == nil {
		return
	}
	b.buf.Release()
	b.changes.Released(b.buf, nil)
	b.buf = nil
	b.old.release()
	b.frames.Clear()
}
