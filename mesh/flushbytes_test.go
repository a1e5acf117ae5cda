package mesh_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
)

// placedBytes is what a mesh's arrays take placed: whole slots.
func placedBytes(m mesh.Mesh) uint64 {
	var n uint64
	if len(m.Vertices) > 0 {
		l := mesh.VertexLayout(m.VertexStride)
		n += uint64(l.Slots(uint32(len(m.Vertices))/m.VertexStride)) * uint64(l.SlotBytes())
	}
	if len(m.Indices) > 0 {
		l := mesh.IndexLayout(m.IndexFormat)
		n += uint64(l.Slots(uint32(len(m.Indices)/int(m.IndexFormat)))) * uint64(l.SlotBytes())
	}
	return n
}

// TestMaxFlushBytes: with Options.MaxFlushBytes each Flush takes the
// staged meshes in staging order while the bytes taken are under the
// bound (one at least, however large), leaves the rest staged and not
// resident, keeps the old bytes of a mesh whose rewrite in place it left,
// skips meshes removed while left; every mesh ends resident, its bytes
// intact, in as many Flushes as the bound implies.
func TestMaxFlushBytes(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		const limit = 16 << 10
		md := newModel(t, dev, mesh.Options{MaxFlushBytes: limit, MinSlabBytes: 4 << 10})
		r := rand.New(rand.NewPCG(31, 31))
		// Resident first, in one Flush of its own: the rewrite target.
		old := md.add(t, fixedMesh(r, 12, 40, mesh.Uint16, 60))
		md.flush(t)
		var order []mesh.Handle // staged, in order
		for i := range 60 {
			nv := 20 + r.IntN(300)
			if i == 7 {
				nv = 3000 // 36 KB of vertices alone: over the bound
			}
			order = append(order, md.add(t, fixedMesh(r, []uint32{12, 20, 6}[i%3], nv, mesh.Uint32, 3*nv)))
			if i == 30 {
				md.modifyInPlace(t, old, r) // staged after 31 adds: left by the first Flushes
				order = append(order, old)
			}
		}
		removed := order[45] // zero once removed
		gone := removed
		flushes := 0
		for len(order) > 0 {
			before := md.a.Stats()
			if before.Pending != len(order) {
				t.Fatalf("flush %d: %d pending, want %d", flushes, before.Pending, len(order))
			}
			// What this Flush must take: in order, while under the limit.
			var want int
			var bytes uint64
			for want < len(order) && (want == 0 || bytes < limit) {
				bytes += placedBytes(md.meshes[order[want]].m)
				want++
			}
			if err := md.a.Flush(); err != nil {
				t.Fatal(err)
			}
			flushes++
			for i, h := range order {
				e := md.meshes[h]
				if i < want {
					e.resident, e.onDevice = true, e.m
				}
				if got := md.a.Resident(h); got != e.resident {
					t.Fatalf("flush %d: mesh %d of the %d staged resident %v, want %v (taking %d)", flushes, i, len(order), got, e.resident, want)
				}
				if got := md.a.Staged(h); got != (i >= want) {
					t.Fatalf("flush %d: mesh %d of the %d staged: Staged %v, want %v (taking %d)", flushes, i, len(order), got, i >= want, want)
				}
			}
			if up := md.a.Stats().BytesUploaded - before.BytesUploaded; up > bytes || want > 1 && up >= limit+placedBytes(md.meshes[order[want-1]].m) {
				t.Fatalf("flush %d: uploaded %d bytes taking %d meshes of %d bytes, bound %d", flushes, up, want, bytes, limit)
			}
			md.verify(t) // old's place holds its old bytes until it is taken
			order = order[want:]
			if removed != (mesh.Handle{}) && len(order) > 0 && order[0] != removed {
				for i, h := range order {
					if h == removed {
						md.remove(t, h)
						order = append(order[:i:i], order[i+1:]...)
						removed = mesh.Handle{}
						break
					}
				}
			}
		}
		if flushes < 5 {
			t.Fatalf("%d Flushes took everything: the bound did not spread them", flushes)
		}
		if st := md.a.Stats(); st.Pending != 0 {
			t.Fatalf("%d left pending", st.Pending)
		}
		for h := range md.meshes {
			if md.a.Staged(h) {
				t.Fatalf("mesh %v still staged after the last Flush", h)
			}
		}
		if removed != (mesh.Handle{}) || md.a.Staged(gone) || md.a.Staged(mesh.Handle{}) {
			t.Fatal("the mesh to remove was not removed while staged, or a removed or zero handle reads as staged")
		}
	})
}
