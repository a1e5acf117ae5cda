package device

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestHalfRoundTrip(t *testing.T) {
	for h := range 1 << 16 {
		f := HalfToFloat32(uint16(h))
		if f != f { // NaN
			if g := Float32ToHalf(f); g&0x7c00 != 0x7c00 || g&0x3ff == 0 {
				t.Errorf("NaN %#04x came back as %#04x", h, g)
			}
			continue
		}
		if g := Float32ToHalf(f); g != uint16(h) {
			t.Errorf("%#04x -> %g -> %#04x", h, f, g)
		}
	}
}

// TestHalfRounding checks Float32ToHalf against rounding done in float64:
// the nearest half by distance, ties to the even one.
func TestHalfRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	nearest := func(f float32) uint16 {
		// Halves are monotonic in their bits for one sign: search.
		a := math.Abs(float64(f))
		lo, hi := uint16(0), uint16(0x7c00)
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if float64(HalfToFloat32(mid)) <= a {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		best := lo
		if lo < 0x7c00 {
			dl := a - float64(HalfToFloat32(lo))
			du := float64(HalfToFloat32(lo+1)) - a
			if du < dl || (du == dl && lo&1 == 1) {
				best = lo + 1
			}
		}
		if math.Signbit(float64(f)) {
			best |= 0x8000
		}
		return best
	}
	for i := range 200000 {
		var f float32
		switch i % 3 {
		case 0:
			f = math.Float32frombits(r.Uint32())
		case 1:
			f = float32(r.NormFloat64())
		default: // around the subnormal range and the top
			f = float32(math.Ldexp(r.Float64(), r.IntN(36)-26))
		}
		if f != f || math.IsInf(float64(f), 0) || math.Abs(float64(f)) > 65520 {
			continue
		}
		if got, want := Float32ToHalf(f), nearest(f); got != want {
			t.Fatalf("Float32ToHalf(%g) = %#04x, want %#04x", f, got, want)
		}
	}
	if got := Float32ToHalf(1e6); got != 0x7c00 {
		t.Errorf("overflow: %#04x", got)
	}
}
