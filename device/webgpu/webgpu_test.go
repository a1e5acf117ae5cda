//go:build cgo || js

package webgpu_test

import (
	"errors"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/devicetest"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/testdevice"
)

func open(opts webgpu.Options) func(t *testing.T) device.Device {
	return func(t *testing.T) device.Device {
		d := testdevice.WebGPU(t, opts)
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
	testdevice.Long(t)
	devicetest.Run(t, open(webgpu.Options{Moves: webgpu.MoveCopy}))
}

// TestConformanceSmallLimits runs the suite with small binding and buffer
// limits, so that moves and patches go through storage binding windows and
// passes are cut by the scratch size.
func TestConformanceSmallLimits(t *testing.T) {
	testdevice.Long(t)
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
	testdevice.Long(t)
	devicetest.Run(t, open(webgpu.Options{Moves: webgpu.MoveCopy, Limits: device.Limits{
		MaxBufferSize:               8 << 20,
		MaxStorageBufferBindingSize: 4 << 20,
		MaxTextureSize2D:            64,
		MaxArrayLayers:              16,
	}}))
}

// The raw objects are the ones gpumem uses: a buffer written through the
// device reads back through the binding's own queue and a mapped copy.
func TestRawInterop(t *testing.T) {
	d := testdevice.WebGPU(t, webgpu.Options{})
	b, err := d.CreateBuffer(device.BufferDesc{Label: "interop", Size: 16, Usage: device.CopySrc | device.CopyDst | device.Vertex})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteBuffer(b, 0, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}); err != nil {
		t.Fatal(err)
	}
	wb, err := d.RawBuffer(b)
	if err != nil || wb == nil {
		t.Fatalf("RawBuffer: %v", err)
	}
	if got := wb.GetSize(); got != 16 {
		t.Errorf("raw buffer size %d", got)
	}
	if err := d.Submit(); err != nil {
		t.Fatal(err)
	}
	other, _ := d.CreateBuffer(device.BufferDesc{Size: 4, Usage: device.CopyDst})
	b.Release()
	if _, err := d.RawBuffer(b); !errors.Is(err, device.ErrReleased) {
		t.Errorf("RawBuffer after release: %v", err)
	}
	tex, err := d.CreateTexture(device.TextureDesc{Format: device.RGBA8Unorm, Width: 4, Height: 4, Layers: 2, Mips: 1, Samples: 1, Usage: device.TextureCopyDst | device.TextureBinding})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := d.RawTexture(tex)
	if err != nil || wt.GetDepthOrArrayLayers() != 2 {
		t.Fatalf("RawTexture: %v", err)
	}
	if _, err := d.RawTexture(nil); !errors.Is(err, device.ErrInvalidObject) {
		t.Errorf("RawTexture(nil): %v", err)
	}
	_ = other
}

// TestConformanceWrapped runs the suite on devices the test creates
// through the binding and hands to gpumem with Wrap, as a renderer does;
// after each test gpumem's Release must leave the caller's device
// working (testdevice.Raw checks it).
func TestConformanceWrapped(t *testing.T) {
	devicetest.Run(t, func(t *testing.T) device.Device {
		d, err := webgpu.Wrap(testdevice.Raw(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Release)
		return d
	})
}

// Wrap refuses what it cannot use, and two gpumem devices on one caller's
// device work side by side, each refusing the other's buffers.
func TestWrapErrors(t *testing.T) {
	if _, err := webgpu.Wrap(nil); !errors.Is(err, device.ErrInvalidObject) {
		t.Errorf("Wrap(nil): %v, want ErrInvalidObject", err)
	}
	raw := testdevice.Raw(t)
	if _, err := webgpu.WrapOptions(raw, webgpu.Options{Backend: "vulkan"}); !errors.Is(err, device.ErrInvalidDescriptor) {
		t.Errorf("WrapOptions with a backend: %v, want ErrInvalidDescriptor", err)
	}
	a, err := webgpu.Wrap(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	b, err := webgpu.Wrap(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if got := a.Info().Name; got != "the caller's device" {
		t.Errorf("Info of a wrapped device: %q", got)
	}
	bufA, err := a.CreateBuffer(device.BufferDesc{Size: 64, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteBuffer(bufA, 0, make([]byte, 4)); !errors.Is(err, device.ErrInvalidObject) {
		t.Errorf("a buffer of another wrap: %v, want ErrInvalidObject", err)
	}
	want := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	if err := a.WriteBuffer(bufA, 8, want); err != nil {
		t.Fatal(err)
	}
	b.Release() // leaves a, and the caller's device, working
	got := make([]byte, 8)
	if err := a.ReadBuffer(bufA, 8, got); err != nil || string(got) != string(want) {
		t.Errorf("read after the other wrap's Release: %v, %v", got, err)
	}
}
