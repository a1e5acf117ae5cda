package webgpu_test

import (
	"errors"
	"os"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/devicetest"
	"github.com/gpumem/gpumem/device/webgpu"
)

// openDevice opens a webgpu device for t, or skips t when no adapter is
// found, except in CI (CI=true), where the suite must run and t fails.
func openDevice(t testing.TB, opts webgpu.Options) *webgpu.Device {
	t.Helper()
	d, err := webgpu.New(opts)
	if errors.Is(err, webgpu.ErrNoAdapter) {
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

func open(opts webgpu.Options) func(t *testing.T) device.Device {
	return func(t *testing.T) device.Device {
		d := openDevice(t, opts)
		t.Logf("adapter: %v", d.Info())
		return d
	}
}

func TestConformance(t *testing.T) {
	devicetest.Run(t, open(webgpu.Options{}))
}

// TestConformanceCopyPath runs the suite with every move done as copies
// through scratch, the path taken where compute cannot run.
func TestConformanceCopyPath(t *testing.T) {
	devicetest.Run(t, open(webgpu.Options{Moves: webgpu.MoveCopy}))
}

// TestConformanceSmallLimits runs the suite with small binding and buffer
// limits, so that moves and patches go through storage binding windows and
// passes are cut by the scratch size.
func TestConformanceSmallLimits(t *testing.T) {
	devicetest.Run(t, open(webgpu.Options{Limits: device.Limits{
		MaxBufferSize:               8 << 20,
		MaxStorageBufferBindingSize: 4 << 20,
		MaxTextureSize2D:            64,
		MaxArrayLayers:              16,
	}}))
}

// TestConformanceSmallLimitsCopyPath is the small-limits suite with moves
// as copies: passes cut by a small scratch buffer.
func TestConformanceSmallLimitsCopyPath(t *testing.T) {
	devicetest.Run(t, open(webgpu.Options{Moves: webgpu.MoveCopy, Limits: device.Limits{
		MaxBufferSize:               8 << 20,
		MaxStorageBufferBindingSize: 4 << 20,
		MaxTextureSize2D:            64,
		MaxArrayLayers:              16,
	}}))
}
