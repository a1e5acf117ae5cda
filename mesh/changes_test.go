package mesh_test

import (
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
)

// TestChanges: a slab's growth is one Replaced, a compaction one Moved
// per array moved, naming its mesh and kind with the slab offsets Slices
// gives, a slab emptied is Released at the next Flush, and the list
// stays within its bound.
func TestChanges(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		a, err := mesh.New(dev, mesh.Options{MinSlabBytes: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		add := func(n int) []mesh.Handle {
			var hs []mesh.Handle
			for range n {
				h, err := a.Add(mesh.Mesh{VertexStride: 16, Vertices: make([]byte, 16*24)})
				if err != nil {
					t.Fatal(err)
				}
				hs = append(hs, h)
			}
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			return hs
		}
		hs := add(4)
		v, _, _ := a.Slices(hs[0])
		first := v.Buffer
		a.Changes(nil)
		hs = append(hs, add(60)...) // past 4 KiB: the slab grows
		v, _, _ = a.Slices(hs[0])
		cs := a.Changes(nil)
		if len(cs) != 1 || cs[0].Kind != memory.Replaced || cs[0].Old != first || cs[0].Buffer != v.Buffer {
			t.Fatalf("after growth: %+v, want one Replaced to the slab's buffer", cs)
		}
		for i := 0; i < len(hs)-1; i += 2 {
			if err := a.Remove(hs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Compact(); err != nil {
			t.Fatal(err)
		}
		cs = a.Changes(cs[:0])
		if len(cs) == 0 {
			t.Fatal("a compaction after removing every other mesh moved nothing")
		}
		for _, c := range cs {
			h := mesh.HandleOf(c)
			v, _, err := a.Slices(h)
			if err != nil || c.Kind != memory.Moved || mesh.Kind(c.Part) != mesh.Vertices || c.Buffer != v.Buffer ||
				c.ToBytes != uint64(v.StartElem)*16 || c.SizeBytes < 16*24 || c.FromBytes <= c.ToBytes {
				t.Errorf("change %+v: slice %+v (%v)", c, v, err)
			}
		}
		buf := v.Buffer
		for i := 1; i < len(hs); i += 2 {
			if err := a.Remove(hs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Flush(); err != nil {
			t.Fatal(err)
		}
		if cs := a.Changes(cs[:0]); len(cs) != 1 || cs[0].Kind != memory.Released || cs[0].Old != buf {
			t.Errorf("after emptying the slab: %+v, want it Released", cs)
		}
	})
}

// TestChangesBound: moves nobody reads stop at memory.MaxPendingChanges
// and become one Overflowed.
func TestChangesBound(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	a, err := mesh.New(dev, mesh.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	n := memory.MaxPendingChanges + 100
	hs := make([]mesh.Handle, 2*n)
	for i := range hs {
		if hs[i], err = a.Add(mesh.Mesh{VertexStride: 16, Vertices: make([]byte, 16)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	a.Changes(nil)
	for i := 0; i < len(hs); i += 2 {
		_ = a.Remove(hs[i])
	}
	if err := a.Compact(); err != nil {
		t.Fatal(err)
	}
	if cs := a.Changes(nil); len(cs) != 1 || cs[0].Kind != memory.Overflowed {
		t.Fatalf("%d moves unread: %d changes, want one Overflowed", n, len(cs))
	}
}
