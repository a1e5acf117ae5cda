//go:build js

package webgpu

import (
	"errors"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// jsOf reads the JavaScript object behind the binding's types: each
// object's own properties must match what gpumem asked for.
func TestJSOf(t *testing.T) {
	d := newTestDevice(t, Options{})
	if got := jsOf(d.dev).Get("limits").Get("maxBufferSize").Float(); uint64(got) < d.Limits().MaxBufferSize {
		t.Errorf("GPUDevice.limits.maxBufferSize %v, device limit %d", got, d.Limits().MaxBufferSize)
	}
	if !jsOf(d.queue).Get("writeBuffer").Truthy() {
		t.Error("the queue's object has no writeBuffer")
	}
	b, err := d.CreateBuffer(device.BufferDesc{Size: 1024, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	if got := jsOf(b.(*Buffer).buf).Get("size").Int(); got != 1024 {
		t.Errorf("GPUBuffer.size %d, want 1024", got)
	}
	tx, err := d.CreateTexture(device.TextureDesc{Format: device.RGBA8Unorm, Width: 8, Height: 4, Layers: 3, Mips: 1, Samples: 1, Usage: device.TextureCopyDst})
	if err != nil {
		t.Fatal(err)
	}
	if got := jsOf(tx.(*Texture).tex).Get("depthOrArrayLayers").Int(); got != 3 {
		t.Errorf("GPUTexture.depthOrArrayLayers %d, want 3", got)
	}
}

// A creation the browser refuses comes back as an error from the
// validation scope, and the device goes on working.
func TestScopeCatchesValidation(t *testing.T) {
	d := newTestDevice(t, Options{})
	oom, err := d.withOOMScope(func() error {
		// MapRead with MapWrite: invalid in WebGPU, refused asynchronously.
		_, err := d.dev.TryCreateBuffer(&wgpu.BufferDescriptor{Size: 64, Usage: wgpu.BufferUsageMapRead | wgpu.BufferUsageMapWrite})
		return err
	})
	if oom || err == nil {
		t.Fatalf("invalid buffer: oom %v, err %v; want a validation error", oom, err)
	}
	oom, err = d.withOOMScope(func() error {
		_, err := d.dev.TryCreateBuffer(&wgpu.BufferDescriptor{Size: 64, Usage: wgpu.BufferUsageCopyDst})
		return err
	})
	if oom || err != nil {
		t.Fatalf("valid buffer: oom %v, err %v", oom, err)
	}
}

// Work the browser refuses at submit (here a copy past a buffer's end,
// recorded around gpumem's checks) makes the next Wait return
// ErrInvalidUsage instead of vanishing.
func TestRefusedSubmit(t *testing.T) {
	d := newTestDevice(t, Options{})
	a, err := d.CreateBuffer(device.BufferDesc{Size: 256, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.CreateBuffer(device.BufferDesc{Size: 256, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err != nil {
		t.Fatalf("Wait before anything invalid: %v", err)
	}
	enc, err := d.encoder()
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.TryCopyBufferToBuffer(a.(*Buffer).buf, 0, b.(*Buffer).buf, 128, 256); err != nil {
		t.Fatalf("the browser threw at once: %v (want a deferred refusal)", err)
	}
	d.encUsed = true
	if err := d.Wait(); !errors.Is(err, device.ErrInvalidUsage) {
		t.Fatalf("Wait after a refused submit: %v, want ErrInvalidUsage", err)
	}
}

// MapWrite buffers: a write lands in the mapping, not only in the Go
// shadow, and the shadow survives a new mapping.
func TestMapWriteShadow(t *testing.T) {
	d := newTestDevice(t, Options{})
	m, err := d.CreateBuffer(device.BufferDesc{Size: 64, Usage: device.MapWrite | device.CopySrc})
	if err != nil {
		t.Fatal(err)
	}
	mb := m.(*Buffer)
	want := make([]byte, 64)
	for i := range want {
		want[i] = byte(3*i + 1)
	}
	if err := d.WriteBuffer(m, 0, want[:32]); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 64)
	if err := d.ReadBuffer(m, 0, got); err != nil { // copies, so unmaps
		t.Fatal(err)
	}
	if string(got[:32]) != string(want[:32]) {
		t.Fatalf("read back %x, wrote %x", got[:32], want[:32])
	}
	if mb.mapped != nil {
		t.Fatal("still mapped after a submitted copy")
	}
	if err := d.WriteBuffer(m, 32, want[32:]); err != nil { // maps again
		t.Fatal(err)
	}
	if err := d.ReadBuffer(m, 0, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("after a second mapping read %x, want %x", got, want)
	}
}

// In the browser moves run as copies: the device says so, and asking for
// the compute path is refused, not left to a silent refusal at submit.
func TestMovesCopyInBrowser(t *testing.T) {
	d := newTestDevice(t, Options{})
	if got := d.MovePath(); got != MoveCopy {
		t.Errorf("MovePath %v, want copy", got)
	}
	if _, err := New(Options{Moves: MoveCompute}); !errors.Is(err, device.ErrInvalidDescriptor) {
		t.Errorf("New with MoveCompute: %v, want ErrInvalidDescriptor", err)
	}
	b, err := d.CreateBuffer(device.BufferDesc{Size: 256, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	mv := []device.Move{{Src: 0, Dst: 128, Size: 64}}
	if err := d.MoveVia(MoveCompute, b, mv); !errors.Is(err, device.ErrInvalidUsage) {
		t.Errorf("MoveVia(MoveCompute): %v, want ErrInvalidUsage", err)
	}
	if err := d.MoveVia(MoveAuto, b, mv); err != nil {
		t.Errorf("MoveVia(MoveAuto): %v", err)
	}
	if err := d.Wait(); err != nil {
		t.Errorf("Wait: %v", err)
	}
}
