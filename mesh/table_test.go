package mesh_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
)

// op is one step of a table test: add a mesh (stride, vertices, index
// format, indices), remove or resize the i-th mesh added, flush, or
// compact.
type op struct {
	kind           string // "add", "remove", "resize", "flush", "compact"
	stride, nv     int
	format         mesh.IndexFormat
	ni             int
	i              int // mesh, by order of adding
	wantVertexFrom int // after a flush: where mesh i's vertices start (-1: unchecked)
}

func add(stride, nv int, f mesh.IndexFormat, ni int) op {
	return op{kind: "add", stride: stride, nv: nv, format: f, ni: ni}
}

// flushAt flushes and checks that mesh i's vertex range starts at from.
func flushAt(i, from int) op { return op{kind: "flush", i: i, wantVertexFrom: from} }

var flush = op{kind: "flush", wantVertexFrom: -1}

func TestTable(t *testing.T) {
	type after struct{ slabs, own, growths, slabBytes int }
	for _, c := range []struct {
		name string
		set  mesh.Options
		ops  []op
		want after
	}{
		{"nothing", mesh.Options{}, []op{flush}, after{}},
		{"empty meshes take no buffer", mesh.Options{}, []op{add(12, 0, 0, 0), add(0, 0, mesh.Uint16, 0), flush}, after{}},
		{"one slab per layout", mesh.Options{MinSlabBytes: 1200},
			// A frame places its largest arrays first.
			[]op{add(12, 3, mesh.Uint16, 3), add(12, 5, mesh.Uint16, 3), add(24, 1, mesh.Uint32, 3), flushAt(0, 5)},
			after{slabs: 4, slabBytes: 1200 + 1200 + 1200 + 1200}},
		{"slots of 2 and 4 elements", mesh.Options{MinSlabBytes: 120},
			// 6-byte vertices: slots of 12 bytes; 3 vertices take 2 slots,
			// so the next mesh starts at vertex 4.
			[]op{add(6, 3, 0, 0), add(6, 1, 0, 0), add(3, 5, 0, 0), flushAt(1, 4)},
			after{slabs: 2, slabBytes: 120 + 120}},
		{"a new slab is sized for its first frame", mesh.Options{MinSlabBytes: 64},
			[]op{add(16, 100, 0, 0), add(16, 20, 0, 0), flushAt(1, 100)},
			after{slabs: 1, slabBytes: 16 * 124}}, // 100 and 20 round up to their bins, 104 and 20
		{"growth once for a frame", mesh.Options{MinSlabBytes: 64 * 16, GrowthFactor: 2},
			// 60 used of 64; the frame's 90 need 60+96 (90's bin), more
			// than twice 64.
			[]op{add(16, 60, 0, 0), flush, add(16, 30, 0, 0), add(16, 30, 0, 0), add(16, 30, 0, 0), flushAt(3, 120)},
			after{slabs: 1, growths: 1, slabBytes: 16 * 156}},
		{"a removal's hole is reused without growth", mesh.Options{MinSlabBytes: 16 * 64},
			[]op{add(16, 30, 0, 0), add(16, 30, 0, 0), flush, {kind: "remove", i: 0}, add(16, 20, 0, 0), flushAt(2, 0)},
			after{slabs: 1, slabBytes: 16 * 64}},
		{"resize re-places, compaction packs", mesh.Options{MinSlabBytes: 16 * 64},
			[]op{add(16, 10, 0, 0), add(16, 10, 0, 0), flush, {kind: "resize", i: 0, nv: 40}, flush, {kind: "compact"}, flushAt(1, 0)},
			after{slabs: 1, slabBytes: 16 * 64}},
		{"large arrays get their own buffer", mesh.Options{LargeThresholdBytes: 160},
			[]op{add(16, 10, mesh.Uint32, 40), add(16, 9, mesh.Uint32, 39), flush},
			after{slabs: 2, own: 2, slabBytes: 2 << 20}},
		{"empty slabs are released", mesh.Options{MinSlabBytes: 256},
			[]op{add(16, 10, 0, 0), add(20, 10, 0, 0), flush, {kind: "remove", i: 0}, flush},
			after{slabs: 1, slabBytes: 260}},
	} {
		t.Run(c.name, func(t *testing.T) {
			md := newModel(t, testdevice.Host(t, host.Options{}), c.set)
			r := rand.New(rand.NewPCG(13, 13))
			var hs []mesh.Handle
			for k, o := range c.ops {
				switch o.kind {
				case "add":
					hs = append(hs, md.add(t, fixedMesh(r, uint32(o.stride), o.nv, o.format, o.ni)))
				case "remove":
					md.remove(t, hs[o.i])
				case "resize":
					old := md.meshes[hs[o.i]].m
					md.modify(t, hs[o.i], fixedMesh(r, old.VertexStride, o.nv, 0, 0))
				case "compact":
					if err := md.a.Compact(); err != nil {
						t.Fatal(err)
					}
				case "flush":
					md.flush(t)
					if o.wantVertexFrom >= 0 {
						v, _, _ := md.a.Slices(hs[o.i])
						if int(v.StartElem) != o.wantVertexFrom {
							t.Fatalf("op %d: mesh %d's vertices start at %d, want %d", k, o.i, v.StartElem, o.wantVertexFrom)
						}
					}
				}
				md.verify(t)
			}
			st := md.a.Stats()
			got := after{st.Slabs, st.OwnBuffers, int(st.Growths), int(st.SlabBytes)}
			if got != c.want {
				t.Fatalf("after: %+v, want %+v", got, c.want)
			}
		})
	}
}
