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

func drawIndirect(*wgpu.RenderPassEncoder, *wgpu.Buffer, uint64) {}

type expander struct{}

func newExpander(*wgpu.Device) (*expander, error) { return nil, ErrUnsupported }

func (*expander) expand(*webgpu.Device, *wgpu.CommandEncoder, device.Buffer, device.Buffer, device.Buffer, uint32) error {
	return ErrUnsupported
}

func (*expander) release() {}
