package handle

import "errors"

// Errors returned by an Owner and its Remote allocators; each comes wrapped
// with context, so test for them with errors.Is.
var (
	// ErrStale is returned by Owner.Free and Owner.FreeMany for a Handle
	// that is not live: freed already (and maybe reused since), never
	// issued, or the zero Handle.
	ErrStale = errors.New("handle: stale handle")

	// ErrReleased is returned by every allocation and free after Owner.Release,
	// by the owner and by its remote allocators alike. It is handle's own,
	// not device.ErrReleased: handle sits below device and knows nothing
	// of devices. A manager built on an Owner reports its own release as
	// device.ErrReleased.
	ErrReleased = errors.New("handle: owner released")

	// ErrExhausted is returned by an allocation when every one of the
	// 2^32-1 indices has been issued and none is free to reuse.
	ErrExhausted = errors.New("handle: indices exhausted")
)
