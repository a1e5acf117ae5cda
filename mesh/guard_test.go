package mesh_test

import (
	"slices"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
)

// TestGuards writes one index past a mesh's index array through the raw
// slab, on every backend: CheckGuards names that mesh alone, also after a
// compaction moved everything.
func TestGuards(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		a, err := mesh.New(dev, mesh.Options{GuardBytes: 16, MinSlabBytes: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		var hs []mesh.Handle
		for i := range 40 {
			nv := 3 + i%7
			h, err := a.Add(mesh.Mesh{VertexStride: 12, Vertices: make([]byte, 12*nv), IndexFormat: mesh.Uint32, Indices: make([]byte, 4*3*(1+i%4))})
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs, h)
		}
		if err := a.Flush(); err != nil {
			t.Fatal(err)
		}
		if bad, err := a.CheckGuards(); err != nil || bad != nil {
			t.Fatalf("CheckGuards before any stray write: %v, %v", bad, err)
		}
		victim := hs[17]
		_, is, err := a.Slices(victim)
		if err != nil {
			t.Fatal(err)
		}
		if err := dev.WriteBuffer(is.Buffer, uint64(is.End)*4, []byte{9, 9, 9, 9}); err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			bad, err := a.CheckGuards()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(bad, []mesh.Handle{victim}) {
				t.Fatalf("round %d: CheckGuards %v, want [%v]", round, bad, victim)
			}
			for i, h := range hs {
				if i%2 == 1 && h != victim {
					if err := a.Remove(h); err != nil {
						t.Fatal(err)
					}
				}
			}
			hs = slices.DeleteFunc(hs, func(h mesh.Handle) bool { _, _, err := a.Slices(h); return err != nil })
			if err := a.Compact(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
