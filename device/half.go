package device

import "math"

// IEEE 754 binary16 ("half") conversions, for RGBA16Float texels (the mips
// of Downsample, and callers filling such textures). The standard library
// has none.

// HalfToFloat32 returns the float32 equal to the half h (exact: every half
// is a float32). O(1).
func HalfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0xff<<23 | man<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
	case man == 0: // zero
		return math.Float32frombits(sign)
	}
	// Subnormal: man * 2^-24, exact in float32.
	v := float32(man) * (1.0 / (1 << 24))
	if sign != 0 {
		v = -v
	}
	return v
}

// Float32ToHalf returns f rounded to the nearest half, ties to even;
// overflow gives infinity, NaN stays NaN (quiet).
func Float32ToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half or zero: shift the mantissa, with its implicit
		// bit, right by 14-e (at least 14) and round to nearest even.
		if e < -10 {
			return sign
		}
		m := man | 0x800000
		shift := uint32(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, up to infinity: correct
	}
	return sign | uint16(h)
}
