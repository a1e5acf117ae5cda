//go:build js

package webgpu

import (
	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// deviceLimits reads dev's limits from GPUDevice.limits: what it was
// created with, which for a device created without required limits are
// WebGPU's defaults.
func deviceLimits(dev *wgpu.Device) (device.Limits, error) {
	return limitsOf(dev.GetLimits()), nil
}
