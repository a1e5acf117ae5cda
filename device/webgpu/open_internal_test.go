//go:build cgo || js

package webgpu

import (
	"errors"
	"os"
	"testing"
)

// newTestDevice opens a device or skips t (fails it in CI), as
// internal/testdevice.WebGPU does (which this package's internal tests cannot
// import: it imports this package).
func newTestDevice(t testing.TB, opts Options) *Device {
	t.Helper()
	d, err := New(opts)
	if errors.Is(err, ErrNoAdapter) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must run the webgpu tests: %v", err)
		}
		t.Skipf("skipping: %v", err) // the error says what to install
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Release)
	return d
}
