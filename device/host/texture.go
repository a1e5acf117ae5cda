package host

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Texture is a host device's 2D-array texture: one byte slice holding every
// layer, each layer its mips in order, each mip tightly packed rows.
//
// Invariants: data is nil exactly when the texture is released;
// len(data) == layerBytes*desc.Layers*desc.Samples; mipOffset[m] is the
// offset of mip m within a layer.
//
// Like its device, a Texture is not safe for concurrent use.
type Texture struct {
	dev        *Device
	desc       device.TextureDesc
	data       []byte
	layerBytes uint64
	mipOffset  []uint64
}

var _ device.Texture = (*Texture)(nil)

// Desc returns the normalized descriptor the texture was created with.
func (t *Texture) Desc() device.TextureDesc { return t.desc }

// Release frees the texture's memory at once. It is idempotent and safe on
// a nil *Texture.
func (t *Texture) Release() {
	if t == nil || t.data == nil {
		return
	}
	d := t.dev
	d.stats.Bytes -= uint64(len(t.data))
	t.data = nil
	delete(d.textures, t)
	d.stats.Textures--
}

// mip returns the bytes of one layer's mip. layer and mip must exist.
func (t *Texture) mip(layer, mip uint32) []byte {
	off := uint64(layer)*t.layerBytes + t.mipOffset[mip]
	return t.data[off : off+t.desc.MipBytes(mip)]
}

// CreateTexture creates a zeroed texture; see device.Device. It allocates
// the texture's memory: TextureDesc.LayerBytes times layers times samples.
func (d *Device) CreateTexture(desc device.TextureDesc) (device.Texture, error) {
	const op = "CreateTexture"
	if err := d.usable(op); err != nil {
		return nil, err
	}
	desc = desc.Normalize()
	if err := desc.Validate(d.limits); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	t := &Texture{dev: d, desc: desc, mipOffset: make([]uint64, desc.Mips)}
	for m := range desc.Mips {
		t.mipOffset[m] = t.layerBytes
		t.layerBytes += desc.MipBytes(m)
	}
	size := t.layerBytes * uint64(desc.Layers) * uint64(desc.Samples)
	if err := d.allocate(op, desc.Label, size); err != nil {
		return nil, err
	}
	t.data = make([]byte, size)
	d.textures[t] = struct{}{}
	d.stats.Textures++
	return t, nil
}

// subresource resolves t for op and checks that layer and mip exist, that
// it has one sample, and that n is the mip's size.
func (d *Device) subresource(op string, tex device.Texture, need device.TextureUsage, layer, mip uint32, n int) (*Texture, error) {
	t, err := d.texture(op, "", tex, need)
	if err != nil {
		return nil, err
	}
	if t.desc.Samples != 1 {
		return nil, fmt.Errorf("%s %q: multisampled: %w", op, t.desc.Label, device.ErrInvalidUsage)
	}
	if err := device.CheckSubresource(t.desc, layer, mip); err != nil {
		return nil, fmt.Errorf("%s %q: %w", op, t.desc.Label, err)
	}
	if want := t.desc.MipBytes(mip); uint64(n) != want {
		return nil, fmt.Errorf("%s %q: %d bytes for mip %d of %d bytes: %w", op, t.desc.Label, n, mip, want, device.ErrInvalidSize)
	}
	return t, nil
}

// WriteTexture writes one layer's mip; see device.Device.
func (d *Device) WriteTexture(tex device.Texture, layer, mip uint32, data []byte) error {
	const op = "WriteTexture"
	if err := d.usable(op); err != nil {
		return err
	}
	t, err := d.subresource(op, tex, device.TextureCopyDst, layer, mip, len(data))
	if err != nil {
		return err
	}
	copy(t.mip(layer, mip), data)
	d.stats.Writes++
	d.stats.WriteBytes += uint64(len(data))
	return nil
}

// ReadTexture reads one layer's mip into dst; see device.Device.
func (d *Device) ReadTexture(tex device.Texture, layer, mip uint32, dst []byte) error {
	const op = "ReadTexture"
	if err := d.usable(op); err != nil {
		return err
	}
	t, err := d.subresource(op, tex, device.TextureCopySrc, layer, mip, len(dst))
	if err != nil {
		return err
	}
	copy(dst, t.mip(layer, mip))
	return nil
}

