package handle

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

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

// slotTable is a stripe's storage: position p of the stack holds a freed
// index, in half p%2 of word p/2 (the low half for even p), two indices a
// word so that a flush makes one atomic store for two frees. The owner
// writes words and remote allocators read them at the same time (a reader
// may read a word a moment before the owner rewrites it, and then fails its
// swap), so every word is read and written atomically. Only the owner
// writes and adds chunks.
type slotTable struct {
	chunks [numChunks]atomic.Pointer[atomic.Uint64] // each chunk's first word
}

// word returns the word holding position p. The chunk must exist: it does
// for every position below a length the word of the stripe has held, as
// the owner writes a position before it publishes it.
func (t *slotTable) word(p uint32) *atomic.Uint64 {
	k, off := locate(p >> 1)
	// off < chunkLen(k), the length of chunk k (see TestLocate).
	return (*atomic.Uint64)(unsafe.Add(unsafe.Pointer(t.chunks[k].Load()), uintptr(off)*8))
}

// load returns the index at position p.
func (t *slotTable) load(p uint32) uint32 {
	return uint32(t.word(p).Load() >> (p & 1 * 32))
}

// store sets position p to index i, keeping the other half of its word.
// Owner only.
func (t *slotTable) store(p, i uint32) {
	k, off := locate(p >> 1)
	w := &t.chunk(k)[off]
	shift := p & 1 * 32
	w.Store(w.Load()&^(lenMask<<shift) | uint64(i)<<shift)
}

// storeRun sets positions p, p+1, ... to the indices of hs: one store for
// each word, looking each chunk up once. The position after the last is
// free to overwrite: it lies past the top. Owner only.
func (t *slotTable) storeRun(p uint32, hs []Handle) {
	if len(hs) > 0 && p&1 == 1 {
		t.store(p, hs[0].Index())
		p, hs = p+1, hs[1:]
	}
	for len(hs) > 0 {
		k, off := locate(p >> 1)
		c := t.chunk(k)[off:]
		n := min(len(c), (len(hs)+1)/2) // words to write in this chunk
		for j := range n {
			lo := uint64(hs[2*j].Index())
			if 2*j+1 < len(hs) {
				lo |= uint64(hs[2*j+1].Index()) << 32
			}
			c[j].Store(lo)
		}
		m := min(2*n, len(hs))
		hs = hs[m:]
		p += uint32(m)
	}
}

// chunk returns chunk k, adding it if needed. Owner only.
func (t *slotTable) chunk(k uint32) []atomic.Uint64 {
	if p := t.chunks[k].Load(); p != nil {
		return unsafe.Slice(p, chunkLen(k))
	}
	c := make([]atomic.Uint64, chunkLen(k))
	t.chunks[k].Store(&c[0])
	return c
}
