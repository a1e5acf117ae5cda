package device

import (
	"encoding/binary"
	"math"
)

// Downsample fills dst (dw x dh texels) from src (sw x sh texels), both of
// format f with tightly packed rows, with the box filter Device.GenerateMips
// defines: texel (x, y) averages source texels (2x, 2y), (2x+1, 2y),
// (2x, 2y+1), (2x+1, 2y+1), coordinates clamped to the source, with the
// arithmetic GenerateMips states per format. It is that definition in code:
// the host backend computes mips with it, and GPU backends fall back to it.
// dst and src must hold their texels. O(dw*dh); it does not allocate.
func Downsample(f TextureFormat, dst []byte, dw, dh uint32, src []byte, sw, sh uint32) {
	bpt := uint64(f.BytesPerTexel())
	at := func(x, y uint32) uint64 {
		return (uint64(min(y, sh-1))*uint64(sw) + uint64(min(x, sw-1))) * bpt
	}
	for y := range dh {
		for x := range dw {
			a, b := at(2*x, 2*y), at(2*x+1, 2*y)
			c, e := at(2*x, 2*y+1), at(2*x+1, 2*y+1)
			o := (uint64(y)*uint64(dw) + uint64(x)) * bpt
			switch f {
			case R32Float, RGBA32Float:
				for ch := uint64(0); ch < bpt; ch += 4 {
					v := avg32(f32(src[a+ch:]), f32(src[b+ch:]), f32(src[c+ch:]), f32(src[e+ch:]))
					binary.LittleEndian.PutUint32(dst[o+ch:], math.Float32bits(v))
				}
			case RGBA16Float:
				for ch := uint64(0); ch < bpt; ch += 2 {
					v := avg32(f16(src[a+ch:]), f16(src[b+ch:]), f16(src[c+ch:]), f16(src[e+ch:]))
					binary.LittleEndian.PutUint16(dst[o+ch:], Float32ToHalf(v))
				}
			default: // 8-bit channels
				for ch := range bpt {
					sum := uint32(src[a+ch]) + uint32(src[b+ch]) + uint32(src[c+ch]) + uint32(src[e+ch])
					dst[o+ch] = byte((sum + 2) / 4)
				}
			}
		}
	}
}

func avg32(a, b, c, d float32) float32 { return ((a + b) + (c + d)) * 0.25 }

func f32(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

func f16(b []byte) float32 { return HalfToFloat32(binary.LittleEndian.Uint16(b)) }
