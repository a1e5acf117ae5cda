//go:build cgo || js

package webgpu

import "github.com/gpumem/gpumem/device"

// hostMip computes mip level m of desc from level m-1 (prev, tightly
// packed) on the CPU, with the arithmetic device.Device.GenerateMips fixes
// and mipWGSL follows.
func hostMip(desc device.TextureDesc, m uint32, prev []byte) []byte {
	inW, inH := desc.MipSize(m - 1)
	outW, outH := desc.MipSize(m)
	out := make([]byte, desc.MipBytes(m))
	device.Downsample(desc.Format, out, outW, outH, prev, inW, inH)
	return out
}
