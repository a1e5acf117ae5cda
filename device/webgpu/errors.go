//go:build cgo || js

package webgpu

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/gpumem/gpumem/device"
)

// Errors from wgpu-native come back from the binding's Try calls as text.
// fail turns one into a device sentinel.
//
// A workaround lives here too. The binding keeps the object that collects a
// Try call's error in a sync.Pool and never clears its error field: once one
// Try call has failed, a later call that draws the same object from the pool
// reports the old error although it succeeded (TryCreateBuffer then even
// releases the buffer it made). Two garbage collections empty every
// sync.Pool, so after each failure fail runs them; the next Try call gets a
// clean object. Failures are rare (every call is validated before it reaches
// wgpu), so the cost does not matter.

// fail maps a wgpu error to a device error, with context, and clears the
// binding's poisoned error state.
func (d *Device) fail(context string, err error) error {
	runtime.GC()
	runtime.GC()
	msg := err.Error()
	low := strings.ToLower(msg)
	var sentinel error
	switch {
	case strings.Contains(low, "lost") || strings.Contains(low, "device is invalid"):
		d.lost = true
		sentinel = device.ErrDeviceLost
	case strings.Contains(low, "out of memory") || strings.Contains(low, "outofmemory"):
		sentinel = device.ErrOutOfMemory
	default:
		sentinel = device.ErrInvalidUsage
	}
	return fmt.Errorf("webgpu: %s: %s: %w", context, oneLine(msg), sentinel)
}

// oneLine squeezes wgpu's multi-line messages ("Validation Error\n\nCaused
// by:\n ...") into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
