package handle

import (
	"math/bits"
	"sync/atomic"
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

// slotTable is the shared free list's storage. The owner writes slots and
// remote allocators read them at the same time (a reader may read a slot a
// moment before the owner rewrites it, and then fails its swap), so every
// slot is read and written atomically. Only the owner adds chunks.
type slotTable struct {
	chunks [numChunks]atomic.Pointer[[]atomic.Uint32]
}

func (t *slotTable) load(i uint32) uint32 {
	k, off := locate(i)
	return (*t.chunks[k].Load())[off].Load()
}

// store sets slot i to v, adding its chunk if needed. Owner only.
func (t *slotTable) store(i, v uint32) {
	k, off := locate(i)
	p := t.chunks[k].Load()
	if p == nil {
		c := make([]atomic.Uint32, chunkLen(k))
		p = &c
		t.chunks[k].Store(p)
	}
	(*p)[off].Store(v)
}

// genTable holds each index's current generation; an index never freed has
// generation 0 and may have no chunk yet. Only the owner writes it, with
// plain stores, and only for an index nobody else can be reading: one it
// frees (live, so on no free list) or retires. A remote allocator reads the
// generation of an index it has just popped, which the owner wrote before
// the flush that published the index: the swap on the list word orders the
// two. Chunk pointers are atomic because the owner adds chunks while remote
// allocators look up others.
type genTable struct {
	chunks [numChunks]atomic.Pointer[[]uint32]
}

func (t *genTable) get(i uint32) uint32 {
	k, off := locate(i)
	p := t.chunks[k].Load()
	if p == nil {
		return 0
	}
	return (*p)[off]
}

// set records generation g for index i. Owner only.
func (t *genTable) set(i, g uint32) {
	k, off := locate(i)
	p := t.chunks[k].Load()
	if p == nil {
		c := make([]uint32, chunkLen(k))
		p = &c
		t.chunks[k].Store(p)
	}
	(*p)[off] = g
}
