package mesh_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
)

// TestMemory checks the allocator's memory view against its own answers
// over frames of adds, modifies, removes, sweeps and an array of its own:
// every buffer tiles, each placed array is one region where Slices says,
// of its kind and mesh, and the slabs add up to Stats.
func TestMemory(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		md := newModel(t, dev, mesh.Options{Label: "m", MinSlabBytes: 4 << 10, MaxSlabBytes: 64 << 10, LargeThresholdBytes: 32 << 10})
		r := rand.New(rand.NewPCG(3, 4))
		var hs []mesh.Handle
		for frame := range 12 {
			for range 8 {
				hs = append(hs, md.add(t, randomMesh(r)))
			}
			if frame == 3 {
				hs = append(hs, md.add(t, mesh.Mesh{VertexStride: 16, Vertices: make([]byte, 40<<10)}))
			}
			for i := 0; i < len(hs) && frame%3 == 2; i += 3 {
				md.remove(t, hs[i])
				hs = append(hs[:i], hs[i+1:]...)
			}
			md.flush(t)
			if err := md.a.Sweep(arena.SweepLimits{Moves: 4}); err != nil {
				t.Fatal(err)
			}
			checkMemory(t, md)
		}
	})
}

func checkMemory(t *testing.T, md *model) {
	t.Helper()
	bufs := md.a.Memory()
	st := md.a.Stats()
	type where struct {
		kind   string
		offset uint64
	}
	seen := map[string][]where{}
	var slabBytes, usedBytes, ownBytes uint64
	slabs, own := 0, 0
	for i := range bufs {
		b := &bufs[i]
		if err := b.Check(); err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		switch b.Kind {
		case memory.VertexSlab, memory.IndexSlab:
			slabs++
			slabBytes += b.CapacityBytes
			usedBytes += b.Stats.ReservedBytes
		case memory.VertexBuffer, memory.IndexBuffer:
			own++
			ownBytes += b.CapacityBytes
		default:
			t.Fatalf("%s: kind %v", b.Name, b.Kind)
		}
		holds := map[bool]string{true: "index", false: "vertex"}[b.Kind == memory.IndexSlab || b.Kind == memory.IndexBuffer]
		for _, r := range b.Regions {
			if r.Live() && r.Kind != holds {
				t.Fatalf("%s (%v): a region of kind %q", b.Name, b.Kind, r.Kind)
			}
			if r.Live() {
				seen[r.Name] = append(seen[r.Name], where{r.Kind, r.Offset})
			}
		}
	}
	if slabs != st.Slabs || own != st.OwnBuffers || slabBytes != st.SlabBytes || usedBytes != st.UsedBytes || ownBytes != st.OwnBytes {
		t.Fatalf("memory: %d slabs (%d bytes, %d used), %d own (%d bytes); Stats %+v", slabs, slabBytes, usedBytes, own, ownBytes, st)
	}
	arrays := 0
	for h, e := range md.meshes {
		v, i, err := md.a.Slices(h)
		if err != nil || !e.resident {
			continue
		}
		for k, s := range []mesh.Slice{v, i} {
			if s.Buffer == nil {
				continue
			}
			arrays++
			kind := [2]string{"vertex", "index"}[k]
			l := mesh.VertexLayout(e.onDevice.VertexStride)
			if k == 1 {
				l = mesh.IndexLayout(e.onDevice.IndexFormat)
			}
			want := where{kind, uint64(s.StartElem) * uint64(l.ElemBytes)}
			found := false
			for _, w := range seen[h.String()] {
				found = found || w == want
			}
			if !found {
				t.Fatalf("%v %s at %d: memory shows %v", h, kind, want.offset, seen[h.String()])
			}
		}
	}
	n := 0
	for _, ws := range seen {
		n += len(ws)
	}
	if n != arrays {
		t.Fatalf("memory shows %d arrays, Slices %d", n, arrays)
	}
	var _ memory.Holder = md.a
}

// randomMesh returns a mesh of a few hundred vertices of one of three
// strides and 16- or 32-bit indices.
func randomMesh(r *rand.Rand) mesh.Mesh {
	stride := []uint32{12, 6, 20}[r.IntN(3)]
	v := 16 + r.IntN(400)
	m := mesh.Mesh{VertexStride: stride, Vertices: make([]byte, v*int(stride)), IndexFormat: mesh.Uint16}
	if r.IntN(2) == 0 {
		m.IndexFormat = mesh.Uint32
	}
	m.Indices = make([]byte, (3+r.IntN(600))*int(m.IndexFormat))
	for i := range m.Vertices {
		m.Vertices[i] = byte(r.Uint32())
	}
	return m
}
