//go:build cgo || js

package webgpu

import (
	"encoding/binary"
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// Texture is a device.Texture on a WebGPU device: a 2D texture whose depth
// is its layer count. Like its device, it is not safe for concurrent use.
type Texture struct {
	dev  *Device
	desc device.TextureDesc
	tex  *wgpu.Texture // nil after Release
}

var _ device.Texture = (*Texture)(nil)

// Desc returns the normalized descriptor the texture was created with.
func (t *Texture) Desc() device.TextureDesc { return t.desc }

// Release ends gpumem's use of the texture; it is destroyed once a fence
// marked after the call has completed, as a buffer is. It is idempotent
// and nil-safe.
func (t *Texture) Release() {
	if t == nil || t.tex == nil {
		return
	}
	t.release()
}

func (t *Texture) release() {
	d := t.dev
	delete(d.textures, t)
	if !d.released {
		d.kill(nil, t.tex, 0)
	}
	t.tex = nil
}

func wgpuFormat(f device.TextureFormat) wgpu.TextureFormat {
	switch f {
	case device.R8Unorm:
		return wgpu.TextureFormatR8Unorm
	case device.RGBA8Unorm:
		return wgpu.TextureFormatRGBA8Unorm
	case device.RGBA8UnormSrgb:
		return wgpu.TextureFormatRGBA8UnormSrgb
	case device.BGRA8Unorm:
		return wgpu.TextureFormatBGRA8Unorm
	case device.BGRA8UnormSrgb:
		return wgpu.TextureFormatBGRA8UnormSrgb
	case device.R32Float:
		return wgpu.TextureFormatR32Float
	case device.RGBA16Float:
		return wgpu.TextureFormatRGBA16Float
	case device.RGBA32Float:
		return wgpu.TextureFormatRGBA32Float
	}
	return wgpu.TextureFormatUndefined
}

// CreateTexture creates a zeroed 2D-array texture.
func (d *Device) CreateTexture(desc device.TextureDesc) (device.Texture, error) {
	desc, err := d.textureCreatable(desc)
	if err != nil {
		return nil, err
	}
	wt, oom, err := d.createTextureRaw(desc)
	return d.adoptTexture(desc, wt, oom, err)
}

// textureCreatable checks that d can create a texture of desc and
// returns desc normalized.
func (d *Device) textureCreatable(desc device.TextureDesc) (device.TextureDesc, error) {
	if err := d.usable(); err != nil {
		return desc, err
	}
	desc = desc.Normalize()
	if err := desc.Validate(d.limits); err != nil {
		return desc, fmt.Errorf("webgpu: create texture: %w", err)
	}
	return desc, nil
}

// createTextureRaw creates the binding's texture for desc (normalized),
// in an out-of-memory scope. It touches no state of d's: PrepareTexture
// calls it off the caller's goroutine.
func (d *Device) createTextureRaw(desc device.TextureDesc) (wt *wgpu.Texture, oom bool, err error) {
	oom, err = d.withOOMScope(func() (err error) {
		wt, err = d.dev.TryCreateTexture(&wgpu.TextureDescriptor{
			Label:         desc.Label,
			Usage:         wgpu.TextureUsage(desc.Usage),
			Dimension:     wgpu.TextureDimension2D,
			Size:          wgpu.Extent3D{Width: desc.Width, Height: desc.Height, DepthOrArrayLayers: desc.Layers},
			Format:        wgpuFormat(desc.Format),
			MipLevelCount: desc.Mips,
			SampleCount:   desc.Samples,
		})
		return err
	})
	return wt, oom, err
}

// adoptTexture turns createTextureRaw's result into d's Texture, or its
// error.
func (d *Device) adoptTexture(desc device.TextureDesc, wt *wgpu.Texture, oom bool, err error) (device.Texture, error) {
	if err != nil {
		return nil, d.fail(fmt.Sprintf("create texture %q", desc.Label), err)
	}
	if oom {
		destroyTexture(wt)
		return nil, fmt.Errorf("webgpu: create texture %q: %w", desc.Label, device.ErrOutOfMemory)
	}
	t := &Texture{dev: d, desc: desc, tex: wt}
	d.textures[t] = struct{}{}
	return t, nil
}

// PrepareTexture creates a texture of desc off the caller's goroutine,
// as PrepareBuffer creates a buffer (see device.PrepareTexture).
func (d *Device) PrepareTexture(desc device.TextureDesc) *device.PendingTexture {
	desc, bad := d.textureCreatable(desc)
	if !offThread || bad != nil {
		return device.CreateTextureAtTake(d, desc) // its CreateTexture says what is wrong
	}
	return prepare(d, "texture", desc.Label,
		func() (*wgpu.Texture, bool, error) { return d.createTextureRaw(desc) },
		destroyTexture,
		func(wt *wgpu.Texture, oom bool, err error) (device.Texture, error) {
			return d.adoptTexture(desc, wt, oom, err)
		})
}

// texture checks that dt is a live texture of d with the usage want.
func (d *Device) texture(dt device.Texture, role string, want device.TextureUsage) (*Texture, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	t, ok := device.UnwrapTexture(dt).(*Texture)
	if !ok || t == nil || t.dev != d {
		return nil, fmt.Errorf("webgpu: %s texture: %w", role, device.ErrInvalidObject)
	}
	if t.tex == nil {
		return nil, fmt.Errorf("webgpu: %s texture %q: %w", role, t.desc.Label, device.ErrReleased)
	}
	if !t.desc.Usage.Has(want) {
		return nil, fmt.Errorf("webgpu: %s texture %q has usage %v, needs %v: %w", role, t.desc.Label, t.desc.Usage, want, device.ErrInvalidUsage)
	}
	return t, nil
}

// singleSampled checks that t is not multisampled.
func singleSampled(t *Texture, op string) error {
	if t.desc.Samples != 1 {
		return fmt.Errorf("webgpu: %s texture %q with %d samples: %w", op, t.desc.Label, t.desc.Samples, device.ErrInvalidUsage)
	}
	return nil
}

// mipAccess checks a write or read (op) of n bytes to one layer's mip of
// dt: the texture and its usage, one sample, the layer and mip, and n
// equal to the mip's tightly packed bytes.
func (d *Device) mipAccess(dt device.Texture, op string, usage device.TextureUsage, layer, mip uint32, n int) (*Texture, error) {
	t, err := d.texture(dt, op, usage)
	if err != nil {
		return nil, err
	}
	if err := singleSampled(t, op); err != nil {
		return nil, err
	}
	if err := device.CheckSubresource(t.desc, layer, mip); err != nil {
		return nil, fmt.Errorf("webgpu: %s texture %q: %w", op, t.desc.Label, err)
	}
	if want := t.desc.MipBytes(mip); uint64(n) != want {
		return nil, fmt.Errorf("webgpu: %s texture %q: %d bytes for mip %d of %d bytes: %w", op, t.desc.Label, n, mip, want, device.ErrInvalidSize)
	}
	return t, nil
}

// WriteTexture writes one layer's mip level from tightly packed rows.
func (d *Device) WriteTexture(dt device.Texture, layer, mip uint32, data []byte) error {
	t, err := d.mipAccess(dt, "write", device.TextureCopyDst, layer, mip, len(data))
	if err != nil {
		return err
	}
	if err := d.flushRecorded(); err != nil {
		return err
	}
	w, h := t.desc.MipSize(mip)
	if err := d.writeQueueLayer(t.tex, layer, mip, w, h, w*t.desc.Format.BytesPerTexel(), data); err != nil {
		return d.fail(fmt.Sprintf("write texture %q", t.desc.Label), err)
	}
	d.queued = true
	return nil
}

// CopyBufferToTexture records a copy of one layer's mip of tex from rows
// of src; see device.Device.
func (d *Device) CopyBufferToTexture(dsrc device.Buffer, srcOffset uint64, bytesPerRow uint32, dt device.Texture, layer, mip uint32) error {
	src, err := d.buffer(dsrc, "copy source", device.CopySrc)
	if err != nil {
		return err
	}
	t, err := d.texture(dt, "copy destination", device.TextureCopyDst)
	if err != nil {
		return err
	}
	n, err := device.CheckBufferTexture(src.desc.Size, srcOffset, bytesPerRow, t.desc, layer, mip)
	if err != nil {
		return fmt.Errorf("webgpu: copy buffer %q to texture %q: %w", src.desc.Label, t.desc.Label, err)
	}
	w, h := t.desc.MipSize(mip)
	if d.texCopy.extends(src.buf, srcOffset, bytesPerRow, t.tex, layer, mip) {
		d.noteCopy(src, srcOffset, n)
		d.texCopy.layers++
		return nil
	}
	if _, err := d.copyEncoder(src, srcOffset, n); err != nil { // records the copy held back, if any
		return err
	}
	d.texCopy = pendingTexCopy{buf: src.buf, tex: t.tex, offset: srcOffset, row: bytesPerRow, width: w, rows: h, mip: mip, layer: layer, layers: 1}
	d.encUsed = true
	return nil
}

// ReadTexture submits, waits and reads one layer's mip level.
func (d *Device) ReadTexture(dt device.Texture, layer, mip uint32, dst []byte) error {
	t, err := d.mipAccess(dt, "read", device.TextureCopySrc, layer, mip, len(dst))
	if err != nil {
		return err
	}
	w, h := t.desc.MipSize(mip)
	row := t.desc.PaddedRow(mip)
	size := uint64(row) * uint64(h)
	staging, err := d.dev.TryCreateBuffer(&wgpu.BufferDescriptor{
		Label: "gpumem texture read-back",
		Size:  size,
		Usage: wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst,
	})
	if err != nil {
		return d.fail("create texture read-back buffer", err)
	}
	defer d.destroyNow(staging)
	enc, err := d.encoder()
	if err != nil {
		return err
	}
	err = enc.TryCopyTextureToBuffer(
		&wgpu.TexelCopyTextureInfo{Texture: t.tex, MipLevel: mip, Origin: wgpu.Origin3D{Z: layer}, Aspect: wgpu.TextureAspectAll},
		&wgpu.TexelCopyBufferInfo{Buffer: staging, Layout: wgpu.TexelCopyBufferLayout{BytesPerRow: row, RowsPerImage: h}},
		&wgpu.Extent3D{Width: w, Height: h, DepthOrArrayLayers: 1},
	)
	if err != nil {
		return d.fail("copy texture to read-back buffer", err)
	}
	d.encUsed = true
	if err := d.Wait(); err != nil {
		return err
	}
	padded := make([]byte, size)
	if err := d.readMapped(staging, 0, padded); err != nil {
		return err
	}
	rowBytes := uint64(w * t.desc.Format.BytesPerTexel())
	for y := range uint64(h) {
		copy(dst[y*rowBytes:(y+1)*rowBytes], padded[y*uint64(row):])
	}
	return nil
}

// CopyTextureLayer copies every mip of layer srcLayer of src to layer
// dstLayer of dst.
func (d *Device) CopyTextureLayer(dsrc device.Texture, srcLayer uint32, ddst device.Texture, dstLayer uint32) error {
	src, err := d.texture(dsrc, "copy source", device.TextureCopySrc)
	if err != nil {
		return err
	}
	dst, err := d.texture(ddst, "copy destination", device.TextureCopyDst)
	if err != nil {
		return err
	}
	s, t := src.desc, dst.desc
	if s.Format != t.Format || s.Width != t.Width || s.Height != t.Height || s.Mips != t.Mips || s.Samples != t.Samples {
		return fmt.Errorf("webgpu: copy texture %q to %q: %w", s.Label, t.Label, device.ErrIncompatible)
	}
	if err := device.CheckSubresource(s, srcLayer, 0); err != nil {
		return fmt.Errorf("webgpu: copy texture source %q: %w", s.Label, err)
	}
	if err := device.CheckSubresource(t, dstLayer, 0); err != nil {
		return fmt.Errorf("webgpu: copy texture destination %q: %w", t.Label, err)
	}
	if src == dst && srcLayer == dstLayer {
		return fmt.Errorf("webgpu: copy layer %d of texture %q onto itself: %w", srcLayer, s.Label, device.ErrInvalidUsage)
	}
	enc, err := d.encoder()
	if err != nil {
		return err
	}
	for mip := range s.Mips {
		w, h := s.MipSize(mip)
		err := enc.TryCopyTextureToTexture(
			&wgpu.TexelCopyTextureInfo{Texture: src.tex, MipLevel: mip, Origin: wgpu.Origin3D{Z: srcLayer}, Aspect: wgpu.TextureAspectAll},
			&wgpu.TexelCopyTextureInfo{Texture: dst.tex, MipLevel: mip, Origin: wgpu.Origin3D{Z: dstLayer}, Aspect: wgpu.TextureAspectAll},
			&wgpu.Extent3D{Width: w, Height: h, DepthOrArrayLayers: 1},
		)
		if err != nil {
			return d.fail("copy texture layer", err)
		}
		d.encUsed = true
	}
	return nil
}

// Mip kinds of mipWGSL.
const (
	mipKind8Bit = 0
	mipKindF32  = 1
	mipKindF16  = 2
)

func mipKind(f device.TextureFormat) uint32 {
	switch f {
	case device.R32Float, device.RGBA32Float:
		return mipKindF32
	case device.RGBA16Float:
		return mipKindF16
	}
	return mipKind8Bit
}

// GenerateMips recomputes mips 1 to Mips-1 of layer in a compute shader
// (mipWGSL): mip 0 is copied into a buffer with rows padded to 256 bytes,
// each level is computed from the one above it in that buffer, and each
// computed level is copied back into the texture.
func (d *Device) GenerateMips(dt device.Texture, layer uint32) error {
	t, err := d.texture(dt, "generate mips", device.TextureCopySrc|device.TextureCopyDst)
	if err != nil {
		return err
	}
	if err := singleSampled(t, "generate mips of"); err != nil {
		return err
	}
	if err := device.CheckSubresource(t.desc, layer, 0); err != nil {
		return fmt.Errorf("webgpu: generate mips of %q: %w", t.desc.Label, err)
	}
	desc := t.desc
	if desc.Mips == 1 {
		return nil
	}
	// Lay out every level in one buffer, each at a multiple of 256.
	offsets := make([]uint64, desc.Mips)
	total := uint64(0)
	for m := range desc.Mips {
		_, h := desc.MipSize(m)
		offsets[m] = total
		total = alignUp(total+uint64(desc.PaddedRow(m))*uint64(h), 256)
	}
	if total > d.limits.MaxStorageBufferBindingSize || total > d.limits.MaxBufferSize {
		return d.generateMipsOnHost(t, layer)
	}
	k, err := d.kernelsOrErr(mipKernel)
	if err != nil {
		return err
	}
	// One uniform block of parameters per level, 256 bytes apart (at least
	// the uniform offset alignment).
	stride := alignUp(uint64(max(d.limits.UniformOffsetAlignment, 256)), 256)
	params := make([]byte, stride*uint64(desc.Mips))
	for m := uint32(1); m < desc.Mips; m++ {
		inW, inH := desc.MipSize(m - 1)
		outW, outH := desc.MipSize(m)
		p := params[stride*uint64(m):]
		for i, v := range []uint32{
			inW, inH, outW, outH,
			desc.PaddedRow(m-1) / 4, desc.PaddedRow(m) / 4, uint32(offsets[m-1] / 4), uint32(offsets[m] / 4),
			desc.Format.BytesPerTexel(), mipKind(desc.Format), 0, 0,
		} {
			binary.LittleEndian.PutUint32(p[4*i:], v)
		}
	}
	ub, err := d.dev.TryCreateBufferInit(&wgpu.BufferInitDescriptor{
		Label:    "gpumem mip parameters",
		Contents: params,
		Usage:    wgpu.BufferUsageUniform,
	})
	if err != nil {
		return d.fail("create mip parameters", err)
	}
	d.retire(ub)
	work, err := d.dev.TryCreateBuffer(&wgpu.BufferDescriptor{
		Label: "gpumem mip levels",
		Size:  total,
		Usage: wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst,
	})
	if err != nil {
		return d.fail("create mip buffer", err)
	}
	d.retire(work)
	enc, err := d.encoder()
	if err != nil {
		return err
	}
	d.encUsed = true
	texAt := func(m uint32) *wgpu.TexelCopyTextureInfo {
		return &wgpu.TexelCopyTextureInfo{Texture: t.tex, MipLevel: m, Origin: wgpu.Origin3D{Z: layer}, Aspect: wgpu.TextureAspectAll}
	}
	bufAt := func(m uint32) *wgpu.TexelCopyBufferInfo {
		_, h := desc.MipSize(m)
		return &wgpu.TexelCopyBufferInfo{Buffer: work, Layout: wgpu.TexelCopyBufferLayout{Offset: offsets[m], BytesPerRow: desc.PaddedRow(m), RowsPerImage: h}}
	}
	extent := func(m uint32) *wgpu.Extent3D {
		w, h := desc.MipSize(m)
		return &wgpu.Extent3D{Width: w, Height: h, DepthOrArrayLayers: 1}
	}
	if err := enc.TryCopyTextureToBuffer(texAt(0), bufAt(0), extent(0)); err != nil {
		return d.fail("generate mips: copy mip 0", err)
	}
	for m := uint32(1); m < desc.Mips; m++ {
		bg, err := d.dev.TryCreateBindGroup(&wgpu.BindGroupDescriptor{
			Layout: k.mip.layout,
			Entries: []wgpu.BindGroupEntry{
				{Binding: 0, Buffer: ub, Offset: stride * uint64(m), Size: 48},
				{Binding: 1, Buffer: work, Size: wgpu.WholeSize},
			},
		})
		if err != nil {
			return d.fail("generate mips: bind group", err)
		}
		outW, outH := desc.MipSize(m)
		wordsPerRow := (outW*desc.Format.BytesPerTexel() + 3) / 4
		pass := enc.BeginComputePass(nil)
		pass.SetPipeline(k.mip.pipeline)
		pass.SetBindGroup(0, bg, nil)
		pass.DispatchWorkgroups((wordsPerRow+mipWorkgroupSize-1)/mipWorkgroupSize, outH, 1)
		err = pass.TryEnd()
		pass.Release()
		bg.Release()
		if err != nil {
			return d.fail("generate mips: compute pass", err)
		}
		if err := enc.TryCopyBufferToTexture(bufAt(m), texAt(m), extent(m)); err != nil {
			return d.fail("generate mips: copy back", err)
		}
	}
	return nil
}

// generateMipsOnHost is GenerateMips for a layer too large for one storage
// binding: it reads each level back, filters on the CPU with the same
// arithmetic, and writes the next level.
func (d *Device) generateMipsOnHost(t *Texture, layer uint32) error {
	desc := t.desc
	prev := make([]byte, desc.MipBytes(0))
	if err := d.ReadTexture(t, layer, 0, prev); err != nil {
		return err
	}
	for m := uint32(1); m < desc.Mips; m++ {
		next := hostMip(desc, m, prev)
		if err := d.WriteTexture(t, layer, m, next); err != nil {
			return err
		}
		prev = next
	}
	return nil
}
