package devbench

import (
	"testing"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// TestHeater: a heat runs to its fence, and the next one is sized from
// how it went (nextCopies): cut when the wait for it was long beside the
// recording, doubled when it had ended before the recording did; a
// settle heats for settleTime. (On a
// CPU adapter newHeater gives none, so the heater is built by hand here.)
func TestHeater(t *testing.T) {
	d := testdevice.WebGPU(t, webgpu.Options{})
	if h, err := newHeater(d); err != nil || (h == nil) != (d.Info().Type == "cpu") {
		t.Fatalf("newHeater on a %q adapter: %v, %v", d.Info().Type, h, err)
	} else {
		h.release()
	}
	src, err := d.CreateBuffer(device.BufferDesc{Label: "heat source", Size: heatBytes, Usage: device.CopySrc})
	if err != nil {
		t.Fatal(err)
	}
	dst, err := d.CreateBuffer(device.BufferDesc{Label: "heat destination", Size: heatBytes, Usage: device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	h := &heater{d: d, src: src, dst: dst, copies: 64}
	defer h.release()
	// A heat runs to its fence; one that had ended when the recording
	// did (waited for here) makes the next twice as long.
	fence, err := h.start()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := h.finish(fence, time.Second); err != nil {
		t.Fatal(err)
	}
	if done, _ := d.Completed(); done < fence || h.copies != 128 {
		t.Fatalf("fence %d of %d done, %d copies next, want 128", done, fence, h.copies)
	}
	for _, c := range []struct {
		copies    int
		ended     bool
		wait, rec time.Duration
		want      int
	}{
		{64, true, 0, time.Millisecond, 128},
		{maxHeatCopies, true, 0, time.Millisecond, maxHeatCopies},
		{100, false, 100 * time.Millisecond, 100 * time.Millisecond, 50}, // twice too long: half
		{100, false, 5 * time.Millisecond, 100 * time.Millisecond, 100},  // close enough
		{1, false, time.Second, time.Millisecond, 1},                     // never none
	} {
		if got := nextCopies(c.copies, c.ended, c.wait, c.rec); got != c.want {
			t.Errorf("nextCopies(%d, ended %v, wait %v, record %v) = %d, want %d", c.copies, c.ended, c.wait, c.rec, got, c.want)
		}
	}
	// A settle keeps the GPU busy for settleTime, heat after heat, and
	// leaves nothing running.
	t0 := time.Now()
	before, _ := d.Completed()
	if err := h.settle(); err != nil {
		t.Fatal(err)
	}
	after, err := d.Completed()
	if took := time.Since(t0); err != nil || took < settleTime || after <= before {
		t.Fatalf("settle took %v (want %v or more), fences completed %d then %d (%v)", took, settleTime, before, after, err)
	}
	var none *heater
	if f, err := none.start(); f != 0 || err != nil || none.finish(1, time.Second) != nil || none.settle() != nil {
		t.Fatal("a nil heater did something")
	}
	none.release()
}
