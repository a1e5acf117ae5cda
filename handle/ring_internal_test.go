package handle

import (
	"sync/atomic"
	"testing"
)

// TestRingStoreMany stores runs at every start position of a small ring,
// wrapping round its end, and checks each slot: storeMany's split and, on
// amd64, storeSlots' assembly.
func TestRingStoreMany(t *testing.T) {
	const size = 8
	for p := uint32(0); p < 2*size; p++ {
		for n := 0; n <= size; n++ {
			r := &ring{mask: size - 1, slots: make([]atomic.Uint64, size)}
			hs := make([]Handle, n)
			for j := range hs {
				hs[j] = Pack(uint32(100+j), uint32(j))
			}
			r.storeMany(p, hs)
			for j := range size {
				want := Handle(0)
				if off := (uint32(j) - p) % size; int(off) < n {
					want = hs[off]
				}
				if got := r.load(uint32(j)); got != want {
					t.Fatalf("p=%d n=%d: slot %d = %v, want %v", p, n, j, got, want)
				}
			}
		}
	}
}
