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
		if err := dev.WriteBuffer(is.Buffer, uint64(is.EndElem)*4, []byte{9, 9, 9, 9}); err != nil {
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

// TestGuardsAtSlabLimits: margins count against a slab's maximum as the
// arrays do. Many small arrays that fill slabs to their maximum go to more
// slabs, and an array that fits a slab only without its margin gets a
// buffer of its own, as an array too large for a slab does; every Flush
// succeeds and no margin is written over.
func TestGuardsAtSlabLimits(t *testing.T) {
	for _, c := range []struct {
		name     string
		opts     mesh.Options
		meshes   int
		mesh     mesh.Mesh
		own      int  // buffers of their own wanted
		twoSlabs bool // at least two slabs wanted
	}{
		{"slabs at their maximum", mesh.Options{GuardBytes: 16, MinSlabBytes: 1 << 10, MaxSlabBytes: 4 << 10}, 200,
			mesh.Mesh{IndexFormat: mesh.Uint32, Indices: make([]byte, 24)}, 0, true},
		{"array fits without its margin", mesh.Options{GuardBytes: 32 << 10, MinSlabBytes: 4 << 10, MaxSlabBytes: 64 << 10}, 1,
			mesh.Mesh{VertexStride: 4, Vertices: make([]byte, 40<<10)}, 1, false},
		{"one vertex a slab", mesh.Options{GuardBytes: 16, MaxSlabBytes: 1 << 20}, 1,
			mesh.Mesh{VertexStride: 600 << 10, Vertices: make([]byte, 600<<10)}, 1, false},
		{"largest margin", mesh.Options{GuardBytes: 60 << 10, MinSlabBytes: 4 << 10, MaxSlabBytes: 64 << 10}, 3,
			mesh.Mesh{IndexFormat: mesh.Uint16, Indices: make([]byte, 6)}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			testdevice.Each(t, func(t *testing.T, dev device.Device) {
				a, err := mesh.New(dev, c.opts)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Release()
				for range c.meshes {
					if _, err := a.Add(c.mesh); err != nil {
						t.Fatal(err)
					}
				}
				if err := a.Flush(); err != nil {
					t.Fatal(err)
				}
				st := a.Stats()
				if st.Pending != 0 || st.OwnBuffers != c.own || c.twoSlabs && st.Slabs < 2 {
					t.Fatalf("stats %+v: want %d buffers of their own, two slabs or more: %v", st, c.own, c.twoSlabs)
				}
				if bad, err := a.CheckGuards(); err != nil || bad != nil {
					t.Fatalf("CheckGuards: %v, %v", bad, err)
				}
			})
		})
	}
}
