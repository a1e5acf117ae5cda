package mesh_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
)

// TestSlotOverflow: a vertex stride whose slot passes 2^32 bytes (2^30+1:
// four vertices a slot) has no SlotBytes, and Add refuses such a mesh with
// ErrInvalidMesh. Before, the slot size wrapped to 4 bytes, a 1 GiB mesh
// was accepted, and every later Flush failed until it was removed (issue
// 21). The other meshes flush.
func TestSlotOverflow(t *testing.T) {
	for _, stride := range []uint32{1<<30 + 1, 1<<30 + 3, 1<<32 - 1, 1<<31 + 2} {
		if got := mesh.VertexLayout(stride).SlotBytes(); got != 0 {
			t.Errorf("VertexLayout(%d).SlotBytes() = %d, want 0 (passes 2^32)", stride, got)
		}
	}
	if got := mesh.VertexLayout(1 << 30).SlotBytes(); got != 1<<30 {
		t.Errorf("VertexLayout(2^30).SlotBytes() = %d", got)
	}
	md := newModel(t, testdevice.Host(t, host.Options{}), mesh.Options{})
	r := rand.New(rand.NewPCG(21, 21))
	good := md.add(t, fixedMesh(r, 12, 30, mesh.Uint16, 36))
	bad := make([]byte, 1<<30+1) // one vertex; its pages are never touched
	if _, err := md.a.Add(mesh.Mesh{VertexStride: 1<<30 + 1, Vertices: bad}); !errors.Is(err, mesh.ErrInvalidMesh) {
		t.Fatalf("Add of a vertex of 2^30+1 bytes: %v, want ErrInvalidMesh", err)
	}
	md.flush(t)
	md.verify(t)
	if !md.a.Resident(good) {
		t.Fatal("the good mesh is not resident after Flush")
	}
}

// TestSweepStepsPerCall: Sweep's Steps budget bounds the whole call, as
// Moves and Bytes do, not each slab (issue 21). Two slabs (vertices and
// indices) with holes before every range: one step moves one range in all.
func TestSweepStepsPerCall(t *testing.T) {
	md := newModel(t, testdevice.Host(t, host.Options{}), mesh.Options{})
	r := rand.New(rand.NewPCG(8, 8))
	var hs []mesh.Handle
	for range 12 {
		hs = append(hs, md.add(t, fixedMesh(r, 16, 20, mesh.Uint32, 30)))
	}
	md.flush(t)
	for i := 0; i < len(hs); i += 2 {
		md.remove(t, hs[i])
	}
	for _, steps := range []int{1, 2, 3} {
		if err := md.a.Sweep(arena.SweepLimits{Steps: steps, Moves: 1000, Bytes: 1 << 30}); err != nil {
			t.Fatal(err)
		}
		moved := len(md.a.Changes(nil))
		if moved > steps {
			t.Fatalf("Sweep with %d steps moved %d ranges", steps, moved)
		}
		if moved == 0 {
			t.Fatalf("Sweep with %d steps moved nothing: the test needs moves", steps)
		}
		md.verify(t)
	}
}
