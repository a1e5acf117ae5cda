//go:build !js

package main

import (
	"errors"
	"fmt"
	"image"
	"os"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
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
// surface, and Mesa's device-select Vulkan layer is off unless the
// environment says otherwise (NODEVICE_SELECT): that layer asks the
// display servers which GPU shows the screen, and without a login session
// libwayland complains at each request. The program has no screen, and
// WebGPU chooses among the adapters on its own.
func openGPU() (*gpu, error) {
	if _, set := os.LookupEnv("NODEVICE_SELECT"); !set {
		os.Setenv("NODEVICE_SELECT", "1")
	}
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

// targets are a colour and a depth texture to render into. The colour
// target is a texture of gpumem's device, so that gpumem reads it back.
type targets struct {
	dev                  *webgpu.Device
	color                device.Texture
	depth                *wgpu.Texture
	colorView, depthView *wgpu.TextureView
	width, height        uint32
}

func newTargets(dev *webgpu.Device, width, height uint32) (_ *targets, err error) {
	t := &targets{dev: dev, width: width, height: height}
	defer func() {
		if err != nil {
			t.release()
		}
	}()
	if t.color, err = dev.CreateTexture(device.TextureDesc{Label: "streams target", Format: device.RGBA8Unorm,
		Width: width, Height: height, Layers: 1, Mips: 1, Samples: 1,
		Usage: device.TextureRenderAttachment | device.TextureCopySrc}); err != nil {
		return nil, err
	}
	raw, err := dev.RawTexture(t.color)
	if err != nil {
		return nil, err
	}
	if t.colorView, err = raw.TryCreateView(nil); err != nil {
		return nil, err
	}
	wd, _ := dev.Raw()
	if t.depth, err = wd.TryCreateTexture(&wgpu.TextureDescriptor{Label: "streams depth",
		Size:          wgpu.Extent3D{Width: width, Height: height, DepthOrArrayLayers: 1},
		MipLevelCount: 1, SampleCount: 1, Dimension: wgpu.TextureDimension2D,
		Format: depthFormat, Usage: wgpu.TextureUsageRenderAttachment,
	}); err != nil {
		return nil, err
	}
	t.depthView, err = t.depth.TryCreateView(nil)
	return t, err
}

func (t *targets) release() {
	for _, v := range []*wgpu.TextureView{t.colorView, t.depthView} {
		if v != nil {
			v.Release()
		}
	}
	if t.depth != nil {
		t.depth.Release()
	}
	if t.color != nil {
		t.color.Release()
	}
}

// readPixels returns the colour target's pixels. It waits for the GPU.
func (t *targets) readPixels() (*image.RGBA, error) {
	img := image.NewRGBA(image.Rect(0, 0, int(t.width), int(t.height)))
	return img, t.dev.ReadTexture(t.color, 0, 0, img.Pix)
}
