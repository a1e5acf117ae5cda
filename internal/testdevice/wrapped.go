//go:build cgo || js

package testdevice

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// Raw opens a WebGPU device through the binding alone, as a renderer that
// owns its device does, or skips t when no adapter is found (fails it when
// CI=true). When the test ends the device is checked to still work (a
// write, a copy and a read through the binding) and then released with
// its queue, adapter and instance.
func Raw(t testing.TB) *wgpu.Device {
	t.Helper()
	inst := wgpu.CreateInstance(nil)
	var ad *wgpu.Adapter
	err := fmt.Errorf("no WebGPU (navigator.gpu) in this browser")
	if inst != nil {
		ad, err = inst.RequestAdapter(&wgpu.RequestAdapterOptions{})
	}
	if err != nil || ad == nil {
		inst.Release()
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must run the webgpu tests: no adapter: %v", err)
		}
		t.Skipf("no WebGPU adapter (on Debian without a GPU: apt-get install mesa-vulkan-drivers): %v", err)
	}
	dev, err := ad.RequestDevice(nil)
	if err != nil {
		ad.Release()
		inst.Release()
		t.Fatalf("request device: %v", err)
	}
	t.Cleanup(func() {
		if err := CheckRaw(dev); err != nil {
			t.Errorf("the caller's device after gpumem's Release: %v", err)
		}
		dev.Release()
		ad.Release()
		inst.Release()
	})
	return dev
}

// Wrapped wraps a device of Raw's with webgpu.WrapOptions; gpumem's device
// is released before Raw's checks run.
func Wrapped(t testing.TB, opts webgpu.Options) *webgpu.Device {
	t.Helper()
	d, err := webgpu.WrapOptions(Raw(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Release)
	return d
}

// CheckRaw writes, copies and reads back 256 bytes through dev's own queue,
// and reports whether they arrived.
func CheckRaw(dev *wgpu.Device) error {
	q := dev.GetQueue()
	defer q.Release()
	src, err := dev.TryCreateBuffer(&wgpu.BufferDescriptor{Size: 256, Usage: wgpu.BufferUsageCopyDst | wgpu.BufferUsageCopySrc})
	if err != nil {
		return err
	}
	defer src.Release()
	defer src.Destroy()
	dst, err := dev.TryCreateBuffer(&wgpu.BufferDescriptor{Size: 256, Usage: wgpu.BufferUsageCopyDst | wgpu.BufferUsageMapRead})
	if err != nil {
		return err
	}
	defer dst.Release()
	defer dst.Destroy()
	want := make([]byte, 256)
	for i := range want {
		want[i] = byte(i*7 + 3)
	}
	if err := q.TryWriteBuffer(src, 0, want); err != nil {
		return err
	}
	enc, err := dev.TryCreateCommandEncoder(nil)
	if err != nil {
		return err
	}
	defer enc.Release()
	if err := enc.TryCopyBufferToBuffer(src, 0, dst, 0, 256); err != nil {
		return err
	}
	cb, err := enc.TryFinish(nil)
	if err != nil {
		return err
	}
	q.Submit(cb)
	cb.Release()
	status := wgpu.MapAsyncStatus(0)
	if err := dst.TryMapAsync(wgpu.MapModeRead, 0, 256, func(s wgpu.MapAsyncStatus) { status = s }); err != nil {
		return err
	}
	dev.Poll(true, nil)
	if status != wgpu.MapAsyncStatusSuccess {
		return fmt.Errorf("map read: status %v", status)
	}
	got := bytes.Clone(dst.GetMappedRange(0, 256))
	if err := dst.TryUnmap(); err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("read back %x, wrote %x", got[:8], want[:8])
	}
	return nil
}
