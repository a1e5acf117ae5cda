//go:build cgo || js

package webgpu

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// Wrap makes a gpumem device of the caller's WebGPU device: the device a
// renderer already renders with, so that gpumem's buffers and textures are
// ones it can bind. gpumem records and submits on dev's queue and takes its
// limits from dev. The environment (GPUMEM_WEBGPU_*) plays no part.
//
// The caller keeps owning dev: Release frees what gpumem created (buffers,
// textures, pipelines, scratch, encoders, fences) and never releases dev,
// its queue, adapter or instance. dev must outlive the returned Device, and
// may be wrapped again, at the same time or after a Release. See the
// package documentation for the order in which gpumem's work and the
// renderer's reach the queue.
func Wrap(dev *wgpu.Device) (*Device, error) {
	return WrapOptions(dev, Options{})
}

// WrapOptions is Wrap with options: Moves, Label and Limits apply; the
// adapter's options (Backend, Power, Fallback, AdapterLimits) choose an
// adapter, which a wrapped device already has, and are refused.
func WrapOptions(dev *wgpu.Device, opts Options) (*Device, error) {
	if !dev.IsValid() {
		return nil, fmt.Errorf("webgpu: wrap: nil or released device: %w", device.ErrInvalidObject)
	}
	if opts.Backend != "" || opts.Power != "" || opts.Fallback || opts.AdapterLimits {
		return nil, fmt.Errorf("webgpu: wrap: Backend, Power, Fallback and AdapterLimits choose an adapter; a wrapped device has one: %w", device.ErrInvalidDescriptor)
	}
	d, err := attach(dev, opts)
	if err != nil {
		return nil, err
	}
	d.info = wrappedInfo
	return d, nil
}

// attach returns a Device on dev. It takes a queue reference of its own;
// the caller decides whether dev itself is the Device's to release.
func attach(dev *wgpu.Device, opts Options) (*Device, error) {
	wl, err := deviceLimits(dev)
	if err != nil {
		return nil, err
	}
	d := &Device{
		opts:      opts,
		dev:       dev,
		queue:     dev.GetQueue(),
		limits:    lower(wl, opts.Limits),
		buffers:   map[*Buffer]struct{}{},
		textures:  map[*Texture]struct{}{},
		preparing: map[*preparing]struct{}{},
	}
	if !computeMoves {
		if opts.Moves == MoveCompute {
			return nil, fmt.Errorf("webgpu: Moves: MoveCompute: the move kernels bind a buffer twice as writable storage, which this platform refuses: %w", device.ErrInvalidDescriptor)
		}
		d.noCompute = true
	}
	d.fences.init(d)
	d.timer = newTimer(d)
	d.precompile()
	return d, nil
}

// limitsOf converts the binding's limits to gpumem's: sizes rounded down
// to the copy alignment, so that a buffer of MaxBufferSize can be copied
// whole.
func limitsOf(l wgpu.Limits) device.Limits {
	return device.Limits{
		MaxBufferSize:               l.MaxBufferSize &^ (device.CopyAlignment - 1),
		MaxStorageBufferBindingSize: l.MaxStorageBufferBindingSize &^ (device.CopyAlignment - 1),
		MaxUniformBufferBindingSize: l.MaxUniformBufferBindingSize,
		UniformOffsetAlignment:      l.MinUniformBufferOffsetAlignment,
		StorageOffsetAlignment:      l.MinStorageBufferOffsetAlignment,
		MaxTextureSize2D:            l.MaxTextureDimension2D,
		MaxArrayLayers:              l.MaxTextureArrayLayers,
		CopyAlignment:               device.CopyAlignment,
		MapAlignment:                device.MapAlignment,
	}
}

// wrappedInfo is the Info of a wrapped device: wgpu-native cannot say
// which adapter a device belongs to (wgpuDeviceGetAdapterInfo panics as
// unimplemented), and the caller knows.
var wrappedInfo = AdapterInfo{Name: "the caller's device", Vendor: "unknown", Backend: "unknown", Type: "unknown"}
