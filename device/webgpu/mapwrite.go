//go:build cgo || js

package webgpu

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// MapWrite buffers. A MapWrite buffer is created mapped (mappedAtCreation)
// and its whole range kept in Buffer.mapped. WebGPU lets commands that
// copy from a mapped buffer be recorded, and refuses only their submission
// while it is mapped; so a copy from a mapped buffer is recorded as any
// other and the buffer noted in copiedMapped, and flush unmaps every
// noted buffer right before it submits. An upload belt thus writes a
// chunk piece by piece, records a copy after each piece, and the chunk
// stays mapped until the frame's submit.
//
// Call order. A write must not reach a copy recorded before it. Each
// mapped buffer keeps the span [copyLo, copyHi) of the bytes its recorded
// copies read; a write that overlaps it first submits (which unmaps) and
// maps again. Mapping (mapAsync) resolves once the GPU has finished every
// submission that uses the buffer, at a device poll: after the caller's
// fence completed, a non-blocking poll does it (up to three are tried:
// on lavapipe wgpu now and then has not retired the submission yet);
// otherwise the write blocks until the queue is idle.

// mappedCopy is a buffer noted for unmapping at the next submit. wb is
// kept apart: the Buffer may be released before the submit.
type mappedCopy struct {
	b  *Buffer
	wb *wgpu.Buffer
}

// copyFromMapped notes a copy of size bytes from offset of b, about to be
// recorded, when b is a mapped MapWrite buffer.
func (d *Device) copyFromMapped(b *Buffer, offset, size uint64) {
	if b.mapped == nil || size == 0 {
		return
	}
	if b.copyLo == b.copyHi {
		b.copyLo, b.copyHi = offset, offset+size
		d.copiedMapped = append(d.copiedMapped, mappedCopy{b, b.buf})
		return
	}
	b.copyLo = min(b.copyLo, offset)
	b.copyHi = max(b.copyHi, offset+size)
}

// copyEncoder returns the encoder to record a copy of size bytes from
// offset of b in, with the copy noted (noteCopy).
func (d *Device) copyEncoder(b *Buffer, offset, size uint64) (*wgpu.CommandEncoder, error) {
	enc, err := d.encoder()
	if err != nil {
		return nil, err
	}
	d.noteCopy(b, offset, size)
	return enc, nil
}

// noteCopy notes a copy of size bytes from offset of b, recorded in the
// pending encoder: for unmapping at the submit (copyFromMapped), and as
// b's last recorded copy (Buffer.recordedIn), which mapForWrite submits
// before it maps b again.
func (d *Device) noteCopy(b *Buffer, offset, size uint64) {
	d.copyFromMapped(b, offset, size)
	b.recordedIn = d.encSerial
}

// unmapCopied unmaps the buffers copies read from while mapped; flush
// calls it before submitting.
func (d *Device) unmapCopied() error {
	var err error
	for i, c := range d.copiedMapped {
		if e := c.wb.TryUnmap(); e != nil && err == nil {
			err = d.fail("unmap staging buffer", e)
		}
		if c.b.buf == c.wb {
			c.b.mapped = nil
			c.b.copyLo, c.b.copyHi = 0, 0
		}
		d.copiedMapped[i] = mappedCopy{}
	}
	d.copiedMapped = d.copiedMapped[:0]
	return err
}

// mappedRange returns the n bytes at offset of the MapWrite buffer b's
// mapping, for the caller to write now: valid until the next call on the
// device, and written once the caller hands them to b.wrote. The range
// has been checked and is not empty.
func (d *Device) mappedRange(b *Buffer, offset, n uint64) ([]byte, error) {
	end := offset + n
	if b.mapped != nil && b.copyLo < b.copyHi && offset < b.copyHi && b.copyLo < end {
		// A recorded copy reads these bytes: let it run first.
		if err := d.flush(); err != nil {
			return nil, err
		}
	}
	if b.mapped == nil {
		if err := d.mapForWrite(b); err != nil {
			return nil, err
		}
	}
	return b.mapped[offset:end:end], nil
}

// mapForWrite maps all of b for writing, waiting for the GPU if it still
// uses b.
func (d *Device) mapForWrite(b *Buffer) error {
	// A copy from b still recorded must reach the queue, or the mapping
	// would wait for a submission that never comes. Other recorded work
	// waits for the next submit.
	if d.enc != nil && b.recordedIn == d.encSerial {
		if err := d.flush(); err != nil {
			return err
		}
	}
	done := false
	var status wgpu.MapAsyncStatus
	if err := b.buf.TryMapAsync(wgpu.MapModeWrite, 0, b.desc.Size, func(s wgpu.MapAsyncStatus) {
		status, done = s, true
	}); err != nil {
		return d.fail(fmt.Sprintf("map buffer %q for writing", b.desc.Label), err)
	}
	for range 2 {
		if d.dev.Poll(false, nil); done {
			break
		}
	}
	if !done {
		d.blockingMaps++
		d.dev.Poll(true, nil)
	}
	if !done || status != wgpu.MapAsyncStatusSuccess {
		d.lost = true
		return fmt.Errorf("webgpu: map buffer %q for writing: done %v, status %v: %w", b.desc.Label, done, status, device.ErrDeviceLost)
	}
	b.mapAll()
	return nil
}
