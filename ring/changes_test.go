package ring_test

import (
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/ring"
)

// TestChanges: two growths between calls are one Replaced from the buffer
// last seen to the current one; Release is a Released.
func TestChanges(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		b := newRing(t, dev, ring.BufferOptions{SizeBytes: 256, Grow: true})
		first := b.Buffer()
		for range 8 { // 2 KiB in one frame: grows more than once
			if _, err := b.Allocate(256); err != nil {
				t.Fatal(err)
			}
		}
		cs := b.Changes(nil)
		if len(cs) != 1 || cs[0].Kind != memory.Replaced || cs[0].Old != first || cs[0].Buffer != b.Buffer() {
			t.Fatalf("after growth: %+v", cs)
		}
		last := b.Buffer()
		b.Release()
		if cs := b.Changes(cs[:0]); len(cs) != 1 || cs[0].Kind != memory.Released || cs[0].Old != last {
			t.Fatalf("after Release: %+v", cs)
		}
	})
}
