//go:build cgo || js

package webgpu

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// Buffer is a device.Buffer on a WebGPU device. Like its device, it is
// not safe for concurrent use.
type Buffer struct {
	dev  *Device
	desc device.BufferDesc
	buf  *wgpu.Buffer // nil after Release
	// mapped is the whole buffer's mapped range while a MapWrite buffer
	// is mapped for writing, nil otherwise. [copyLo, copyHi) spans the
	// bytes that copies recorded since it was mapped read (empty when
	// equal). See mapwrite.go.
	mapped         []byte
	copyLo, copyHi uint64
	// recordedIn is the serial (Device.encSerial) of the last encoder
	// that recorded a copy from the buffer.
	recordedIn uint64
	// view reaches the mapping where mapped is not the mapping itself (in
	// the browser mapped is a Go copy; see mapwrite_js.go).
	view mappedView
}

var _ device.Buffer = (*Buffer)(nil)

// Desc returns the descriptor the buffer was created with.
func (b *Buffer) Desc() device.BufferDesc { return b.desc }

// Size returns the buffer's size in bytes.
func (b *Buffer) Size() uint64 { return b.desc.Size }

// Release ends gpumem's use of the buffer; it is destroyed once a fence
// marked after the call has completed (see the package doc's "Old buffers
// and textures"). It is idempotent and nil-safe.
func (b *Buffer) Release() {
	if b == nil || b.buf == nil {
		return
	}
	b.release()
}

func (b *Buffer) release() {
	d := b.dev
	delete(d.buffers, b)
	if !d.released {
		d.kill(b.buf, nil, b.desc.Size)
	}
	b.buf, b.mapped = nil, nil
}

// releaseInternal releases b, a buffer gpumem made for its own use and
// never handed out: no renderer can name it, so it is destroyed once the
// work recorded on it has finished, with no fence to wait for.
func (d *Device) releaseInternal(b *Buffer) {
	delete(d.buffers, b)
	d.retire(b.buf)
	b.buf, b.mapped = nil, nil
}

// internalUsage is the usage a buffer is created with: the caller's, plus
// Storage where WebGPU allows it, so that Move and Patch can bind it.
func internalUsage(u device.Usage) wgpu.BufferUsage {
	if u&(device.MapRead|device.MapWrite) == 0 {
		u |= device.Storage
	}
	return wgpu.BufferUsage(u)
}

// CreateBuffer creates a zeroed buffer.
func (d *Device) CreateBuffer(desc device.BufferDesc) (device.Buffer, error) {
	if err := d.creatable(desc); err != nil {
		return nil, err
	}
	wb, oom, err := d.createRaw(desc)
	return d.adopt(desc, wb, oom, err)
}

// creatable checks that d can create a buffer of desc.
func (d *Device) creatable(desc device.BufferDesc) error {
	if err := d.usable(); err != nil {
		return err
	}
	if err := desc.Validate(d.limits); err != nil {
		return fmt.Errorf("webgpu: create buffer: %w", err)
	}
	return nil
}

// createRaw creates the binding's buffer for desc, in an out-of-memory
// scope. It touches no state of d's: PrepareBuffer calls it off the
// caller's goroutine.
func (d *Device) createRaw(desc device.BufferDesc) (wb *wgpu.Buffer, oom bool, err error) {
	oom, err = d.withOOMScope(func() (err error) {
		wb, err = d.dev.TryCreateBuffer(&wgpu.BufferDescriptor{
			Label:            desc.Label,
			Size:             desc.Size,
			Usage:            internalUsage(desc.Usage),
			MappedAtCreation: desc.Usage.Has(device.MapWrite),
		})
		return err
	})
	return wb, oom, err
}

// adopt turns createRaw's result into d's Buffer, or its error.
func (d *Device) adopt(desc device.BufferDesc, wb *wgpu.Buffer, oom bool, err error) (device.Buffer, error) {
	if err != nil {
		return nil, d.fail(fmt.Sprintf("create buffer %q", desc.Label), err)
	}
	if oom {
		wb.Destroy()
		wb.Release()
		return nil, fmt.Errorf("webgpu: create buffer %q of %d bytes: %w", desc.Label, desc.Size, device.ErrOutOfMemory)
	}
	b := &Buffer{dev: d, desc: desc, buf: wb}
	if desc.Usage.Has(device.MapWrite) {
		b.mapAll()
	}
	d.buffers[b] = struct{}{}
	return b, nil
}

