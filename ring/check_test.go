package ring_test

import (
	"bytes"
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/ring"
)

// frameAllocator is what Buffer and Frame have in common.
type frameAllocator interface {
	Allocate(size uint64) (ring.Slice, error)
	EndFrame(fence uint64) error
}

// held is a Slice the GPU may still read: of the open frame (fence 0) or
// of a frame whose fence has not completed. data is what was written to it.
type held struct {
	s     ring.Slice
	data  []byte
	fence uint64
}

// checker drives a frame allocator and holds it to the package's
// invariants after every step: every Slice handed out is aligned, inside
// its buffer, and disjoint from every Slice the GPU may still read; the
// bytes of those keep what was written to them (so nothing overwrote them
// and their buffer was not released).
type checker struct {
	dev   device.Device
	hold  *host.Device // non-nil when the test controls completion
	a     frameAllocator
	align uint64
	held  []held
	seq   byte
}

// alloc allocates size bytes, checks the slice and fills it with a
// pattern. It returns the allocator's error as is.
func (c *checker) alloc(size uint64) (ring.Slice, error) {
	s, err := c.a.Allocate(size)
	if err != nil {
		return s, err
	}
	if s.SizeBytes != size || s.OffsetBytes%c.align != 0 || size > s.Buffer.Size() || s.OffsetBytes > s.Buffer.Size()-size {
		return s, fmt.Errorf("Allocate(%d) = offset %d size %d in a buffer of %d (alignment %d)", size, s.OffsetBytes, s.SizeBytes, s.Buffer.Size(), c.align)
	}
	// The allocator polled the device's Completed during Allocate, and in
	// the browser fences complete between polls: catch up with it (a
	// reading now is at least the allocator's) before looking for overlaps.
	if err := c.forgetDone(); err != nil {
		return s, err
	}
	for _, h := range c.held {
		if h.s.Buffer == s.Buffer && s.OffsetBytes < h.s.OffsetBytes+h.s.SizeBytes && h.s.OffsetBytes < s.OffsetBytes+s.SizeBytes {
			return s, fmt.Errorf("Allocate(%d) = [%d, %d) overlaps [%d, %d) of fence %d, which the GPU may still read",
				size, s.OffsetBytes, s.OffsetBytes+s.SizeBytes, h.s.OffsetBytes, h.s.OffsetBytes+h.s.SizeBytes, h.fence)
		}
	}
	data := make([]byte, (size+3)&^3)
	c.seq++
	for i := range data {
		data[i] = c.seq + byte(i)
	}
	if err := c.dev.WriteBuffer(s.Buffer, s.OffsetBytes, data); err != nil {
		return s, fmt.Errorf("writing the allocation: %w", err)
	}
	c.held = append(c.held, held{s: s, data: data})
	return s, nil
}

// endFrame fences the device and ends the allocator's frame.
func (c *checker) endFrame() (uint64, error) {
	f, err := c.dev.Fence()
	if err != nil {
		return 0, err
	}
	if err := c.a.EndFrame(f); err != nil {
		return 0, err
	}
	for i := range c.held {
		if c.held[i].fence == 0 {
			c.held[i].fence = f
		}
	}
	return f, nil
}

// complete lets the GPU finish every fence up to f (on a held device) and
// forgets the slices it no longer reads.
func (c *checker) complete(f uint64) error {
	if c.hold != nil {
		c.hold.Complete(f)
	}
	return c.forgetDone()
}

// forgetDone forgets the slices whose fence the device has completed.
func (c *checker) forgetDone() error {
	done, err := c.dev.Completed()
	if err != nil {
		return err
	}
	keep := c.held[:0]
	for _, h := range c.held {
		if h.fence == 0 || h.fence > done {
			keep = append(keep, h)
		}
	}
	clear(c.held[len(keep):])
	c.held = keep
	return nil
}

// verify reads back every slice the GPU may still read.
func (c *checker) verify() error {
	for _, h := range c.held {
		got := make([]byte, len(h.data))
		if err := c.dev.ReadBuffer(h.s.Buffer, h.s.OffsetBytes, got); err != nil {
			return fmt.Errorf("reading [%d, %d) of fence %d: %w", h.s.OffsetBytes, h.s.OffsetBytes+h.s.SizeBytes, h.fence, err)
		}
		if !bytes.Equal(got, h.data) {
			return fmt.Errorf("[%d, %d) of fence %d was overwritten", h.s.OffsetBytes, h.s.OffsetBytes+h.s.SizeBytes, h.fence)
		}
	}
	return nil
}
