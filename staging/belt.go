package staging

// The belt's chunks move through three places:
//
//	open frame   cur (being filled, used bytes taken) and filled
//	in flight    a FIFO of (chunk, fence), fences increasing
//	free         chunks whose fence completed, ready to be written
//
// Upload takes bytes from cur; when cur is full it moves to filled and
// the next chunk comes from free (after polling the device for completed
// fences), or is made (below MaxChunks), or, with MaxChunks alive, the
// belt waits for the GPU, after which every chunk is free.
// EndFrame moves the open frame's chunks in flight under its fence.
// Leaving a chunk, the belt submits once SubmitChunks chunks were left
// since the last submit it knows of: its own, its wait's, or the frame's
// (EndFrame). With SubmitChunks a quarter of MaxChunks (the default), the
// chunks submitted first come back before the belt runs out.

import (
	"fmt"
	"math"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/fenced"
)

// Options configure a Belt. The zero value is chunks of 8 MiB, at most 16.
type Options struct {
	// Label names the chunks; "staging" if empty.
	Label string
	// ChunkBytes is the size of a chunk, rounded up to 4; 0 means 8 MiB.
	// At most the device's MaxBufferSize.
	ChunkBytes uint64
	// MaxChunks caps the chunks alive at once; 0 means 16.
	MaxChunks int
	// SubmitChunks is how many filled chunks the belt leaves before it
	// submits them (see the package doc); 0 means a quarter of MaxChunks,
	// at least 1 and at most 4. At most MaxChunks.
	SubmitChunks int
}

// Stats is a snapshot of a Belt's counters.
type Stats struct {
	Chunks         int    // chunks alive
	InFlightChunks int    // chunks waiting for a fence
	Uploads        int    // successful Upload calls
	Bytes          uint64 // bytes uploaded
	Copies         int    // copies recorded (an upload split over chunks makes several)
	Waits          int    // times Upload waited for the GPU, every chunk in use
	Submits        int    // submits the belt made on leaving SubmitChunks written chunks
	// WaitTime and SubmitTime are the caller's time in those waits and
	// submits: what the belt adds to a frame beyond its copies.
	WaitTime, SubmitTime time.Duration
}

// Belt is an upload staging belt. Create one with New. It is not safe
// for concurrent use.
type Belt struct {
	dev       device.Device
	opts      Options
	size      uint64
	cur       device.Buffer // nil when the open frame has none
	used      uint64
	recycled  fenced.Blocks // the other chunks: the open frame's, in flight, free
	chunks    int
	unsent    int // chunks left with uploads since the last submit
	lastFence uint64
	released  bool
	stats     Stats
}

// New returns a belt on dev. It makes no chunk until the first Upload. It
// fails with ErrInvalidOptions (a nil dev too).
func New(dev device.Device, opts Options) (*Belt, error) {
	if dev == nil {
		return nil, fmt.Errorf("staging.New: nil device: %w", ErrInvalidOptions)
	}
	if opts.Label == "" {
		opts.Label = "staging"
	}
	if opts.ChunkBytes == 0 {
		opts.ChunkBytes = 8 << 20
	}
	if opts.MaxChunks == 0 {
		opts.MaxChunks = 16
	}
	if opts.SubmitChunks == 0 {
		opts.SubmitChunks = min(max(opts.MaxChunks/4, 1), 4)
	}
	size := (opts.ChunkBytes + 3) &^ 3
	if size < opts.ChunkBytes || size > dev.Limits().MaxBufferSize || opts.MaxChunks < 1 {
		return nil, fmt.Errorf("staging.New: chunks of %d bytes (device maximum %d), at most %d: %w",
			opts.ChunkBytes, dev.Limits().MaxBufferSize, opts.MaxChunks, ErrInvalidOptions)
	}
	if opts.SubmitChunks < 1 || opts.SubmitChunks > opts.MaxChunks {
		return nil, fmt.Errorf("staging.New: a submit every %d chunks, of at most %d: %w",
			opts.SubmitChunks, opts.MaxChunks, ErrInvalidOptions)
	}
	return &Belt{dev: dev, opts: opts, size: size}, nil
}

