//go:build cgo || js

package webgpu

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/gpumem/gpumem/device"
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

// TestPrecompile checks that a device that moves by compute starts
// building the move kernels when it opens, that its first Move takes
// them and moves right, that a device released before any Move waits for
// them, and that one that copies builds none.
func TestPrecompile(t *testing.T) {
	if !computeMoves {
		t.Skip("this platform moves by copies")
	}
	d := newTestDevice(t, Options{Moves: MoveCompute})
	if d.pre == nil || d.kernels == nil || d.kernels.moveLayout == nil {
		t.Fatalf("opened without starting the move kernels: pre %v, kernels %v", d.pre, d.kernels)
	}
	buf, err := d.CreateBuffer(device.BufferDesc{Label: "precompile", Size: 1 << 16, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Release()
	want := make([]byte, 1<<16)
	for i := range want {
		want[i] = byte(i * 7)
	}
	if err := d.WriteBuffer(buf, 0, want); err != nil {
		t.Fatal(err)
	}
	moves := []device.Move{{Src: 4096, Dst: 0, Size: 8192}, {Src: 32768, Dst: 16384, Size: 1024}}
	if err := d.Move(buf, moves); err != nil {
		t.Fatal(err)
	}
	if d.pre != nil {
		t.Fatal("the first Move left the precompiled kernels untaken")
	}
	for _, k := range []*kernel{&d.kernels.copyVec4, &d.kernels.copyShift, &d.kernels.copyWord} {
		if k.pipeline == nil || k.layout != d.kernels.moveLayout {
			t.Fatalf("a move kernel was not taken: %+v", *k)
		}
	}
	got := make([]byte, len(want))
	if err := d.ReadBuffer(buf, 0, got); err != nil {
		t.Fatal(err)
	}
	for _, m := range moves {
		copy(want[m.Dst:m.Dst+m.Size], want[m.Src:m.Src+m.Size])
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the moved bytes differ")
	}

	early := newTestDevice(t, Options{Moves: MoveCompute})
	early.Release() // before the kernels are taken: waits for them
	if early.pre != nil || early.kernels != nil {
		t.Fatalf("released with pre %v, kernels %v", early.pre, early.kernels)
	}

	copies := newTestDevice(t, Options{Moves: MoveCopy})
	if copies.pre != nil || copies.kernels != nil {
		t.Fatal("a device that moves by copies started the move kernels")
	}
}

// TestPrepareOffThread checks that PrepareBuffer creates natively on a
// goroutine of its own (the buffer is tracked as preparing until taken)
// and that a Take adopts it as the device's buffer.
func TestPrepareOffThread(t *testing.T) {
	if !offThread {
		t.Skip("this platform creates prepared buffers at Take")
	}
	d := newTestDevice(t, Options{})
	p := d.PrepareBuffer(device.BufferDesc{Label: "ahead", Size: 1 << 20, Usage: device.CopySrc | device.CopyDst})
	if len(d.preparing) != 1 {
		t.Fatalf("%d buffers preparing, want 1", len(d.preparing))
	}
	b, err := p.Take()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if _, ok := d.buffers[b.(*Buffer)]; !ok || len(d.preparing) != 0 {
		t.Fatalf("taken: tracked %v, %d still preparing", ok, len(d.preparing))
	}
}

// TestJobsStartAtFence checks when a prepared buffer's creation runs: not
// before the next Fence (it would overlap the frame's submits), at it, or
// at a Take that comes first; and a Pending released before its job
// started never runs it.
func TestJobsStartAtFence(t *testing.T) {
	if !offThread {
		t.Skip("this platform creates prepared buffers at Take")
	}
	d := newTestDevice(t, Options{})
	desc := device.BufferDesc{Label: "ahead", Size: 1 << 20, Usage: device.CopySrc | device.CopyDst}
	started := func() bool {
		for p := range d.preparing {
			select {
			case <-p.job.done:
				return true
			default:
			}
		}
		return false
	}
	a := d.PrepareBuffer(desc)
	if len(d.jobs) != 1 || started() {
		t.Fatalf("prepared: %d jobs queued, started %v", len(d.jobs), started())
	}
	if _, err := d.Fence(); err != nil {
		t.Fatal(err)
	}
	if len(d.jobs) != 0 {
		t.Fatalf("%d jobs queued after a Fence", len(d.jobs))
	}
	d.running.Wait()
	if !started() {
		t.Fatal("the Fence did not start the creation")
	}
	ba, err := a.Take()
	if err != nil {
		t.Fatal(err)
	}
	defer ba.Release()

	b := d.PrepareBuffer(desc) // taken before any Fence: Take starts it
	bb, err := b.Take()
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Release()

	c := d.PrepareBuffer(desc) // given up before it started
	var ran bool
	for p := range d.preparing {
		run := p.job.run
		p.job.run = func() { ran = true; run() }
	}
	c.Release()
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	d.running.Wait()
	if ran || len(d.preparing) != 0 || len(d.jobs) != 0 {
		t.Fatalf("released before it started: ran %v, %d preparing, %d queued", ran, len(d.preparing), len(d.jobs))
	}
}
