package ring

// A linear frame arena over blocks, one (or more) per frame in flight.
//
// The open frame bumps through its current block: an allocation of n
// bytes (rounded up to align) takes [used, used+n) when used+n <= the
// block's size. A frame that outgrows its block chains a new one (Grow),
// twice as large or as large as the request, or gets ErrFull; there is no
// wrap within a block. EndFrame hands every block of the frame to the GPU
// with the frame's fence and leaves the frame without a block; the next
// Allocate takes a block whose fence has completed, or makes one.
//
// Block size: new blocks are made target bytes large, and target grows to
// what the largest frame asked for in total, so a frame that chained
// blocks once gets a single block after that. Completed blocks smaller
// than target are released instead of reused.

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/fenced"
)

// FrameOptions configure an Frame. The zero value is 1 MiB vertex and
// index blocks, 4-byte aligned, that return ErrFull on overflow.
type FrameOptions struct {
	// Label names the device buffers.
	Label string
	// BlockBytes is the size of the first blocks, rounded up to
	// Alignment; 0 means 1 MiB.
	BlockBytes uint64
	// Grow makes a frame that outgrows its block chain a larger one, and
	// later blocks as large as that frame needed, instead of ErrFull.
	Grow bool
	// MaxBlockBytes caps a block; 0 means the device's MaxBufferSize.
	MaxBlockBytes uint64
	// MaxBlocks caps the blocks alive at once (in flight, free and open);
	// 0 means 16. A frame that needs a block beyond it gets ErrFull: the
	// GPU is that many blocks behind.
	MaxBlocks int
	// Usage of the blocks; 0 means Vertex|Index|CopyDst.
	Usage device.Usage
	// Alignment of every offset and size, a power of two; 0 or less than
	// 4 means 4.
	Alignment uint32
}

// FrameStats is a snapshot of an Frame's counters.
type FrameStats struct {
	BlockBytes     uint64 // size new blocks are made
	UsedBytes      uint64 // bytes handed out in the open frame, rounding included
	Blocks         int    // blocks alive
	InFlightBlocks int    // blocks waiting for their frame's fence
	Frames         int    // EndFrame calls
	Allocs         int    // successful Allocate calls
	Chains         int    // blocks chained because a frame outgrew its block
	Full           int    // Allocate calls that returned ErrFull
}

// Frame is a linear per-frame allocator for vertex and index scratch.
// Create one with NewFrame. It is not safe for concurrent use.
//
// Invariants: used <= cur's size; every block is cur or in blocks (the
// open frame's earlier ones, in flight, free: package fenced); free
// blocks are at least target bytes.
type Frame struct {
	dev       device.Device
	opts      FrameOptions
	align     uint64
	max       uint64
	target    uint64
	cur       device.Buffer // the open frame's block; nil before its first Allocate
	used      uint64
	frameNeed uint64 // bytes the open frame asked for, over all its blocks
	recycled  fenced.Blocks
	blocks    int
	lastFence uint64
	released  bool
	stats     FrameStats
}

// NewFrame returns an arena on dev. It creates no block until the first
// Allocate. It fails with ErrInvalidOptions (a nil dev too).
func NewFrame(dev device.Device, opts FrameOptions) (*Frame, error) {
	if dev == nil {
		return nil, fmt.Errorf("ring.NewFrame: nil device: %w", ErrInvalidOptions)
	}
	l := dev.Limits()
	align := uint64(max(opts.Alignment, device.CopyAlignment))
	if align&(align-1) != 0 {
		return nil, fmt.Errorf("ring.NewFrame: alignment %d is not a power of two: %w", align, ErrInvalidOptions)
	}
	if opts.Usage == 0 {
		opts.Usage = device.Vertex | device.Index | device.CopyDst
	}
	if err := opts.Usage.Validate(); err != nil {
		return nil, fmt.Errorf("ring.NewFrame: %w: %w", ErrInvalidOptions, err)
	}
	if opts.BlockBytes == 0 {
		opts.BlockBytes = 1 << 20
	}
	if opts.MaxBlocks == 0 {
		opts.MaxBlocks = 16
	}
	maxBytes := opts.MaxBlockBytes
	if maxBytes == 0 {
		maxBytes = l.MaxBufferSize
	}
	maxBytes = min(maxBytes, l.MaxBufferSize) &^ (align - 1)
	target, ok := alignUp(opts.BlockBytes, align)
	if !ok || target > maxBytes || opts.MaxBlocks < 1 {
		return nil, fmt.Errorf("ring.NewFrame: blocks of %d bytes (maximum %d), at most %d: %w", opts.BlockBytes, maxBytes, opts.MaxBlocks, ErrInvalidOptions)
	}
	return &Frame{dev: dev, opts: opts, align: align, max: maxBytes, target: target}, nil
}

// Alignment returns the alignment of every offset in bytes.
func (a *Frame) Alignment() uint64 { return a.align }

