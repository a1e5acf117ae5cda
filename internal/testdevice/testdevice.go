// Package testdevice opens the devices that tests run on, so every package
// above device runs its tests on each backend: host always, webgpu where an
// adapter is found. Where none is, webgpu tests skip with a message saying
// what to install, except in CI (CI=true), where they must run and fail.
//
// A test binary that imports it gets a private XDG_RUNTIME_DIR when it has
// none (a directory of its user's, mode 0700, under the temporary
// directory), before any device opens: without one the Vulkan loader's
// window-system code prints "error: XDG_RUNTIME_DIR is invalid or not set
// in the environment." for every webgpu device a test opens.
package testdevice

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/device/webgpu"
)

func init() {
	if os.Getenv("XDG_RUNTIME_DIR") != "" {
		return
	}
	dir := filepath.Join(os.TempDir(), "gpumem-test-runtime-"+strconv.Itoa(os.Getuid()))
	os.Mkdir(dir, 0o700)
	if fi, err := os.Lstat(dir); err == nil && fi.IsDir() && fi.Mode().Perm() == 0o700 && ownedByUs(fi) {
		os.Setenv("XDG_RUNTIME_DIR", dir)
	}
}

// Backend names a device backend and opens a fresh device of it for a test;
// the device is released when the test ends.
type Backend struct {
	Name string
	Open func(t testing.TB) device.Device
}

// Backends lists every backend tests run on.
func Backends() []Backend {
	return []Backend{
		{"host", func(t testing.TB) device.Device { return Host(t, host.Options{}) }},
		{"webgpu", func(t testing.TB) device.Device { return WebGPU(t, webgpu.Options{}) }},
	}
}

// Each runs f as a subtest on a fresh device of every backend.
func Each(t *testing.T, f func(t *testing.T, dev device.Device)) {
	for _, b := range Backends() {
		t.Run(b.Name, func(t *testing.T) { f(t, b.Open(t)) })
	}
}

// Host opens a host device with opts.
func Host(t testing.TB, opts host.Options) *host.Device {
	t.Helper()
	d, err := host.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Release)
	return d
}

// WebGPU opens a webgpu device with opts, completed from the environment
// (GPUMEM_WEBGPU_*: so the whole suite can run on another backend or move
// path), or skips t when no adapter is found (fails it when CI=true).
func WebGPU(t testing.TB, opts webgpu.Options) *webgpu.Device {
	t.Helper()
	d, err := webgpu.New(opts.FromEnv())
	if errors.Is(err, webgpu.ErrNoAdapter) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must run the webgpu tests: %v", err)
		}
		t.Skipf("no WebGPU adapter (on Debian without a GPU: apt-get install mesa-vulkan-drivers): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Release)
	return d
}

// Long skips t unless the long cases run: in CI (CI=true) or with
// GPUMEM_LONG=1. They repeat what the short ones cover under other
// settings (the conformance suite on the copy path and on small limits,
// the pages rendered in Chromium), so `go test ./...` stays quick and CI
// loses nothing.
func Long(t testing.TB) {
	t.Helper()
	if !IsLong() {
		t.Skip("a long case: runs with CI=true or GPUMEM_LONG=1")
	}
}

// IsLong reports whether the long cases run, for tests whose short form
// does less of the same work.
func IsLong() bool {
	return os.Getenv("CI") == "true" || os.Getenv("GPUMEM_LONG") == "1"
}

// PreparesAhead reports whether dev makes buffers ahead of need: whether
// a device.Prepare on it holds the buffer before the Take (Pending.Ahead),
// as webgpu does natively and not in the browser.
func PreparesAhead(dev device.Device) bool {
	p := device.Prepare(dev, device.BufferDesc{Label: "probe", Size: 4, Usage: device.CopyDst})
	defer p.Release()
	return p.Ahead()
}

// PreparesTexturesAhead is PreparesAhead for textures
// (device.PrepareTexture).
func PreparesTexturesAhead(dev device.Device) bool {
	p := device.PrepareTexture(dev, device.TextureDesc{Label: "probe", Format: device.RGBA8Unorm, Width: 1, Height: 1, Usage: device.TextureCopyDst})
	defer p.Release()
	return p.Ahead()
}
