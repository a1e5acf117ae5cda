package ring_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/ring"
)

// TestFullErrorText: a request larger than a ring that cannot grow to it
// says so; it said "full of frames in flight" with nothing in flight.
func TestFullErrorText(t *testing.T) {
	dev := newHeld(t)
	b := newRing(t, dev, ring.BufferOptions{SizeBytes: 64 << 10})
	_, err := b.Allocate(100 << 10)
	if !errors.Is(err, ring.ErrFull) {
		t.Fatalf("Allocate of 100 KiB from a 64 KiB ring: %v, want ErrFull", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "larger than the ring's 65536 bytes, and growing is off") || strings.Contains(msg, "in flight") {
		t.Errorf("error %q: want it to say the request is larger than the ring", msg)
	}
	// Frames in flight that leave too little room are named as such.
	_, err = b.Allocate(40 << 10)
	must(t, err)
	f, err := dev.Fence()
	must(t, err)
	must(t, b.EndFrame(f))
	_, err = b.Allocate(40 << 10)
	if !errors.Is(err, ring.ErrFull) || !strings.Contains(err.Error(), "with 40960 of the ring's 65536 bytes in flight") {
		t.Errorf("Allocate with 40 KiB in flight: %v", err)
	}
}