// ChunkBytes returns the size of a chunk.
func (b *Belt) ChunkBytes() uint64 { return b.size }

// Upload copies data to dst at dstOffset through the belt. dst needs
// CopyDst; len(data) and dstOffset are multiples of 4 and the range lies
// inside dst (ErrInvalidUpload, checked before anything is written). data
// may be reused when Upload returns.
//
// O(len(data)) bytes written; one copy recorded per chunk the data spans.
// It allocates only when it makes a chunk. A device error (a chunk
// refused, a lost device) may come after a prefix of data was uploaded.
func (b *Belt) Upload(dst device.Buffer, dstOffset uint64, data []byte) error {
	n := uint64(len(data))
	if err := b.check("Upload", dst, dstOffset, n); err != nil {
		return err
	}
	for len(data) > 0 {
		if b.cur == nil || b.used == b.size {
			if err := b.nextChunk(); err != nil {
				return fmt.Errorf("staging: Upload: %w", err)
			}
		}
		k := min(uint64(len(data)), b.size-b.used)
		if err := b.dev.WriteBuffer(b.cur, b.used, data[:k]); err != nil {
			return fmt.Errorf("staging: Upload: %w", err)
		}
		if err := b.copyOut(dst, dstOffset, k); err != nil {
			return fmt.Errorf("staging: Upload: %w", err)
		}
		dstOffset += k
		data = data[k:]
	}
	b.stats.Uploads++
	b.stats.Bytes += n
	return nil
}

// UploadFunc is Upload with the n bytes written by fill straight into a
// chunk (device.FillBuffer: on a GPU, into the chunk's mapping, with no
// copy of the caller's): fill gets exactly n bytes, must write every one
// and must not keep the slice. n is at most ChunkBytes (ErrInvalidUpload)
// and is never split: when the current chunk has less room left, the
// belt moves to the next chunk. Errors are Upload's; fill is not called
// when the arguments are refused. One copy recorded.
func (b *Belt) UploadFunc(dst device.Buffer, dstOffset, n uint64, fill func(dst []byte)) error {
	if err := b.check("UploadFunc", dst, dstOffset, n); err != nil {
		return err
	}
	if n > b.size {
		return fmt.Errorf("staging: UploadFunc of %d bytes, over the chunk size %d: %w", n, b.size, ErrInvalidUpload)
	}
	if n == 0 {
		return nil
	}
	if b.cur == nil || b.size-b.used < n {
		if err := b.nextChunk(); err != nil {
			return fmt.Errorf("staging: UploadFunc: %w", err)
		}
	}
	if err := device.FillBuffer(b.dev, b.cur, b.used, n, fill); err != nil {
		return fmt.Errorf("staging: UploadFunc: %w", err)
	}
	if err := b.copyOut(dst, dstOffset, n); err != nil {
		return fmt.Errorf("staging: UploadFunc: %w", err)
	}
	b.stats.Uploads++
	b.stats.Bytes += n
	return nil
}

