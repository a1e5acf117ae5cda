//go:build cgo || js

package webgpu

import (
	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// Interop: a renderer binds gpumem's buffers and textures in its own
// passes, so it needs the binding's objects. Work it records on them must
// come after the work gpumem has recorded: call Submit first, then submit
// to Queue. The objects stay owned by gpumem: do not release or destroy
// them. They stay valid after the gpumem object's Release (a manager's, or
// the buffer's) until a fence marked after that Release has completed
// (see the package doc), so the frame that saw them may still submit work
// that names them; the device's own Release destroys them at once.

// Raw returns the binding's device and queue.
func (d *Device) Raw() (*wgpu.Device, *wgpu.Queue) { return d.dev, d.queue }

// RawBuffer returns the binding's buffer behind b, a buffer of d.
func (d *Device) RawBuffer(b device.Buffer) (*wgpu.Buffer, error) {
	wb, err := d.buffer(b, "raw buffer", 0)
	if err != nil {
		return nil, err
	}
	return wb.buf, nil
}

// RawTexture returns the binding's texture behind t, a texture of d.
func (d *Device) RawTexture(t device.Texture) (*wgpu.Texture, error) {
	wt, err := d.texture(t, "raw texture", 0)
	if err != nil {
		return nil, err
	}
	return wt.tex, nil
}
