//go:build cgo

package webgpu

/*
#include <stdint.h>
#include <stddef.h>

// The declarations of webgpu.h (wgpu-native, linked in by the binding) for
// reading a device's limits, laid out as there. The binding's
// own Device.GetLimits cannot be used: it chains a pointer to a Go
// variable instead of the C struct it allocated, and frees the Go
// variable's address.
typedef struct gpumemLimits {
	void *nextInChain;
	uint32_t maxTextureDimension1D;
	uint32_t maxTextureDimension2D;
	uint32_t maxTextureDimension3D;
	uint32_t maxTextureArrayLayers;
	uint32_t maxBindGroups;
	uint32_t maxBindGroupsPlusVertexBuffers;
	uint32_t maxBindingsPerBindGroup;
	uint32_t maxDynamicUniformBuffersPerPipelineLayout;
	uint32_t maxDynamicStorageBuffersPerPipelineLayout;
	uint32_t maxSampledTexturesPerShaderStage;
	uint32_t maxSamplersPerShaderStage;
	uint32_t maxStorageBuffersPerShaderStage;
	uint32_t maxStorageTexturesPerShaderStage;
	uint32_t maxUniformBuffersPerShaderStage;
	uint64_t maxUniformBufferBindingSize;
	uint64_t maxStorageBufferBindingSize;
	uint32_t minUniformBufferOffsetAlignment;
	uint32_t minStorageBufferOffsetAlignment;
	uint32_t maxVertexBuffers;
	uint64_t maxBufferSize;
	uint32_t maxVertexAttributes;
	uint32_t maxVertexBufferArrayStride;
	uint32_t maxInterStageShaderVariables;
	uint32_t maxColorAttachments;
	uint32_t maxColorAttachmentBytesPerSample;
	uint32_t maxComputeWorkgroupStorageSize;
	uint32_t maxComputeInvocationsPerWorkgroup;
	uint32_t maxComputeWorkgroupSizeX;
	uint32_t maxComputeWorkgroupSizeY;
	uint32_t maxComputeWorkgroupSizeZ;
	uint32_t maxComputeWorkgroupsPerDimension;
	uint32_t maxImmediateSize;
} gpumemLimits;

int wgpuDeviceGetLimits(void *device, gpumemLimits *limits);

// WGPUStatus_Success is 1.
static int gpumem_device_limits(void *device, gpumemLimits *l) {
	return wgpuDeviceGetLimits(device, l) == 1;
}
*/
import "C"

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
		opts:     opts,
		dev:      dev,
		queue:    dev.GetQueue(),
		limits:   lower(wl, opts.Limits),
		buffers:  map[*Buffer]struct{}{},
		textures: map[*Texture]struct{}{},
	}
	d.fences.init()
	return d, nil
}

// deviceLimits reads dev's limits: what it was created with, which for a
// device created without required limits are WebGPU's defaults.
func deviceLimits(dev *wgpu.Device) (device.Limits, error) {
	var l C.gpumemLimits
	if C.gpumem_device_limits(rawDevice(dev), &l) == 0 {
		return device.Limits{}, fmt.Errorf("webgpu: read the device's limits: %w", device.ErrDeviceLost)
	}
	return device.Limits{
		MaxBufferSize:               uint64(l.maxBufferSize) &^ (device.CopyAlignment - 1),
		MaxStorageBufferBindingSize: uint64(l.maxStorageBufferBindingSize) &^ (device.CopyAlignment - 1),
		MaxUniformBufferBindingSize: uint64(l.maxUniformBufferBindingSize),
		UniformOffsetAlignment:      uint32(l.minUniformBufferOffsetAlignment),
		StorageOffsetAlignment:      uint32(l.minStorageBufferOffsetAlignment),
		MaxTextureSize2D:            uint32(l.maxTextureDimension2D),
		MaxArrayLayers:              uint32(l.maxTextureArrayLayers),
		CopyAlignment:               device.CopyAlignment,
		MapAlignment:                device.MapAlignment,
	}, nil
}

// wrappedInfo is the Info of a wrapped device: wgpu-native cannot say
// which adapter a device belongs to (wgpuDeviceGetAdapterInfo panics as
// unimplemented), and the caller knows.
var wrappedInfo = AdapterInfo{Name: "the caller's device", Vendor: "unknown", Backend: "unknown", Type: "unknown"}