// UploadTexture writes one layer's mip level mip of tex from data through
// the belt, as device.Device.WriteTexture takes them: tightly packed rows,
// top row first, exactly the mip's bytes. The rows go into a chunk
// BytesPerRowAlignment apart (the padding zeroed), and one
// CopyBufferToTexture is recorded. A mip whose padded rows do not fit in
// a chunk goes by the device's WriteTexture instead. tex needs
// TextureCopyDst and one sample, and layer and mip exist; a refused
// upload (device.ErrInvalidSize, device.ErrOutOfBounds,
// device.ErrInvalidUsage, checked before anything is written) changes
// nothing. data may be reused when UploadTexture returns.
func (b *Belt) UploadTexture(tex device.Texture, layer, mip uint32, data []byte) error {
	if b.released {
		return fmt.Errorf("staging: UploadTexture: %w", errReleased)
	}
	if tex == nil {
		return fmt.Errorf("staging: UploadTexture: nil texture: %w", device.ErrInvalidObject)
	}
	desc := tex.Desc()
	if !desc.Usage.Has(device.TextureCopyDst) {
		return fmt.Errorf("staging: UploadTexture to texture %q of usage %v: %w", desc.Label, desc.Usage, device.ErrInvalidUsage)
	}
	w, h := desc.MipSize(mip)
	row, pitch := uint64(w)*uint64(desc.Format.BytesPerTexel()), uint64(desc.PaddedRow(mip))
	// The offset: a multiple of 4 and of the texel size (1 to 16 bytes,
	// a power of two).
	align := max(uint64(device.CopyAlignment), uint64(desc.Format.BytesPerTexel()))
	n, err := device.CheckBufferTexture(math.MaxUint64, 0, uint32(pitch), desc, layer, mip)
	if err != nil {
		return fmt.Errorf("staging: UploadTexture to texture %q: %w", desc.Label, err)
	}
	if want := desc.MipBytes(mip); uint64(len(data)) != want {
		return fmt.Errorf("staging: UploadTexture of %d bytes to mip %d of texture %q, of %d bytes: %w", len(data), mip, desc.Label, want, device.ErrInvalidSize)
	}
	// The layer takes whole rows, its last one's padding too, so that the
	// next layer uploaded lies a layer's stride on: a device may join
	// copies into consecutive layers from consecutive stretches into one.
	if full := pitch * uint64(h); full <= b.size {
		n = full
	}
	if n > b.size {
		if err := b.dev.WriteTexture(tex, layer, mip, data); err != nil {
			return fmt.Errorf("staging: UploadTexture: %w", err)
		}
	} else {
		at := (b.used + align - 1) &^ (align - 1)
		if b.cur == nil || at > b.size || b.size-at < n {
			if err := b.nextChunk(); err != nil {
				return fmt.Errorf("staging: UploadTexture: %w", err)
			}
			at = 0
		}
		err := device.FillBuffer(b.dev, b.cur, at, (n+3)&^3, func(dst []byte) {
			for y := uint64(0); y < uint64(h); y++ {
				copy(dst[y*pitch:y*pitch+row], data[y*row:])
				clear(dst[y*pitch+row : min(y*pitch+pitch, uint64(len(dst)))])
			}
		})
		if err == nil {
			err = b.dev.CopyBufferToTexture(b.cur, at, uint32(pitch), tex, layer, mip)
		}
		if err != nil {
			return fmt.Errorf("staging: UploadTexture: %w", err)
		}
		b.used = at + (n+3)&^3
		b.stats.Copies++
	}
	b.stats.Uploads++
	b.stats.Bytes += uint64(len(data))
	return nil
}

// check refuses an upload of n bytes to dst at dstOffset that Upload's
// rules forbid.
func (b *Belt) check(op string, dst device.Buffer, dstOffset, n uint64) error {
	if b.released {
		return fmt.Errorf("staging: %s: %w", op, errReleased)
	}
	if dst == nil {
		return fmt.Errorf("staging: %s: nil destination: %w", op, device.ErrInvalidObject)
	}
	if n%device.CopyAlignment != 0 || dstOffset%device.CopyAlignment != 0 {
		return fmt.Errorf("staging: %s of %d bytes at %d: not multiples of 4: %w", op, n, dstOffset, ErrInvalidUpload)
	}
	if err := device.CheckRange(dst.Size(), dstOffset, n); err != nil {
		return fmt.Errorf("staging: %s of %d bytes at %d to a buffer of %d: %w: %w", op, n, dstOffset, dst.Size(), ErrInvalidUpload, err)
	}
	return nil
}

