package webgpu

import (
	"encoding/binary"
	"math"

	"github.com/gpumem/gpumem/device"
)

// hostMip computes mip level m of desc from level m-1 (prev, tightly
// packed) on the CPU, with the arithmetic device.Device.GenerateMips fixes
// and mipWGSL follows.
func hostMip(desc device.TextureDesc, m uint32, prev []byte) []byte {
	inW, inH := desc.MipSize(m - 1)
	outW, outH := desc.MipSize(m)
	bpt := desc.Format.BytesPerTexel()
	out := make([]byte, desc.MipBytes(m))
	at := func(x, y uint32) uint32 { return (min(y, inH-1)*inW + min(x, inW-1)) * bpt }
	for y := range outH {
		for x := range outW {
			a, b := at(2*x, 2*y), at(2*x+1, 2*y)
			c, e := at(2*x, 2*y+1), at(2*x+1, 2*y+1)
			o := (y*outW + x) * bpt
			switch mipKind(desc.Format) {
			case mipKind8Bit:
				for ch := range bpt {
					s := uint32(prev[a+ch]) + uint32(prev[b+ch]) + uint32(prev[c+ch]) + uint32(prev[e+ch])
					out[o+ch] = byte((s + 2) / 4)
				}
			case mipKindF32:
				f := func(i uint32) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(prev[i:])) }
				for ch := uint32(0); ch < bpt; ch += 4 {
					v := ((f(a+ch) + f(b+ch)) + (f(c+ch) + f(e+ch))) * 0.25
					binary.LittleEndian.PutUint32(out[o+ch:], math.Float32bits(v))
				}
			case mipKindF16:
				f := func(i uint32) float32 { return halfToFloat(binary.LittleEndian.Uint16(prev[i:])) }
				for ch := uint32(0); ch < bpt; ch += 2 {
					v := ((f(a+ch) + f(b+ch)) + (f(c+ch) + f(e+ch))) * 0.25
					binary.LittleEndian.PutUint16(out[o+ch:], floatToHalf(v))
				}
			}
		}
	}
	return out
}

// halfToFloat converts an IEEE half to float32 exactly.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// Subnormal half: frac * 2^-24.
		v := float32(frac) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// floatToHalf rounds f to the nearest IEEE half, ties to even.
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	frac := b & 0x7fffff
	if exp == 0xff {
		if frac != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal or zero half: shift the full mantissa into place.
		if e < -10 {
			return sign
		}
		m := frac | 0x800000
		shift := uint32(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		halfway := uint32(1) << (shift - 1)
		if rem > halfway || (rem == halfway && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | frac>>13
	rem := frac & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, up to infinity: correct
	}
	return sign | uint16(h)
}
