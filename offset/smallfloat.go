package offset

import "math/bits"

// Bin sizes form a tiny floating-point format: a 5-bit exponent and a 3-bit
// mantissa with a hidden leading one, so bin i covers sizes from binSize(i)
// up to binSize(i+1)-1 and every bin is at most 12.5% wider than its lower
// bound. Sizes below 8 are denormals and get exact bins of their own.
//
// A request is looked up in the bin its size rounds UP to, so any region
// filed in that bin or above is large enough. A free region is filed in the
// bin its size rounds DOWN to, so a region is never filed above what it can
// serve. Together the two roundings make the first non-empty bin at or above
// a request's bin a guaranteed fit — at the cost of missing fits that sit in
// the bin just below (see Fit).

const (
	mantissaBits  = 3
	mantissaValue = 1 << mantissaBits
	mantissaMask  = mantissaValue - 1

	numTopBins  = 32
	binsPerLeaf = 8
	topBinShift = 3
	leafBinMask = binsPerLeaf - 1
	numBins     = numTopBins * binsPerLeaf
)

// binRoundUp returns the smallest bin whose lower bound is at least size.
func binRoundUp(size uint32) uint32 {
	b, exact := bin(size)
	if !exact {
		b++ // may carry into the exponent, which is what we want
	}
	return b
}

// binRoundDown returns the largest bin whose lower bound is at most size.
func binRoundDown(size uint32) uint32 {
	b, _ := bin(size)
	return b
}

// bin returns the bin size rounds down to, and whether size is exactly
// that bin's lower bound. With shift the number of bits below the three
// mantissa bits, size>>shift is the mantissa with its hidden leading one
// (8 to 15), so the bin, exponent<<3 | mantissa with exponent shift+1, is
// shift<<3 + size>>shift. Below 16, shift is 0 and the bin is size itself.
func bin(size uint32) (b uint32, exact bool) {
	shift := uint32(max(bits.Len32(size), mantissaBits+1) - (mantissaBits + 1))
	return shift<<mantissaBits + size>>shift, size&(1<<shift-1) == 0
}

// binSize returns the lower bound of bin b, as a 64-bit value because the
// top bins' bounds do not fit in 32 bits.
func binSize(b uint32) uint64 {
	exp := b >> mantissaBits
	mantissa := uint64(b & mantissaMask)
	if exp == 0 {
		return mantissa
	}
	return (mantissa | mantissaValue) << (exp - 1)
}

// MaxRoundUp is the largest size RoundUp can round: sizes above it round to
// a bin bound that does not fit in 32 bits.
const MaxRoundUp = 0xF000_0000

// RoundUp returns the size a request of size units is served from: the lower
// bound of the bin the request is looked up in. An allocation of the rounded
// size consumes a free region of its bin whole when the region is exactly
// that size, leaving no splinter behind. The waste is below 12.5% of the
// rounded size, 6.25% on average for uniformly spread sizes. It reports false
// for sizes above MaxRoundUp. RoundUp(0) is 0. O(1), no allocation.
func RoundUp(size uint32) (uint32, bool) {
	if size > MaxRoundUp {
		return 0, false
	}
	return uint32(binSize(binRoundUp(size))), true
}
