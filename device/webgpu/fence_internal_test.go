//go:build cgo

package webgpu

import (
	"bytes"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/device"
)

// TestFenceCallbacks checks that the work-done callbacks themselves fire
// (not only the empty-queue shortcut): after Wait, the C cell holds the
// last fence. It logs how many remappings of a MapWrite buffer reused
// after its fence had to wait.
func TestFenceCallbacks(t *testing.T) {
	d := newTestDevice(t, Options{})
	src, err := d.CreateBuffer(device.BufferDesc{Size: 1 << 20, Usage: device.MapWrite | device.CopySrc})
	if err != nil {
		t.Fatal(err)
	}
	dst, err := d.CreateBuffer(device.BufferDesc{Size: 1 << 20, Usage: device.CopyDst | device.CopySrc})
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i := range 5 {
		if err := d.WriteBuffer(src, 0, make([]byte, 1<<20)); err != nil {
			t.Fatal(err)
		}
		if err := d.CopyBuffer(src, 0, dst, 0, 1<<20); err != nil {
			t.Fatal(err)
		}
		if last, err = d.Fence(); err != nil || last != uint64(i+1) {
			t.Fatalf("Fence = %d, %v", last, err)
		}
		for {
			c, err := d.Completed()
			if err != nil {
				t.Fatal(err)
			}
			if c >= last {
				break
			}
		}
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := uint64(d.fences.cells.done); got != last {
		t.Fatalf("callbacks recorded fence %d, want %d", got, last)
	}
	// Most remappings after a completed fence resolve without waiting;
	// on lavapipe wgpu sometimes has not retired the submission at the
	// first polls, and the write then waits (correct, slower).
	t.Logf("%d of 4 fenced remappings waited for the GPU", d.blockingMaps)
}

// TestMapLeavesOtherWork checks when mapping a MapWrite buffer again
// submits the recorded work: only when that work copies from the buffer
// itself (else the mapping would wait for a submission that never
// comes). The copies land in order either way: dst reads a's first
// bytes, then b's, then a's second bytes, each copied before its source
// was written again.
func TestMapLeavesOtherWork(t *testing.T) {
	d := newTestDevice(t, Options{})
	const n = 64 << 10
	staging := func() device.Buffer {
		buf, err := d.CreateBuffer(device.BufferDesc{Size: n, Usage: device.MapWrite | device.CopySrc})
		if err != nil {
			t.Fatal(err)
		}
		return buf
	}
	a, b := staging(), staging()
	dst, err := d.CreateBuffer(device.BufferDesc{Size: 3 * n, Usage: device.CopyDst | device.CopySrc})
	if err != nil {
		t.Fatal(err)
	}
	fill := func(v byte) []byte { return bytes.Repeat([]byte{v}, n) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Both written, copied out and submitted (which unmaps them), and
	// the GPU done with them.
	must(d.WriteBuffer(a, 0, fill(1)))
	must(d.WriteBuffer(b, 0, fill(2)))
	must(d.CopyBuffer(a, 0, dst, 0, n))
	must(d.CopyBuffer(b, 0, dst, n, n))
	must(d.Wait())
	// A copy from b recorded, then a mapped again: the copy stays
	// recorded.
	must(d.CopyBuffer(b, 0, dst, n, n))
	submits := d.submits
	must(d.WriteBuffer(a, 0, fill(3)))
	if d.submits != submits || d.enc == nil {
		t.Fatalf("mapping a submitted work that copies from b only: submits %d -> %d", submits, d.submits)
	}
	// b mapped again while a copy from it is recorded: that copy is
	// submitted first, and reads b's old bytes.
	must(d.WriteBuffer(b, 0, fill(4)))
	if d.submits == submits {
		t.Fatal("mapping b left a recorded copy from b unsubmitted")
	}
	must(d.CopyBuffer(a, 0, dst, 2*n, n))
	must(d.Wait())
	got := make([]byte, 3*n)
	must(d.ReadBuffer(dst, 0, got))
	want := slices.Concat(fill(1), fill(2), fill(3))
	if !bytes.Equal(got, want) {
		t.Fatalf("dst's thirds hold %d, %d, %d; want 1, 2, 3", got[0], got[n], got[2*n])
	}
}
