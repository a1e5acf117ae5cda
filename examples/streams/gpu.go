package main

import (
	"errors"
	"fmt"
	"image"

	"github.com/oliverbestmann/webgpu/wgpu"
)

// The program's own WebGPU objects: instance, adapter and device, the
// render targets, and the read-back of the image.

// errNoAdapter is returned by openGPU when WebGPU finds no adapter.
var errNoAdapter = errors.New("no WebGPU adapter (on Linux without a GPU: apt-get install mesa-vulkan-drivers)")

// gpu is the program's WebGPU instance, adapter and device: gpumem never
// sees the first two, and never releases the device.
type gpu struct {
	instance *wgpu.Instance
	adapter  *wgpu.Adapter
	device   *wgpu.Device
}

// openGPU opens a device on the default adapter. The request names no
// surface (CompatibleSurface), so no windowing system is asked for one:
// it runs headless, on a GPU or on Mesa's software Vulkan (lavapipe).
func openGPU() (*gpu, error) {
	g := &gpu{instance: wgpu.CreateInstance(nil)}
	ad, err := g.instance.RequestAdapter(&wgpu.RequestAdapterOptions{})
	if err != nil || ad == nil {
		g.release()
		return nil, fmt.Errorf("%w: %v", errNoAdapter, err)
	}
	g.adapter = ad
	if g.device, err = ad.RequestDevice(nil); err != nil {
		g.release()
		return nil, fmt.Errorf("request a device: %w", err)
	}
	return g, nil
}

func (g *gpu) release() {
	if g.device != nil {
		g.device.Release()
	}
	if g.adapter != nil {
		g.adapter.Release()
	}
	g.instance.Release()
}

// targets are a colour and a depth texture to render into.
type targets struct {
	color, depth         *wgpu.Texture
	colorView, depthView *wgpu.TextureView
	width, height        uint32
}

func newTargets(wd *wgpu.Device, width, height uint32) (_ *targets, err error) {
	t := &targets{width: width, height: height}
	defer func() {
		if err != nil {
			t.release()
		}
	}()
	newTex := func(format wgpu.TextureFormat, usage wgpu.TextureUsage) (*wgpu.Texture, *wgpu.TextureView, error) {
		tex, err := wd.TryCreateTexture(&wgpu.TextureDescriptor{
			Size:          wgpu.Extent3D{Width: width, Height: height, DepthOrArrayLayers: 1},
			MipLevelCount: 1, SampleCount: 1, Dimension: wgpu.TextureDimension2D, Format: format, Usage: usage,
		})
		if err != nil {
			return nil, nil, err
		}
		v, err := tex.TryCreateView(nil)
		return tex, v, err
	}
	if t.color, t.colorView, err = newTex(colorFormat, wgpu.TextureUsageRenderAttachment|wgpu.TextureUsageCopySrc); err != nil {
		return nil, err
	}
	t.depth, t.depthView, err = newTex(depthFormat, wgpu.TextureUsageRenderAttachment)
	return t, err
}

func (t *targets) release() {
	for _, v := range []*wgpu.TextureView{t.colorView, t.depthView} {
		if v != nil {
			v.Release()
		}
	}
	for _, x := range []*wgpu.Texture{t.color, t.depth} {
		if x != nil {
			x.Release()
		}
	}
}

// readPixels copies the colour target to a mappable buffer and returns
// its pixels. It waits for the GPU.
func (t *targets) readPixels(wd *wgpu.Device) (*image.RGBA, error) {
	row := (t.width*4 + 255) &^ 255 // texture-to-buffer rows are 256-byte aligned
	size := uint64(row) * uint64(t.height)
	buf, err := wd.TryCreateBuffer(&wgpu.BufferDescriptor{Label: "read back", Size: size, Usage: wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst})
	if err != nil {
		return nil, err
	}
	defer buf.Release()
	enc, err := wd.TryCreateCommandEncoder(nil)
	if err != nil {
		return nil, err
	}
	defer enc.Release()
	if err := enc.TryCopyTextureToBuffer(t.color.AsImageCopy(), &wgpu.TexelCopyBufferInfo{
		Buffer: buf, Layout: wgpu.TexelCopyBufferLayout{BytesPerRow: row, RowsPerImage: t.height},
	}, &wgpu.Extent3D{Width: t.width, Height: t.height, DepthOrArrayLayers: 1}); err != nil {
		return nil, err
	}
	cb, err := enc.TryFinish(nil)
	if err != nil {
		return nil, err
	}
	q := wd.GetQueue()
	defer q.Release()
	q.Submit(cb)
	cb.Release()
	status := wgpu.MapAsyncStatus(0)
	if err := buf.TryMapAsync(wgpu.MapModeRead, 0, size, func(s wgpu.MapAsyncStatus) { status = s }); err != nil {
		return nil, err
	}
	wd.Poll(true, nil)
	if status != wgpu.MapAsyncStatusSuccess {
		return nil, fmt.Errorf("map the read-back buffer: status %v", status)
	}
	img := image.NewRGBA(image.Rect(0, 0, int(t.width), int(t.height)))
	data := buf.GetMappedRange(0, uint(size))
	for y := range int(t.height) {
		copy(img.Pix[y*img.Stride:(y+1)*img.Stride], data[y*int(row):])
	}
	return img, buf.TryUnmap()
}
