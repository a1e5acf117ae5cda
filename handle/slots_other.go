//go:build !amd64 || race || purego

package handle

import "sync/atomic"

// storeSlots stores src[j] in dst[j] atomically; len(src) <= len(dst).
// (On amd64, but for race-detector and purego builds, slots_amd64.s does
// it with release stores: see there.)
func storeSlots(dst []atomic.Uint64, src []Handle) {
	for j, h := range src {
		dst[j].Store(uint64(h))
	}
}