// PrepareBuffer creates a buffer of desc on a goroutine of its own,
// started at the next Fence or Wait or at Take, whichever comes first
// (jobs.go; see device.Prepare); in the browser, at Take. An invalid
// desc, or a device released or lost, fails at Take. Release waits for
// the buffers not taken yet and destroys them; a Take after it fails
// with ErrReleased.
func (d *Device) PrepareBuffer(desc device.BufferDesc) *device.Pending {
	if !offThread || d.creatable(desc) != nil {
		return device.CreateAtTake(d, desc) // its CreateBuffer says what is wrong
	}
	return prepare(d, "buffer", desc.Label,
		func() (*wgpu.Buffer, bool, error) { return d.createRaw(desc) },
		d.destroyNow,
		func(wb *wgpu.Buffer, oom bool, err error) (device.Buffer, error) { return d.adopt(desc, wb, oom, err) })
}

// prepare returns the Pending of an object (a buffer or a texture, what)
// that create makes, raw, in a job (jobs.go): its Take waits for the job
// and adopts what create returned, its Release waits for the job and
// destroys what create made, and so does the device's Release for one
// neither took nor released.
func prepare[R *wgpu.Buffer | *wgpu.Texture, T any](d *Device, what, label string, create func() (R, bool, error), destroy func(R), adopt func(R, bool, error) (T, error)) *device.PendingOf[T] {
	var (
		raw R
		oom bool
		err error
	)
	p := &preparing{destroy: func() {
		if raw != nil {
			destroy(raw)
			raw = nil
		}
	}}
	p.job = d.later(func() { raw, oom, err = create() })
	d.preparing[p] = struct{}{}
	return device.NewPending(func(take bool) (T, error) {
		var none T
		if !take {
			p.job.cancel() // not started: never will
		}
		d.wait(p.job)
		if _, ok := d.preparing[p]; !ok {
			return none, fmt.Errorf("webgpu: prepared %s %q: %w", what, label, device.ErrReleased)
		}
		delete(d.preparing, p)
		if !take || d.lost {
			p.destroy()
			if take {
				return none, d.usable()
			}
			return none, nil
		}
		return adopt(raw, oom, err)
	})
}

// preparing is an object being made ahead of need: job makes it, and
// destroy destroys what it made (nothing if it made nothing).
type preparing struct {
	job     *job
	destroy func()
}

// buffer checks that db is a live buffer of d and has the usage want.
func (d *Device) buffer(db device.Buffer, role string, want device.Usage) (*Buffer, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	b, ok := device.UnwrapBuffer(db).(*Buffer)
	if !ok || b == nil || b.dev != d {
		return nil, fmt.Errorf("webgpu: %s buffer: %w", role, device.ErrInvalidObject)
	}
	if b.buf == nil {
		return nil, fmt.Errorf("webgpu: %s buffer %q: %w", role, b.desc.Label, device.ErrReleased)
	}
	if !b.desc.Usage.Has(want) {
		return nil, fmt.Errorf("webgpu: %s buffer %q has usage %v, needs %v: %w", role, b.desc.Label, b.desc.Usage, want, device.ErrInvalidUsage)
	}
	return b, nil
}

// WriteBuffer writes data to buf at offset through the queue. Commands
// recorded so far are submitted first, so that the write lands after
// them; with none recorded the write is one queue write and no submit.
func (d *Device) WriteBuffer(db device.Buffer, offset uint64, data []byte) error {
	b, err := d.writable(db, offset, uint64(len(data)))
	if err != nil || len(data) == 0 {
		return err
	}
	if b.desc.Usage.Has(device.MapWrite) {
		dst, err := d.mappedRange(b, offset, uint64(len(data)))
		if err != nil {
			return err
		}
		copy(dst, data)
		b.wrote(offset, dst)
		return nil
	}
	if err := d.flushRecorded(); err != nil {
		return err
	}
	if err := d.writeQueue(b.buf, offset, data); err != nil {
		return d.fail(fmt.Sprintf("write buffer %q", b.desc.Label), err)
	}
	d.queued = true
	return nil
}

// FillBuffer lets fill write size bytes of buf at offset: in place in a
// MapWrite buffer's mapping, else into scratch written as WriteBuffer
// writes. See device.FillBuffer.
func (d *Device) FillBuffer(db device.Buffer, offset, size uint64, fill func(dst []byte)) error {
	b, err := d.writable(db, offset, size)
	if err != nil || size == 0 {
		return err
	}
	if !b.desc.Usage.Has(device.MapWrite) {
		tmp := make([]byte, size)
		fill(tmp)
		return d.WriteBuffer(db, offset, tmp)
	}
	dst, err := d.mappedRange(b, offset, size)
	if err != nil {
		return err
	}
	fill(dst)
	b.wrote(offset, dst)
	return nil
}

// writable resolves the destination of a write of n bytes at offset.
func (d *Device) writable(db device.Buffer, offset, n uint64) (*Buffer, error) {
	b, err := d.buffer(db, "write", 0)
	if err != nil {
		return nil, err
	}
	if u := b.desc.Usage; !u.Has(device.CopyDst) && !u.Has(device.MapWrite) {
		return nil, fmt.Errorf("webgpu: write buffer %q has usage %v, needs CopyDst or MapWrite: %w", b.desc.Label, u, device.ErrInvalidUsage)
	}
	if err := device.CheckRange(b.desc.Size, offset, n); err != nil {
		return nil, fmt.Errorf("webgpu: write buffer %q: %w", b.desc.Label, err)
	}
	return b, nil
}

