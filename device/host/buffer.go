package host

import "github.com/gpumem/gpumem/device"

// Buffer is a host device's buffer: desc.Size bytes of Go memory. Like
// its device, it is not safe for concurrent use.
//
// Invariant: data is nil exactly when the buffer is released, and then the
// buffer is not in its device's set of live buffers.
type Buffer struct {
	dev  *Device
	desc device.BufferDesc
	data []byte
}

var _ device.Buffer = (*Buffer)(nil)

// Desc returns the descriptor the buffer was created with.
func (b *Buffer) Desc() device.BufferDesc { return b.desc }

// Size returns the buffer's size in bytes.
func (b *Buffer) Size() uint64 { return b.desc.Size }

// Release frees the buffer's memory at once (host work is never pending).
// It is idempotent and safe on a nil *Buffer.
func (b *Buffer) Release() {
	if b == nil || b.data == nil {
		return
	}
	b.data = nil
	d := b.dev
	delete(d.buffers, b)
	d.stats.Buffers--
	d.stats.Bytes -= b.desc.Size
}
