package bindless_test

import (
	"testing"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
)

// TestChanges: Compact's moves are Moved changes with both handles, the
// pages it empties are Released, and nothing is pending after Changes.
func TestChanges(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		r, err := bindless.New[int](dev, bindless.Options{LayersPerPage: 4, MaxPages: 16})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		key := bindless.Key{Format: device.RGBA8Unorm, Width: 4, Height: 4}
		for id := range 12 {
			if _, err := r.Register(id, key, make([]byte, 4*4*4)); err != nil {
				t.Fatal(err)
			}
		}
		r.Changes(nil)
		for id := range 10 { // two left, at the top
			if err := r.Unregister(id); err != nil {
				t.Fatal(err)
			}
		}
		n, _, err := r.Compact()
		if err != nil || n == 0 {
			t.Fatalf("Compact: %d moves, %v", n, err)
		}
		var moved, released int
		for _, c := range r.Changes(nil) {
			switch c.Kind {
			case memory.Moved:
				moved++
				from, to := bindless.Moved(c)
				if id, ok := r.Source(to); !ok || id < 10 || to.Layer() != c.ToLayer || from.Layer() != c.FromLayer || c.Texture == nil {
					t.Errorf("move %v -> %v: id %v %v, change %+v", from, to, id, ok, c)
				}
			case memory.Released, memory.Replaced:
				released++
			default:
				t.Errorf("unexpected %+v", c)
			}
		}
		if moved != n || released == 0 {
			t.Errorf("%d moves and %d pages released or trimmed reported; Compact made %d moves", moved, released, n)
		}
		if cs := r.Changes(nil); len(cs) != 0 {
			t.Errorf("pending after Changes: %+v", cs)
		}
	})
}
