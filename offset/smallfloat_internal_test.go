package offset

import (
	"math/rand/v2"
	"testing"
)

// The roundings must bracket every size: binSize(down(s)) <= s <= binSize(up(s)),
// with equality on both sides exactly when s is a bin bound.
func TestBinRounding(t *testing.T) {
	check := func(s uint32) {
		up, down := binRoundUp(s), binRoundDown(s)
		if up >= numBins || down >= numBins {
			t.Fatalf("size %d: bins %d %d out of range", s, up, down)
		}
		if lo := binSize(down); lo > uint64(s) || binSize(down+1) <= uint64(s) {
			t.Fatalf("size %d filed in bin %d [%d, %d)", s, down, lo, binSize(down+1))
		}
		if hi := binSize(up); hi < uint64(s) || (up > 0 && binSize(up-1) >= uint64(s)) {
			t.Fatalf("size %d looked up in bin %d (bound %d), not the smallest", s, up, hi)
		}
		if (up == down) != (binSize(up) == uint64(s)) {
			t.Fatalf("size %d: up %d down %d disagree on exactness", s, up, down)
		}
	}
	for s := uint32(0); s < 1<<16; s++ {
		check(s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 16 {
		check(r.Uint32())
	}
	for _, s := range []uint32{MaxRoundUp, MaxRoundUp + 1, 1<<32 - 1} {
		check(s)
	}
	// Both sides of every bin bound that fits in 32 bits.
	for b := uint32(0); b < numBins && binSize(b) < 1<<32; b++ {
		lo := uint32(binSize(b))
		check(lo - 1)
		check(lo)
		check(lo + 1)
	}
}

func TestBinWasteBound(t *testing.T) {
	// Each bin is at most 12.5% wider than its lower bound (denormals exact).
	for b := uint32(8); b+1 < numBins; b++ {
		lo, hi := binSize(b), binSize(b+1)
		if (hi-lo)*8 > lo {
			t.Fatalf("bin %d [%d, %d) wider than 12.5%%", b, lo, hi)
		}
	}
}