// CopyTextureLayer copies one layer with all its mips; see device.Device.
func (d *Device) CopyTextureLayer(src device.Texture, srcLayer uint32, dst device.Texture, dstLayer uint32) error {
	const op = "CopyTextureLayer"
	if err := d.usable(op); err != nil {
		return err
	}
	s, err := d.texture(op, "source", src, device.TextureCopySrc)
	if err != nil {
		return err
	}
	t, err := d.texture(op, "destination", dst, device.TextureCopyDst)
	if err != nil {
		return err
	}
	sd, td := s.desc, t.desc
	if sd.Format != td.Format || sd.Width != td.Width || sd.Height != td.Height || sd.Mips != td.Mips || sd.Samples != td.Samples {
		return fmt.Errorf("%s %q (%v %dx%d, %d mips, %d samples) to %q (%v %dx%d, %d mips, %d samples): %w", op,
			sd.Label, sd.Format, sd.Width, sd.Height, sd.Mips, sd.Samples,
			td.Label, td.Format, td.Width, td.Height, td.Mips, td.Samples, device.ErrIncompatible)
	}
	if err := device.CheckSubresource(sd, srcLayer, 0); err != nil {
		return fmt.Errorf("%s source %q: %w", op, sd.Label, err)
	}
	if err := device.CheckSubresource(td, dstLayer, 0); err != nil {
		return fmt.Errorf("%s destination %q: %w", op, td.Label, err)
	}
	if s == t && srcLayer == dstLayer {
		return fmt.Errorf("%s %q: layer %d onto itself: %w", op, sd.Label, srcLayer, device.ErrInvalidUsage)
	}
	// A layer of a multisampled texture holds all its samples; Layers is 1.
	n := s.layerBytes * uint64(sd.Samples)
	copy(t.data[uint64(dstLayer)*n:][:n], s.data[uint64(srcLayer)*n:][:n])
	d.stats.Copies++
	d.stats.CopyBytes += n
	return nil
}

// GenerateMips recomputes a layer's mips with device.Device's box filter.
func (d *Device) GenerateMips(tex device.Texture, layer uint32) error {
	const op = "GenerateMips"
	if err := d.usable(op); err != nil {
		return err
	}
	t, err := d.texture(op, "", tex, device.TextureCopySrc|device.TextureCopyDst)
	if err != nil {
		return err
	}
	if t.desc.Samples != 1 {
		return fmt.Errorf("%s %q: multisampled: %w", op, t.desc.Label, device.ErrInvalidUsage)
	}
	if err := device.CheckSubresource(t.desc, layer, 0); err != nil {
		return fmt.Errorf("%s %q: %w", op, t.desc.Label, err)
	}
	for m := uint32(1); m < t.desc.Mips; m++ {
		sw, sh := t.desc.MipSize(m - 1)
		dw, dh := t.desc.MipSize(m)
		device.Downsample(t.desc.Format, t.mip(layer, m), dw, dh, t.mip(layer, m-1), sw, sh)
	}
	return nil
}

// CopyBufferToTexture copies one layer's mip from rows of a buffer; see
// device.Device.
func (d *Device) CopyBufferToTexture(src device.Buffer, srcOffset uint64, bytesPerRow uint32, tex device.Texture, layer, mip uint32) error {
	const op = "CopyBufferToTexture"
	if err := d.usable(op); err != nil {
		return err
	}
	s, err := d.buffer(op, "source", src, device.CopySrc)
	if err != nil {
		return err
	}
	t, err := d.texture(op, "destination", tex, device.TextureCopyDst)
	if err != nil {
		return err
	}
	if _, err := device.CheckBufferTexture(s.desc.Size, srcOffset, bytesPerRow, t.desc, layer, mip); err != nil {
		return fmt.Errorf("%s %q to %q: %w", op, s.desc.Label, t.desc.Label, err)
	}
	dst := t.mip(layer, mip)
	w, _ := t.desc.MipSize(mip)
	row := uint64(w) * uint64(t.desc.Format.BytesPerTexel())
	for at := uint64(0); at < uint64(len(dst)); at += row {
		copy(dst[at:at+row], s.data[srcOffset:])
		srcOffset += uint64(bytesPerRow)
	}
	d.stats.Copies++
	d.stats.CopyBytes += uint64(len(dst))
	return nil
}
