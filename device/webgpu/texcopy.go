//go:build cgo || js

package webgpu

import "github.com/oliverbestmann/webgpu/wgpu"

// Copies into textures held back. A texture array filled layer by layer
// through a staging belt (bindless pages) asks for one copy per layer,
// each from the bytes right after the previous one's; WebGPU copies any
// number of consecutive layers in one command, and each command costs
// the CPU its recording and its share of the submit. So
// CopyBufferToTexture puts its copy in the encoder only when the next
// call does not extend it: a copy into the next layer of the same mip,
// from the same buffer, rows as far apart, starting where the held copy's
// next layer would. As far as the device's books go the held copy is
// recorded (the encoder is used, the buffer's copy span noted for
// mapwrite.go); encoder and flush put it in the encoder before anything
// else is recorded or submitted, so the commands keep the order of the
// calls. The objects it names stay alive until then: a released buffer or
// texture is destroyed only after a later fence completes.

// pendingTexCopy is a copy of layers consecutive layers, from layer on,
// of mip of tex, from buf at offset with rows row bytes apart, rows rows a
// layer (the mip's height) of width texels; none when layers is 0.
type pendingTexCopy struct {
	buf                *wgpu.Buffer
	tex                *wgpu.Texture
	offset             uint64
	row                uint32
	width, rows        uint32
	mip, layer, layers uint32
}

// extends reports whether a copy into layer of mip of tex, from buf at
// offset with rows row bytes apart, continues c.
func (c *pendingTexCopy) extends(buf *wgpu.Buffer, offset uint64, row uint32, tex *wgpu.Texture, layer, mip uint32) bool {
	return c.layers > 0 && buf == c.buf && tex == c.tex && mip == c.mip && row == c.row && layer == c.layer+c.layers &&
		offset == c.offset+uint64(c.layers)*uint64(c.row)*uint64(c.rows)
}

// recordTexCopy puts the copy held back, if any, in the pending encoder.
func (d *Device) recordTexCopy() error {
	c := d.texCopy
	if c.layers == 0 {
		return nil
	}
	d.texCopy = pendingTexCopy{}
	err := d.enc.TryCopyBufferToTexture(
		&wgpu.TexelCopyBufferInfo{Buffer: c.buf, Layout: wgpu.TexelCopyBufferLayout{Offset: c.offset, BytesPerRow: c.row, RowsPerImage: c.rows}},
		&wgpu.TexelCopyTextureInfo{Texture: c.tex, MipLevel: c.mip, Origin: wgpu.Origin3D{Z: c.layer}, Aspect: wgpu.TextureAspectAll},
		&wgpu.Extent3D{Width: c.width, Height: c.rows, DepthOrArrayLayers: c.layers},
	)
	if err != nil {
		return d.fail("copy buffer to texture", err)
	}
	d.texCopies++
	return nil
}
