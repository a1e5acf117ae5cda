//go:build js

package multidraw

import (
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// The binding's js side has no indirect draws: the browser draws Direct.

func best(*wgpu.Device) Mode { return Direct }

func multiDraw(*wgpu.RenderPassEncoder, *wgpu.Buffer, uint64, uint32) {}

func multiDrawCount(*wgpu.RenderPassEncoder, *wgpu.Buffer, uint64, *wgpu.Buffer, uint64, uint32) {}

func drawIndirect(*wgpu.RenderPassEncoder, *wgpu.Buffer, uint64) {}

func clearBuffer(*webgpu.Device, *wgpu.CommandEncoder, device.Buffer, uint64) error {
	return ErrUnsupported
}

type kernels struct{}

func newKernels(*wgpu.Device) (*kernels, error) { return nil, ErrUnsupported }

func (*kernels) expand(*webgpu.Device, *wgpu.CommandEncoder, uint32, device.Buffer, device.Buffer, device.Buffer) error {
	return ErrUnsupported
}

func (*kernels) cull(*webgpu.Device, *wgpu.CommandEncoder, uint32, device.Buffer, device.Buffer, device.Buffer, device.Buffer, device.Buffer) error {
	return ErrUnsupported
}

func (*kernels) compact(*webgpu.Device, *wgpu.CommandEncoder, uint32, device.Buffer, device.Buffer, device.Buffer, device.Buffer, device.Buffer, device.Buffer) error {
	return ErrUnsupported
}

func (*kernels) release() {}
