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

// deviceLimits reads dev's limits: what it was created with, which for a
// device created without required limits are WebGPU's defaults.
func deviceLimits(dev *wgpu.Device) (device.Limits, error) {
	var l C.gpumemLimits
	if C.gpumem_device_limits(rawDevice(dev), &l) == 0 {
		return device.Limits{}, fmt.Errorf("webgpu: read the device's limits: %w", device.ErrDeviceLost)
	}
	return limitsOf(wgpu.Limits{
		MaxBufferSize:                   uint64(l.maxBufferSize),
		MaxStorageBufferBindingSize:     uint64(l.maxStorageBufferBindingSize),
		MaxUniformBufferBindingSize:     uint64(l.maxUniformBufferBindingSize),
		MinUniformBufferOffsetAlignment: uint32(l.minUniformBufferOffsetAlignment),
		MinStorageBufferOffsetAlignment: uint32(l.minStorageBufferOffsetAlignment),
		MaxTextureDimension2D:           uint32(l.maxTextureDimension2D),
		MaxTextureArrayLayers:           uint32(l.maxTextureArrayLayers),
	}), nil
}
