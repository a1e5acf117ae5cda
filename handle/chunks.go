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

// slotTable is a stripe's storage: each slot holds a freed Handle, its
// generation already the next one. The owner writes slots and remote
// allocators read them at the same time (a reader may read a slot a moment
// before the owner rewrites it, and then fails its swap), so every slot is
// read and written atomically. Only the owner writes slots and adds chunks.
type slotTable struct {
	chunks [numChunks]atomic.Pointer[atomic.Uint64] // each chunk's first slot
}

// load returns slot i. Its chunk must exist: it does for every slot below
// a length the stripe's word has held, as the owner writes a slot before
// it publishes it.
func (t *slotTable) load(i uint32) Handle {
	k, off := locate(i)
	// off < chunkLen(k), the length of chunk k (see TestLocate).
	return Handle((*atomic.Uint64)(unsafe.Add(unsafe.Pointer(t.chunks[k].Load()), uintptr(off)*8)).Load())
}

// store sets slot i to h, adding its chunk if needed. Owner only.
func (t *slotTable) store(i uint32, h Handle) {
	k, off := locate(i)
	t.chunk(k)[off].Store(uint64(h))
}

// storeRun sets slots i, i+1, ... to hs, looking each chunk up once.
// Owner only.
func (t *slotTable) storeRun(i uint32, hs []Handle) {
	for len(hs) > 0 {
		k, off := locate(i)
		c := t.chunk(k)[off:]
		n := min(len(c), len(hs))
		for j, h := range hs[:n] {
			c[j].Store(uint64(h))
		}
		hs = hs[n:]
		i += uint32(n)
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
