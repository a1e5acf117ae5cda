package webgpu

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// MapWrite buffers. A MapWrite buffer is created mapped (mappedAtCreation)
// and stays mapped, its whole range in Buffer.mapped, until the GPU needs
// it: a copy from it (CopyBuffer, ReadBuffer) unmaps it first, since
// WebGPU rejects work on a mapped buffer. The next WriteBuffer maps it
// again: mapAsync resolves once the GPU has finished the submissions that
// use the buffer, at a device poll. A caller that waited for their fence
// gets the mapping from one non-blocking poll; otherwise the write submits
// pending work and blocks until the queue is idle, so writes still take
// effect in call order.

// writeMapped writes data at offset of the MapWrite buffer b through its
// mapping. The range has been checked.
func (d *Device) writeMapped(b *Buffer, offset uint64, data []byte) error {
	if b.mapped == nil {
		if err := d.mapForWrite(b); err != nil {
			return err
		}
	}
	copy(b.mapped[offset:], data)
	return nil
}

// mapForWrite maps all of b for writing, waiting for the GPU if it still
// uses b.
func (d *Device) mapForWrite(b *Buffer) error {
	// A copy from b still recorded must reach the queue, or the mapping
	// would wait for a submission that never comes.
	if err := d.flush(); err != nil {
		return err
	}
	done := false
	var status wgpu.MapAsyncStatus
	if err := b.buf.TryMapAsync(wgpu.MapModeWrite, 0, b.desc.Size, func(s wgpu.MapAsyncStatus) {
		status, done = s, true
	}); err != nil {
		return d.fail(fmt.Sprintf("map buffer %q for writing", b.desc.Label), err)
	}
	if d.dev.Poll(false, nil); !done {
		d.dev.Poll(true, nil)
	}
	if !done || status != wgpu.MapAsyncStatusSuccess {
		d.lost = true
		return fmt.Errorf("webgpu: map buffer %q for writing: done %v, status %v: %w", b.desc.Label, done, status, device.ErrDeviceLost)
	}
	b.mapped = b.buf.GetMappedRange(0, uint(b.desc.Size))
	return nil
}

// unmapForGPU unmaps b if it is mapped, before work that uses it is
// recorded.
func (d *Device) unmapForGPU(b *Buffer) error {
	if b.mapped == nil {
		return nil
	}
	b.mapped = nil
	if err := b.buf.TryUnmap(); err != nil {
		return d.fail(fmt.Sprintf("unmap buffer %q", b.desc.Label), err)
	}
	return nil
}
