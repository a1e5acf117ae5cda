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

// TestChangesResize: a Modify to new sizes keeps the mesh drawn from its
// old ranges until the Flush that places the new ones (here one left for
// a later Flush by MaxFlushBytes), which reports each re-placed array as
// one Moved from the old place the consumer knew to the new one, of the
// new size, and gives the old ranges back.
func TestChangesResize(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		a, err := mesh.New(dev, mesh.Options{MinSlabBytes: 4 << 10, MaxFlushBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		h, err := a.Add(mesh.Mesh{VertexStride: 16, Vertices: make([]byte, 16*8), IndexFormat: mesh.Uint32, Indices: make([]byte, 4*6)})
		if err != nil {
			t.Fatal(err)
		}
		blocker, err := a.Add(mesh.Mesh{VertexStride: 16, Vertices: make([]byte, 16*4)})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		v0, i0, err := a.Slices(h)
		if err != nil {
			t.Fatal(err)
		}
		a.Changes(nil)
		// Staged behind another mesh's change: the first Flush leaves h.
		if err := a.Modify(blocker, mesh.Mesh{VertexStride: 16, Vertices: make([]byte, 16*4)}); err != nil {
			t.Fatal(err)
		}
		if err := a.Modify(h, mesh.Mesh{VertexStride: 16, Vertices: make([]byte, 16*20), IndexFormat: mesh.Uint32, Indices: make([]byte, 4*6)}); err != nil {
			t.Fatal(err)
		}
		for f := range 2 {
			v, i, err := a.Slices(h)
			if err != nil || v != v0 || i != i0 || !a.Resident(h) {
				t.Fatalf("flush %d: before the re-placement: %+v %+v %v, want the old slices", f, v, i, err)
			}
			if cs := a.Changes(nil); len(cs) != 0 {
				t.Fatalf("flush %d: %+v before the re-placement", f, cs)
			}
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			if !a.Staged(h) {
				break
			}
		}
		v, i, err := a.Slices(h)
		if err != nil || v.Len() != 20 || i != i0 {
			t.Fatalf("after: %+v %+v %v", v, i, err)
		}
		cs := a.Changes(nil)
		want := memory.Change{Kind: memory.Moved, Owner: h.Owner(), Part: uint8(mesh.Vertices), Old: v0.Buffer, Buffer: v.Buffer,
			FromBytes: uint64(v0.StartElem) * 16, ToBytes: uint64(v.StartElem) * 16, SizeBytes: 20 * 16}
		if len(cs) != 1 || cs[0] != want {
			t.Fatalf("changes %+v, want [%+v]", cs, want)
		}
		if err := mesh.Check(a); err != nil {
			t.Fatal(err)
		}
		if st := a.Stats(); st.UsedBytes != 20*16+4*16+6*4 {
			t.Errorf("used %d bytes: the old range was not given back", st.UsedBytes)
		}
	})
}
