package meshlet

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/handle"
)

// Remote reserves batch handles from any goroutine, without a lock, while
// the goroutine that owns the Manager keeps working: a loader decodes a
// batch, reserves its handle, wires the handle into its scene, and hands
// the batch to the owner, which places it with AddReserved. The handle
// table is package handle's (the pattern of an ECS's remote entity
// reservation): a reservation reuses a handle the manager removed and
// published (Sweep publishes them, and any Remove once 256 wait) with one
// compare-and-swap, or takes a fresh one.
//
// Remote methods are safe for concurrent use with each other and with
// every Manager method. Make one Remote per loading goroutine: each pops
// its own stripe of the free list.
type Remote struct {
	r handle.Remote
}

// Remote returns a Remote of m's handles.
func (m *Manager) Remote() Remote { return Remote{m.ids.Remote()} }

// Reserve returns a handle for a batch not added yet: live (Remove ends
// it), reported ErrNotAdded by Lookup and Clone until AddReserved places
// a batch under it. It fails once the manager is released
// (device.ErrReleased), or when every handle is taken (handle.ErrExhausted).
// Lock-free; O(1) but for the retries of a contended swap; no allocation.
func (r Remote) Reserve() (BatchHandle, error) {
	h, err := r.r.Allocate()
	if err != nil {
		if errors.Is(err, handle.ErrReleased) {
			err = errReleased // handle's sentinel is below devices; report the one above
		}
		return BatchHandle{}, fmt.Errorf("meshlet: reserve: %w", err)
	}
	return BatchHandle{h}, nil
}
