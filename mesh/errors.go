package mesh

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Errors returned by an Allocator; each comes wrapped with context. Errors
// of the slabs' arenas (arena.ErrFull, arena.ErrTooManyAllocations) and of
// the device (device.ErrOutOfMemory, device.ErrTooLarge,
// device.ErrDeviceLost, ...) come wrapped as they are, so callers test for
// them with errors.Is too.
var (
	// ErrInvalidOptions is returned by New for options that cannot work:
	// a growth factor not above 1, a minimum slab size above the maximum, a
	// negative or unknown value, or slab options the arena refuses
	// (arena.ErrInvalidOptions is wrapped too: a guard margin above 1 MiB
	// or one that leaves a slab no room).
	ErrInvalidOptions = errors.New("mesh: invalid options")

	// ErrInvalidMesh is returned by Add and Modify for mesh data the
	// allocator cannot hold: vertex bytes that are not a whole number of
	// vertices (or a zero stride with vertex bytes), index bytes that are
	// not a whole number of indices, an index format other than Uint16 or
	// Uint32, more than 2^32-1 elements, a vertex stride whose slot
	// (Layout.SlotBytes) passes 2^32 bytes, or one array larger than the
	// device's largest buffer. A mesh refused here is not staged: it never
	// reaches a Flush, so it cannot hold up other meshes' uploads.
	ErrInvalidMesh = errors.New("mesh: invalid mesh data")

	// ErrInvalidHandle is returned for a Handle that is not live in this
	// allocator: the zero Handle, or one removed already.
	ErrInvalidHandle = errors.New("mesh: invalid handle")

	// ErrNotResident is returned by Slices for a mesh whose data is staged
	// but not yet uploaded: added, or modified with new sizes, since the
	// last successful Flush.
	ErrNotResident = errors.New("mesh: not resident")
)

// errReleased is returned by every method after Release: device.ErrReleased
// (the one sentinel for use after Release) with the package's name.
var errReleased = fmt.Errorf("mesh: %w", device.ErrReleased)
