package arena

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/offset"
)

// makeRoom runs after the allocator refused size elements, and arranges
// that a retry succeeds:
//
//  1. Room in pieces (see fragmented): as Options.Fragmented says. By
//     default the first such refusal of an episode arms the sweep and
//     grows once, a little, so the request gets through now and the sweep
//     closes the holes over the next frames; a second one while the sweep
//     is still running compacts fully instead.
//  2. Short of room: grow.
//  3. When growth fails (maximum capacity, or the device refuses the new
//     buffer): compact fully, then grow by what is still missing; if that
//     fails too, return ErrFull with the device's error.
func (a *Arena) makeRoom(size uint32) error {
	a.stats.Refusals++
	factor := a.opts.GrowthFactor
	if a.fragmented(size) {
		a.stats.FragmentedRefusals++
		factor = 1 + (factor-1)/8
		compact := false
		switch a.opts.Fragmented {
		case SweepThenCompact:
			compact = a.sw.armed && a.sw.grew
			if !compact {
				a.arm()
				a.sw.grew = true
			}
		case CompactAlways:
			compact = true
		}
		if compact {
			if err := a.compact(); err != nil {
				return err
			}
			if a.fits(size) {
				return nil
			}
		}
	}
	growErr := a.growFor(size, factor)
	if growErr == nil {
		return nil
	}
	if isDeviceBroken(growErr) {
		return growErr
	}
	if err := a.compact(); err != nil {
		return err
	}
	if a.fits(size) {
		return nil
	}
	if err := a.growFor(size, factor); err != nil {
		growErr = err
	}
	if a.fits(size) {
		return nil
	}
	return fmt.Errorf("%w: %d elements, capacity %d of at most %d, %d free: %w",
		ErrFull, size, a.alloc.Capacity(), a.opts.MaxElems, a.alloc.Report().Free, growErr)
}

// fragmented reports whether a refusal of size elements is for want of one
// piece rather than of room: the free space would serve the request and
// still leave a sixteenth of the capacity. An arena fuller than that is
// short, and grows by the full factor: gathering the last few percent of a
// full arena costs a compaction and buys only a growth's delay.
func (a *Arena) fragmented(size uint32) bool {
	free := uint64(a.alloc.Report().Free)
	return free >= uint64(size)+uint64(a.alloc.Capacity()/16)
}

// fits reports whether the allocator would serve size now: some non-empty
// bin is at or above size's, which MaxAlloc tells. Its regions are all at
// least RoundUp(size) long.
func (a *Arena) fits(size uint32) bool {
	return a.alloc.Report().MaxAlloc >= size
}

// errMaxCapacity says growth would pass MaxElems.
var errMaxCapacity = errors.New("at maximum capacity")

// growFor grows the buffer so that a request of size elements fits in the
// free region at the tail: by factor, or by what the request needs if that
// is more. One new buffer, one copy of the used part, the old buffer
// released once the device is done with it.
func (a *Arena) growFor(size uint32, factor float64) error {
	need, ok := offset.RoundUp(size) // the tail must reach size's bin
	if !ok {
		return fmt.Errorf("%w: %d elements", errMaxCapacity, size)
	}
	capacity := uint64(a.alloc.Capacity())
	tail := uint64(a.alloc.Tail())
	target := max(uint64(math.Ceil(float64(capacity)*factor)), capacity-tail+uint64(need))
	if target > uint64(a.opts.MaxElems) {
		if capacity-tail+uint64(need) > uint64(a.opts.MaxElems) {
			return fmt.Errorf("%w: need %d elements, max %d", errMaxCapacity, capacity-tail+uint64(need), a.opts.MaxElems)
		}
		target = uint64(a.opts.MaxElems)
	}
	return a.grow(uint32(target))
}

// grow moves the arena to a new buffer of capacity elements, or of more
// when buffers prepared ahead hold that many (ahead.go). The arena is
// unchanged when it fails.
func (a *Arena) grow(capacity uint32) error {
	bufs, elems := a.takeAhead(capacity)
	if bufs != nil {
		capacity = elems
	}
	if err := a.rebuffer("grow", capacity, a.alloc.Grow, bufs); err != nil {
		return err
	}
	a.stats.Growths++
	return nil
}

// rebuffer moves the arena to a new buffer of capacity elements, which
// its used range fits: one new buffer, one copy of the used range, resize
// (the allocator's Grow or Shrink) to capacity, the old buffer released
// once the device is done with it. bufs, when not nil, are the new
// buffers, made already; they are released if it fails. The arena is
// unchanged when it fails.
func (a *Arena) rebuffer(op string, capacity uint32, resize func(uint32) error, bufs []device.Buffer) error {
	if bufs == nil {
		var err error
		if bufs, err = a.opts.createBuffers(a.dev, capacity); err != nil {
			return fmt.Errorf("arena %q: %s to %d elements: %w", a.opts.Label, op, capacity, err)
		}
	}
	drop := func() {
		for _, b := range bufs {
			b.Release()
		}
	}
	usedElems := uint64(a.alloc.Capacity() - a.alloc.Tail())
	var copied uint64
	for i, b := range bufs {
		if used := usedElems * uint64(a.opts.planeElemSize(i)); used > 0 {
			if err := a.dev.CopyBuffer(a.PlaneBuffer(i), 0, b, 0, used); err != nil {
				drop()
				return fmt.Errorf("arena %q: %s: copy %d bytes: %w", a.opts.Label, op, used, err)
			}
			copied += used
		}
	}
	if err := resize(capacity); err != nil {
		drop()
		return fmt.Errorf("arena %q: %s: %w", a.opts.Label, op, err)
	}
	a.logMoves() // they happened in the buffer replaced
	for i, b := range bufs {
		old := a.PlaneBuffer(i)
		old.Release()
		a.changes.Replaced(old, b, nil, nil)
	}
	a.buf = bufs[0]
	copy(a.planes, bufs[1:])
	a.stats.BytesCopied += copied
	return nil
}
