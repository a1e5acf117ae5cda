package pool

import "math/bits"

// Size classes: the small floating-point bins of the offset package, in
// units of 4 bytes, widened to 64 bits. A size of u units below 8 is its
// own class; above, the class is the top bit's position and the three bits
// after it (the mantissa), so a power of two splits into eight classes and
// a size rounds up to its class by at most 12.5%. 512 classes cover every
// 64-bit size.

const (
	mantissaBits = 3
	mantissaOne  = 1 << mantissaBits
	mantissaMask = mantissaOne - 1
	numClasses   = 512

	// fitClasses is how far above a request's class Acquire looks for an
	// idle buffer: eight classes, less than twice the request's size, so
	// reuse never more than doubles the memory a request holds.
	fitClasses = 8
)

// classOf returns the class u units round up to.
func classOf(u uint64) int {
	if u < mantissaOne {
		return int(u)
	}
	top := uint(bits.Len64(u)) - 1
	shift := top - mantissaBits
	c := int((shift+1)<<mantissaBits | uint(u>>shift)&mantissaMask)
	if u&(1<<shift-1) != 0 {
		c++ // may carry into the exponent, which is what we want
	}
	return c
}

// classBytes returns the size in bytes of class c, modulo 2^64 (the top
// classes pass 2^64; Acquire checks for the wrap).
func classBytes(c int) uint64 {
	exp, m := uint(c)>>mantissaBits, uint64(c)&mantissaMask
	if exp == 0 {
		return m * 4
	}
	return (m | mantissaOne) << (exp - 1) * 4
}

// requestClass returns the class a request of size bytes with the given
// alignment (a power of two, at least 4) is served from: the smallest
// class at least the size whose byte size is a multiple of the alignment.
// The loop runs at most eight times: the next power of two is a multiple.
// The caller bounds size and align to the device's largest buffer, and
// size+align-1 below 2^64.
func requestClass(size, align uint64) int {
	size = (size + align - 1) &^ (align - 1)
	c := classOf(size / 4)
	for classBytes(c)&(align-1) != 0 {
		c++
	}
	return c
}