// CopyBuffer records a copy of size bytes from src to dst.
func (d *Device) CopyBuffer(dsrc device.Buffer, srcOffset uint64, ddst device.Buffer, dstOffset, size uint64) error {
	src, err := d.buffer(dsrc, "copy source", device.CopySrc)
	if err != nil {
		return err
	}
	dst, err := d.buffer(ddst, "copy destination", device.CopyDst)
	if err != nil {
		return err
	}
	if src == dst {
		return fmt.Errorf("webgpu: copy within buffer %q: %w", src.desc.Label, device.ErrSameBuffer)
	}
	if err := device.CheckRange(src.desc.Size, srcOffset, size); err != nil {
		return fmt.Errorf("webgpu: copy source %q: %w", src.desc.Label, err)
	}
	if err := device.CheckRange(dst.desc.Size, dstOffset, size); err != nil {
		return fmt.Errorf("webgpu: copy destination %q: %w", dst.desc.Label, err)
	}
	if size == 0 {
		return nil
	}
	enc, err := d.copyEncoder(src, srcOffset, size)
	if err != nil {
		return err
	}
	if err := enc.TryCopyBufferToBuffer(src.buf, srcOffset, dst.buf, dstOffset, size); err != nil {
		return d.fail("copy buffer", err)
	}
	d.encUsed = true
	return nil
}

// ReadBuffer submits, waits, and copies len(dst) bytes of buf from offset
// into dst.
func (d *Device) ReadBuffer(db device.Buffer, offset uint64, dst []byte) error {
	if err := d.usable(); err != nil {
		return err
	}
	b, ok := device.UnwrapBuffer(db).(*Buffer)
	if ok && b != nil && b.dev == d && b.buf != nil && b.desc.Usage.Has(device.MapRead) {
		if err := device.CheckRange(b.desc.Size, offset, uint64(len(dst))); err != nil {
			return fmt.Errorf("webgpu: read buffer %q: %w", b.desc.Label, err)
		}
		if len(dst) == 0 {
			return nil
		}
		if err := d.Wait(); err != nil {
			return err
		}
		return d.readMapped(b.buf, offset, dst)
	}
	b, err := d.buffer(db, "read", device.CopySrc)
	if err != nil {
		return err
	}
	if err := device.CheckRange(b.desc.Size, offset, uint64(len(dst))); err != nil {
		return fmt.Errorf("webgpu: read buffer %q: %w", b.desc.Label, err)
	}
	if len(dst) == 0 {
		return nil
	}
	d.copyFromMapped(b, offset, uint64(len(dst)))
	n := uint64(len(dst))
	staging, err := d.dev.TryCreateBuffer(&wgpu.BufferDescriptor{
		Label: "gpumem read-back",
		Size:  n,
		Usage: wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst,
	})
	if err != nil {
		return d.fail("create read-back buffer", err)
	}
	defer d.destroyNow(staging)
	enc, err := d.encoder()
	if err != nil {
		return err
	}
	if err := enc.TryCopyBufferToBuffer(b.buf, offset, staging, 0, n); err != nil {
		return d.fail("copy to read-back buffer", err)
	}
	d.encUsed = true
	if err := d.Wait(); err != nil {
		return err
	}
	return d.readMapped(staging, 0, dst)
}

// destroyNow destroys a buffer of the device's own that no pending work
// uses.
func (d *Device) destroyNow(b *wgpu.Buffer) {
	b.Destroy()
	b.Release()
}

// readMapped maps the MapRead buffer b (idle) and copies len(dst) bytes
// from offset into dst. mapAsync offsets are multiples of 8.
func (d *Device) readMapped(b *wgpu.Buffer, offset uint64, dst []byte) error {
	start := offset &^ (device.MapAlignment - 1)
	size := offset + uint64(len(dst)) - start
	var status wgpu.MapAsyncStatus
	if err := b.TryMapAsync(wgpu.MapModeRead, start, size, func(s wgpu.MapAsyncStatus) { status = s }); err != nil {
		return d.fail("map read-back buffer", err)
	}
	d.dev.Poll(true, nil)
	if status != wgpu.MapAsyncStatusSuccess {
		if err := b.TryUnmap(); err != nil {
			_ = d.fail("unmap", err)
		}
		d.lost = true
		return fmt.Errorf("webgpu: map read-back buffer: status %v: %w", status, device.ErrDeviceLost)
	}
	copy(dst, b.GetMappedRange(uint(start), uint(size))[offset-start:])
	if err := b.TryUnmap(); err != nil {
		return d.fail("unmap read-back buffer", err)
	}
	return nil
}
