//go:build cgo || js

package webgpu

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCopyMapped copies sizes around the split's thresholds (below it,
// at it, parts that do not divide evenly) into a longer dst filled with
// garbage: every byte of src arrives, and nothing past it is written.
func TestCopyMapped(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, parallelCopyMin - 1, parallelCopyMin, parallelCopyMin + 3, 3*parallelCopyMin + 129, 5<<20 + 7} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		dst := bytes.Repeat([]byte{0xAB}, n+100)
		copyMapped(dst, src)
		if !bytes.Equal(dst[:n], src) {
			t.Fatalf("%d bytes: the copy differs", n)
		}
		if !bytes.Equal(dst[n:], bytes.Repeat([]byte{0xAB}, 100)) {
			t.Fatalf("%d bytes: bytes past the copy were written", n)
		}
	}
}
