package mesh_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
	"github.com/gpumem/gpumem/staging"
)

// TestBelt uploads through a staging belt: frames of adds, removes,
// same-size and resizing modifies, sweeps and a large array of its own,
// each frame ended on the belt with its fence, and every resident mesh's
// bytes (and zero padding) checked after each frame. The belt's chunks are
// small, so runs are split over chunks and chunks are reused.
func TestBelt(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		belt, err := staging.New(dev, staging.Options{ChunkBytes: 16 << 10, MaxChunks: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(belt.Release)
		md := newModel(t, dev, mesh.Options{MinSlabBytes: 4096, LargeThresholdBytes: 24 << 10, Belt: belt})
		r := rand.New(rand.NewPCG(5, 6))
		var hs []mesh.Handle
		for frame := range 12 {
			for range 30 {
				hs = append(hs, md.add(t, randMesh(r, 60)))
			}
			if frame == 3 {
				big := randMesh(r, 0)
				big.VertexStride, big.Vertices = 12, make([]byte, 12*3000) // 36 KiB: a buffer of its own
				for i := range big.Vertices {
					big.Vertices[i] = byte(r.Uint32())
				}
				hs = append(hs, md.add(t, big))
			}
			for k := 0; k < 10 && len(hs) > 0; k++ {
				j := r.IntN(len(hs))
				h := hs[j]
				switch k % 3 {
				case 0:
					md.remove(t, h)
					hs = append(hs[:j], hs[j+1:]...)
				case 1:
					md.modify(t, h, randMesh(r, 60))
				case 2:
					md.modifyInPlace(t, h, r)
				}
			}
			md.flush(t)
			if err := md.a.Sweep(arena.SweepLimits{Moves: 8}); err != nil {
				t.Fatal(err)
			}
			fence, err := dev.Fence()
			if err != nil {
				t.Fatal(err)
			}
			if err := belt.EndFrame(fence); err != nil {
				t.Fatal(err)
			}
			md.verify(t)
		}
		if st := belt.Stats(); st.Uploads == 0 {
			t.Fatalf("nothing went through the belt: %+v", st)
		}
	})
}
