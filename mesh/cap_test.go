package mesh_test

import (
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
)

// TestFullSlabNoCompaction: a slab at its maximum size whose free space is
// in holes is not compacted whole for a batch that no hole takes, frame
// after frame (the thrash the demo at scale 300 showed: 1.7 million moves
// in 3,000 frames): the batch goes to another slab, and the budgeted Sweep
// closes the holes.
func TestFullSlabNoCompaction(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	const slab = 64 << 10
	a, err := mesh.New(dev, mesh.Options{MinSlabBytes: slab, MaxSlabBytes: slab})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	add := func(verts int) mesh.Handle {
		h, err := a.Add(mesh.Mesh{VertexStride: 16, Vertices: make([]byte, 16*verts)})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	var hs []mesh.Handle
	for range slab / (16 * 64) {
		hs = append(hs, add(64)) // fills the slab: 64 arrays of 1 KiB
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	for i, h := range hs {
		if i%2 == 0 {
			if err := a.Remove(h); err != nil {
				t.Fatal(err)
			}
		}
	}
	for frame := range 10 {
		add(200) // larger than any hole, smaller than the free space
		if err := a.Flush(); err != nil {
			t.Fatal(err)
		}
		if st := a.Stats(); st.Compactions != 0 {
			t.Fatalf("frame %d: %d full compactions of a slab at its maximum", frame, st.Compactions)
		}
	}
	if st := a.Stats(); st.Slabs < 2 {
		t.Fatalf("the batches found no other slab: %+v", st)
	}
	for range 100 {
		if err := a.Sweep(arena.SweepLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	if st := a.Stats(); st.Moves == 0 || st.Compactions != 0 {
		t.Fatalf("the sweep closed no hole, or compacted whole: %+v", st)
	}
}
