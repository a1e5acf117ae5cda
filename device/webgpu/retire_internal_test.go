//go:build cgo

package webgpu

import (
	"testing"

	"github.com/gpumem/gpumem/device"
)

// TestRetiredOutliveThePendingEncoder: an internal buffer retired while
// the pending encoder names it (a Patch's table) survives a Completed that
// finds the queue idle, is submitted intact, and goes once that
// submission has finished.
func TestRetiredOutliveThePendingEncoder(t *testing.T) {
	d := newTestDevice(t, Options{})
	b, err := d.CreateBuffer(device.BufferDesc{Size: 1 << 16, Usage: device.Storage | device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := d.Patch(b, []device.Patch{{Index: 1, Delta: 5}}); err != nil {
		t.Fatal(err)
	}
	kept := len(d.graveBuffers)
	if kept == 0 {
		t.Fatal("a Patch retired no table")
	}
	if _, err := d.Fence(); err != nil { // submits the patch
		t.Fatal(err)
	}
	if err := d.Patch(b, []device.Patch{{Index: 2, Delta: 7}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err != nil { // idle: the second patch is submitted, then done
		t.Fatal(err)
	}
	if _, err := d.Fence(); err != nil { // outstanding: Completed polls
		t.Fatal(err)
	}
	if err := d.Patch(b, []device.Patch{{Index: 3, Delta: 9}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Completed(); err != nil { // an idle queue, the third patch pending
		t.Fatal(err)
	}
	if len(d.graveBuffers) == 0 {
		t.Fatal("Completed destroyed the table of a patch not yet submitted")
	}
	got := make([]byte, 16)
	if err := d.ReadBuffer(b, 0, got); err != nil { // submits it: aborts if its table is gone
		t.Fatal(err)
	}
	if got[4] != 5 || got[8] != 7 || got[12] != 9 {
		t.Fatalf("patched words % x, want 5, 7 and 9 at words 1, 2 and 3", got)
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(d.graveBuffers) != 0 {
		t.Fatalf("%d internal buffers left after their work finished", len(d.graveBuffers))
	}
}

// TestRetiredGoWithTheirFence: internal buffers go once a fence marked
// after their submission completes, idle queue or not; CheckGuards'
// result buffer never waits for a fence of the caller's.
func TestRetiredGoWithTheirFence(t *testing.T) {
	d := newTestDevice(t, Options{})
	b, err := d.CreateBuffer(device.BufferDesc{Size: 1 << 16, Usage: device.Storage | device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Patch(b, []device.Patch{{Index: 1, Delta: 5}}); err != nil {
		t.Fatal(err)
	}
	f, err := d.Fence()
	if err != nil {
		t.Fatal(err)
	}
	for done := uint64(0); done < f; {
		if done, err = d.Completed(); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.graveBuffers) != 0 {
		t.Fatalf("%d internal buffers left after the fence that covers them completed", len(d.graveBuffers))
	}
	if _, err := d.CheckGuards(b, []device.Guard{{Offset: 0, Size: 16}}, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(d.dead) != 0 || len(d.graveBuffers) != 0 {
		t.Fatalf("after CheckGuards and Wait: %d on the dead list, %d retired; want none", len(d.dead), len(d.graveBuffers))
	}
}

// TestTableStagingShrinksAfterABigBatch: after one batch whose tables
// fill the largest staging buffer, small batches settle back on small
// buffers.
func TestTableStagingShrinksAfterABigBatch(t *testing.T) {
	lim := device.Limits{MaxBufferSize: 1 << 20, MaxStorageBufferBindingSize: 256 << 10}
	d := newTestDevice(t, Options{Moves: MoveCompute, Limits: lim})
	_, runMax := d.tableLimits(256)
	n := int(runMax/16) + 1000
	b, err := d.CreateBuffer(device.BufferDesc{Size: uint64(16 * n), Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	small := []device.Move{{Src: 64, Dst: 0, Size: 16}}
	frame := func(moves []device.Move) {
		t.Helper()
		if err := d.Move(b, moves); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Fence(); err != nil {
			t.Fatal(err)
		}
		if err := d.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	largest := func() (n uint64) {
		for _, sb := range d.stage.free {
			n = max(n, sb.size)
		}
		return n
	}
	frame(small)
	before := largest()
	batch := make([]device.Move, n)
	for i := range batch {
		batch[i] = device.Move{Src: 16 * uint64(i), Dst: 4 * uint64(i), Size: 4}
	}
	frame(batch)
	big := largest()
	for range 8 {
		frame(small)
	}
	if after := largest(); after > 4*max(before, minStagingBytes) {
		t.Errorf("largest free staging buffer %d bytes after small batches (%d before the big batch, %d after it)", after, before, big)
	}
}

// TestLargeDeadGoOffThread: a released buffer of offThreadDestroyBytes
// or more leaves the dead list once a fence marked after its release
// completes, destroyed by a job that the next Fence or Wait starts and
// that Wait waits for, while a small one is destroyed in the call; the
// device goes on working.
func TestLargeDeadGoOffThread(t *testing.T) {
	d := newTestDevice(t, Options{})
	big, err := d.CreateBuffer(device.BufferDesc{Size: offThreadDestroyBytes, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	small, err := d.CreateBuffer(device.BufferDesc{Size: 1 << 16, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CopyBuffer(small, 0, big, 0, 1<<16); err != nil {
		t.Fatal(err)
	}
	big.Release()
	small.Release()
	if len(d.dead) != 2 {
		t.Fatalf("%d dead, want 2", len(d.dead))
	}
	f, err := d.Fence()
	if err != nil {
		t.Fatal(err)
	}
	for done := uint64(0); done < f; {
		if done, err = d.Completed(); err != nil {
			t.Fatal(err)
		}
	}
	// The fence completed: the small buffer is gone, the big one's
	// destroy is queued for the next Fence or Wait.
	if len(d.dead) != 0 || len(d.freeing) != 1 || len(d.jobs) != 1 {
		t.Fatalf("%d dead, %d frees, %d jobs queued after the fence completed; want 0, 1, 1", len(d.dead), len(d.freeing), len(d.jobs))
	}
	free := d.freeing[0]
	if free.ended() {
		t.Fatal("the destroy ran before a Fence or Wait started it")
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	if !free.ended() || len(d.freeing) != 0 {
		t.Fatalf("Wait returned before the destroy it started ended (%d frees left)", len(d.freeing))
	}
	other, err := d.CreateBuffer(device.BufferDesc{Size: 1 << 16, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 1<<16)
	want[7] = 7
	if err := d.WriteBuffer(other, 0, want); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	if err := d.ReadBuffer(other, 0, got); err != nil || got[7] != 7 {
		t.Fatalf("after the destroys: %v, byte %d", err, got[7])
	}
}
