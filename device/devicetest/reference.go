package devicetest

import (
	"encoding/binary"
	"math"

	"github.com/gpumem/gpumem/device"
)

// The reference model: what device.Device's operations must do, written
// as plainly as Go allows.

// refMove applies moves to b one by one, in order; copy is a memmove.
func refMove(b []byte, moves []device.Move) {
	for _, m := range moves {
		copy(b[m.Dst:m.Dst+m.Size], b[m.Src:m.Src+m.Size])
	}
}

// refPatch adds each delta to its little-endian word, modulo 2^32.
func refPatch(b []byte, patches []device.Patch) {
	for _, p := range patches {
		w := b[4*int(p.Index):]
		binary.LittleEndian.PutUint32(w, binary.LittleEndian.Uint32(w)+p.Delta)
	}
}

// refMip computes mip level (dw x dh texels) from the level above it
// (sw x sh), as device.Device's GenerateMips defines the box filter.
func refMip(f device.TextureFormat, src []byte, sw, sh, dw, dh uint32) []byte {
	bpt := int(f.BytesPerTexel())
	dst := make([]byte, int(dw)*int(dh)*bpt)
	texel := func(x, y uint32) []byte {
		x, y = min(x, sw-1), min(y, sh-1)
		i := (int(y)*int(sw) + int(x)) * bpt
		return src[i : i+bpt]
	}
	for y := range dh {
		for x := range dw {
			a, b, c, d := texel(2*x, 2*y), texel(2*x+1, 2*y), texel(2*x, 2*y+1), texel(2*x+1, 2*y+1)
			out := dst[(int(y)*int(dw)+int(x))*bpt:]
			switch f {
			case device.R32Float, device.RGBA32Float:
				for ch := 0; ch < bpt; ch += 4 {
					v := ((getF32(a[ch:]) + getF32(b[ch:])) + (getF32(c[ch:]) + getF32(d[ch:]))) * 0.25
					binary.LittleEndian.PutUint32(out[ch:], math.Float32bits(v))
				}
			case device.RGBA16Float:
				for ch := 0; ch < bpt; ch += 2 {
					v := ((getF16(a[ch:]) + getF16(b[ch:])) + (getF16(c[ch:]) + getF16(d[ch:]))) * 0.25
					binary.LittleEndian.PutUint16(out[ch:], toHalf(v))
				}
			default:
				for ch := range bpt {
					out[ch] = byte((int(a[ch]) + int(b[ch]) + int(c[ch]) + int(d[ch]) + 2) / 4)
				}
			}
		}
	}
	return dst
}

func getF32(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

func getF16(b []byte) float32 { return fromHalf(binary.LittleEndian.Uint16(b)) }

// fromHalf decodes an IEEE binary16 value.
func fromHalf(h uint16) float32 {
	e, m := int(h>>10&0x1f), float64(h&0x3ff)
	var v float64
	switch e {
	case 0:
		v = math.Ldexp(m, -24)
	case 0x1f:
		v = math.Inf(1)
		if m != 0 {
			v = math.NaN()
		}
	default:
		v = math.Ldexp(1+m/1024, e-15)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return float32(v)
}

// toHalf rounds v to the nearest binary16 value, ties to even, in float64
// arithmetic, where every step is exact. NaN is not handled: the suite never
// makes one.
func toHalf(v float32) uint16 {
	a := math.Abs(float64(v))
	var sign uint16
	if math.Signbit(float64(v)) {
		sign = 0x8000
	}
	switch {
	case a >= 65520: // halfway between the largest half, 65504, and 2^16
		return sign | 0x7c00
	case a < math.Ldexp(1, -14): // subnormal, in units of 2^-24
		return sign | uint16(math.RoundToEven(math.Ldexp(a, 24)))
	}
	_, exp := math.Frexp(a) // a = frac * 2^exp, frac in [0.5, 1)
	e := exp - 1
	m := math.RoundToEven((math.Ldexp(a, -e) - 1) * 1024)
	if m == 1024 {
		m, e = 0, e+1
	}
	return sign | uint16(e+15)<<10 | uint16(m)
}
