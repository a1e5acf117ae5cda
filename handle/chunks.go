package handle

import "math/bits"

// Storage that grows by whole chunks which never move, indexed by a 32-bit
// index: chunk 0 holds indices [0, 1024), chunk k >= 1 holds
// [2^(k+9), 2^(k+10)). A reader holding a chunk keeps reading valid memory
// however far the storage grows, and the lookup is a bit scan.

const (
	chunk0Bits = 10                  // chunk 0 holds 2^chunk0Bits entries
	numChunks  = 32 - chunk0Bits + 1 // enough for every 32-bit index
)

// locate returns the chunk holding index i and i's offset in it.
func locate(i uint32) (chunk, off uint32) {
	n := uint32(bits.Len32(i))
	if n <= chunk0Bits {
		return 0, i
	}
	return n - chunk0Bits, i &^ (1 << (n - 1))
}

// chunkLen returns how many entries chunk k holds.
func chunkLen(k uint32) int {
	if k == 0 {
		return 1 << chunk0Bits
	}
	return 1 << (k + chunk0Bits - 1)
}