// Allocate hands out size bytes of the open frame's block, at an offset
// aligned to the arena's alignment. It fails with ErrInvalidSize for 0
// bytes or a size that overflows when rounded up to the alignment, and
// ErrFull (whatever the size up to 2^64-1) when the frame outgrows its
// block without Grow, a
// block would pass MaxBlockBytes or MaxBlocks, or the device refuses one
// (wrapped too); then nothing changed.
//
// O(1) and no allocation, except when it takes a block (at a frame's
// first Allocate, or when the frame outgrows its block).
func (a *Frame) Allocate(size uint64) (Slice, error) {
	if a.released {
		return Slice{}, fmt.Errorf("ring: Frame.Allocate: %w", errReleased)
	}
	n, ok := alignUp(size, a.align)
	if size == 0 || !ok {
		return Slice{}, fmt.Errorf("ring: Frame.Allocate of %d bytes: %w", size, ErrInvalidSize)
	}
	if a.cur != nil && n <= a.cur.Size()-a.used { // used <= Size: no wrap, whatever n
		off := a.used
		a.used += n
		a.frameNeed += n
		a.stats.Allocs++
		return Slice{Buffer: a.cur, OffsetBytes: off, SizeBytes: size}, nil
	}
	if err := a.takeBlock(n); err != nil {
		a.stats.Full++
		return Slice{}, fmt.Errorf("ring: Frame.Allocate of %d bytes: %w", size, err)
	}
	a.used = n
	a.frameNeed += n
	a.stats.Allocs++
	return Slice{Buffer: a.cur, OffsetBytes: 0, SizeBytes: size}, nil
}

// takeBlock makes the open frame's current block one that holds n bytes:
// a free one, or a new one. On error nothing changed.
func (a *Frame) takeBlock(n uint64) error {
	chain := a.cur != nil
	if chain && !a.opts.Grow {
		return fmt.Errorf("the frame's block of %d bytes has %d left: %w", a.cur.Size(), a.cur.Size()-a.used, ErrFull)
	}
	size := a.target
	if chain {
		size = max(size, 2*a.cur.Size())
	}
	size = max(size, n)
	if size > a.max {
		size = a.max
	}
	if n > size || (n > a.target && !a.opts.Grow) {
		return fmt.Errorf("blocks of %d bytes, maximum %d: %w", a.target, a.max, ErrFull)
	}
	if err := a.reclaim(); err != nil {
		return err
	}
	buf, ok := a.recycled.Take(func(b device.Buffer) bool { return b.Size() >= size })
	if !ok {
		if a.blocks >= a.opts.MaxBlocks {
			_, inflight, _ := a.recycled.Len()
			return fmt.Errorf("%d blocks alive, %d in flight: %w", a.blocks, inflight, ErrFull)
		}
		var err error
		buf, err = a.dev.CreateBuffer(device.BufferDesc{Label: a.opts.Label, Size: size, Usage: a.opts.Usage})
		if err != nil {
			return fmt.Errorf("block of %d bytes: %w: %w", size, ErrFull, err)
		}
		a.blocks++
	}
	if chain {
		a.recycled.Fill(a.cur, a.used)
		a.stats.Chains++
	}
	a.cur = buf
	return nil
}

// reclaim polls the device and frees the blocks whose fence completed,
// releasing those smaller than target.
func (a *Frame) reclaim() error {
	released, err := a.recycled.Reclaim(a.dev, a.bigEnough)
	a.blocks -= released
	return err
}

// bigEnough reports whether a free block is worth keeping: at least target.
func (a *Frame) bigEnough(b device.Buffer) bool { return b.Size() >= a.target }

// EndFrame ends the open frame: its blocks are the GPU's until the device
// completes fence (see Buffer.EndFrame), and the next Allocate starts a new
// frame in another block. fence is positive and at least the previous
// frame's (ErrInvalidFence). No allocation once warmed up.
func (a *Frame) EndFrame(fence uint64) error {
	if a.released {
		return fmt.Errorf("ring: Frame.EndFrame: %w", errReleased)
	}
	if fence == 0 || fence < a.lastFence {
		return fmt.Errorf("ring: Frame.EndFrame with fence %d after %d: %w", fence, a.lastFence, ErrInvalidFence)
	}
	a.recycled.EndFrame(fence, a.cur, a.used)
	a.cur, a.used = nil, 0
	if a.opts.Grow && a.frameNeed > a.target {
		t, _ := alignUp(a.frameNeed, a.align)
		a.target = min(t, a.max)
	}
	a.frameNeed = 0
	a.lastFence = fence
	a.stats.Frames++
	if err := a.reclaim(); err != nil {
		return fmt.Errorf("ring: Frame.EndFrame: %w", err)
	}
	// Free blocks made before target grew are too small now.
	a.blocks -= a.recycled.Trim(a.bigEnough)
	return nil
}

// Stats returns a snapshot of the arena's counters.
func (a *Frame) Stats() FrameStats {
	s := a.stats
	s.BlockBytes = a.target
	s.UsedBytes = a.used
	s.Blocks = a.blocks
	_, s.InFlightBlocks, _ = a.recycled.Len()
	return s
}

// Release releases every block; the device frees them once the GPU has
// finished the work recorded on them. Idempotent and nil-safe; later
// calls return device.ErrReleased.
func (a *Frame) Release() {
	if a == nil || a.released {
		return
	}
	a.released = true
	if a.cur != nil {
		a.cur.Release()
		a.cur = nil
	}
	a.recycled.Release()
	a.blocks = 0
}