// copyOut records the copy of the k bytes just written at b.used in the
// current chunk to dst at dstOffset, and takes them.
func (b *Belt) copyOut(dst device.Buffer, dstOffset, k uint64) error {
	if err := b.dev.CopyBuffer(b.cur, b.used, dst, dstOffset, k); err != nil {
		return err
	}
	b.used += k
	b.stats.Copies++
	return nil
}

// nextChunk makes cur an empty chunk the GPU does not use. The chunk it
// leaves, if it holds uploads, is submitted with everything recorded
// before it once SubmitChunks such chunks wait for a submit.
func (b *Belt) nextChunk() error {
	if b.cur != nil {
		b.recycled.Fill(b.cur, b.used)
		b.cur = nil
		if b.used > 0 {
			b.unsent++
		}
		if b.unsent >= b.opts.SubmitChunks {
			t0 := time.Now()
			err := b.dev.Submit()
			b.stats.SubmitTime += time.Since(t0)
			if err != nil {
				return err
			}
			b.unsent = 0
			b.stats.Submits++
		}
	}
	if err := b.reclaim(); err != nil {
		return err
	}
	if _, _, free := b.recycled.Len(); free == 0 && b.chunks >= b.opts.MaxChunks {
		// Every chunk is in use: wait for the GPU, then all are free. No
		// fence: the program's fences end its frames (a fence marked
		// here would let the device free what the frame released).
		t0 := time.Now()
		err := b.dev.Wait()
		b.stats.WaitTime += time.Since(t0)
		if err != nil {
			return err
		}
		b.stats.Waits++
		b.unsent = 0
		b.recycled.Drain()
	}
	// Oldest completed first: its mapping is the likeliest to resolve
	// without waiting.
	if buf, ok := b.recycled.Take(nil); ok {
		b.cur = buf
	} else {
		buf, err := b.dev.CreateBuffer(device.BufferDesc{Label: b.opts.Label, Size: b.size, Usage: device.MapWrite | device.CopySrc})
		if err != nil {
			return err
		}
		b.chunks++
		b.cur = buf
	}
	b.used = 0
	return nil
}

// retire puts the open frame's chunks in flight under fence; an empty
// current chunk stays the open frame's.
func (b *Belt) retire(fence uint64) {
	var cur device.Buffer
	if b.used > 0 {
		cur, b.cur = b.cur, nil
	}
	b.recycled.EndFrame(fence, cur, b.used)
	if cur != nil {
		b.used = 0
	}
	b.unsent = 0
	b.lastFence = max(b.lastFence, fence)
}

// reclaim polls the device and frees the chunks whose fence completed.
func (b *Belt) reclaim() error {
	_, err := b.recycled.Reclaim(b.dev, nil)
	return err
}

// EndFrame gives the chunks written since the last EndFrame to the GPU
// until the device completes fence, the value device.Device.Fence
// returned for the submission that carries the frame's uploads. fence is
// positive and at least the previous frame's (ErrInvalidFence).
func (b *Belt) EndFrame(fence uint64) error {
	if b.released {
		return fmt.Errorf("staging: EndFrame: %w", errReleased)
	}
	if fence == 0 || fence < b.lastFence {
		return fmt.Errorf("staging: EndFrame with fence %d after %d: %w", fence, b.lastFence, ErrInvalidFence)
	}
	b.retire(fence)
	if err := b.reclaim(); err != nil {
		return fmt.Errorf("staging: EndFrame: %w", err)
	}
	return nil
}

// Stats returns a snapshot of the belt's counters.
func (b *Belt) Stats() Stats {
	s := b.stats
	s.Chunks = b.chunks
	_, s.InFlightChunks, _ = b.recycled.Len()
	return s
}

// Release releases every chunk; the device frees them once the GPU has
// finished the copies recorded from them. Idempotent and nil-safe; later
// calls return device.ErrReleased.
func (b *Belt) Release() {
	if b == nil || b.released {
		return
	}
	b.released = true
	if b.cur != nil {
		b.cur.Release()
		b.cur = nil
	}
	b.recycled.Release()
	b.chunks = 0
}
