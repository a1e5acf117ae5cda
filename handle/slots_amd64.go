//go:build amd64 && !race && !purego

package handle

import "sync/atomic"

// storeSlots stores src[j] in dst[j], as dst[j].Store would, but with
// release ordering rather than sequential consistency: on amd64 an aligned
// 8-byte MOV is an atomic store, and the processor makes stores visible in
// program order, so every load that sees a slot's new value sees the
// stores before it. That is all the free list needs: its slots are
// published by the swap that raises a stripe's tail, itself sequentially
// consistent. sync/atomic's Store is an XCHG, a locked instruction that
// waits for its cache line before the next store may start; a flush
// writes into lines the allocators last read, and plain stores let those
// fetches overlap. len(src) <= len(dst). Implemented in slots_amd64.s.
//
//go:noescape
func storeSlots(dst []atomic.Uint64, src []Handle)
