package mesh_test

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
)

// hostileStrides are vertex strides whose slot passes 2^32 bytes (an odd
// stride above 2^30 takes four vertices a slot, an even one above 2^31
// two), or whose one vertex passes the device's largest buffer.
var hostileStrides = []uint32{1<<30 + 1, 1<<30 + 3, 1 << 30, 1<<30 - 1, 1<<29 + 2, 1<<28 + 4}

// bigVertex is one shared buffer for the hostile vertices, made once: its
// pages are never touched, as Add refuses them without reading.
var bigVertex = sync.OnceValue(func() []byte { return make([]byte, 1<<30+3) })

// FuzzAllocator drives an allocator with a command stream (add, remove,
// modify in place, resize, flush, sweep, compact) against the model, and
// checks the bookkeeping after every command and the device's bytes after
// every flush, sweep and compaction. Small slabs and a small large
// threshold put every path in reach. Hostile commands add meshes whose
// vertex stride is near 2^30 or 2^32 (one vertex), which Add must refuse
// with ErrInvalidMesh and which must never hold up a later Flush, and
// sweep with a Steps budget, which bounds the ranges moved by the whole
// call. The input's length picks the guard margin (none, or 16 to 1200
// bytes: a slab of 2 KiB holds one array of the largest), which counts
// against a slab's maximum as the arrays do.
func FuzzAllocator(f *testing.F) {
	f.Add([]byte{0, 3, 7, 0, 4, 7, 1, 0, 5, 7, 2, 4, 1, 0, 8, 0, 4})
	f.Add([]byte{0, 0, 0, 4, 1, 5, 2, 4, 3, 4, 6, 5})
	f.Add([]byte{0, 9, 0, 17, 0, 33, 4, 1, 0, 0, 0, 4, 5, 5, 5, 6, 4})
	f.Add([]byte("\x00\x10\x00\x20\x00\x30\x00\x40\x04\x01\x01\x01\x04\x05\x05\x00\x50\x04\x06"))
	f.Fuzz(func(t *testing.T, cmds []byte) {
		if len(cmds) > 300 {
			cmds = cmds[:300]
		}
		dev := testdevice.Host(t, host.Options{})
		md := newModel(t, dev, mesh.Options{MinSlabBytes: 64, MaxSlabBytes: 2048, LargeThresholdBytes: 512, MaxMeshesPerSlab: 64, GuardBytes: []uint32{0, 16, 300, 1200}[len(cmds)%4]})
		r := rand.New(rand.NewPCG(uint64(len(cmds)), 1))
		var hs []mesh.Handle
		pick := func(b byte) (mesh.Handle, int, bool) {
			if len(hs) == 0 {
				return mesh.Handle{}, 0, false
			}
			i := int(b) % len(hs)
			return hs[i], i, true
		}
		for i := 0; i < len(cmds); i++ {
			arg := byte(0)
			if i+1 < len(cmds) {
				arg = cmds[i+1]
			}
			switch cmds[i] % 9 {
			case 0: // add
				i++
				hs = append(hs, md.add(t, randMesh(rand.New(rand.NewPCG(uint64(arg), uint64(i))), int(arg%24))))
			case 1: // remove
				i++
				if h, k, ok := pick(arg); ok {
					md.remove(t, h)
					hs = append(hs[:k], hs[k+1:]...)
				}
			case 2: // modify in place
				i++
				if h, _, ok := pick(arg); ok {
					md.modifyInPlace(t, h, r)
				}
			case 3: // modify with new sizes
				i++
				if h, _, ok := pick(arg); ok {
					md.modify(t, h, randMesh(r, int(arg%24)))
				}
			case 4:
				md.flush(t)
				md.verify(t)
			case 5:
				if err := md.a.Sweep(arena.SweepLimits{Moves: 1 + int(arg%4)}); err != nil {
					t.Fatal(err)
				}
				md.a.Changes(nil)
				md.verify(t)
			case 6:
				if err := md.a.Compact(); err != nil {
					t.Fatal(err)
				}
				md.verify(t)
			case 7: // a hostile stride: refused, never staged
				i++
				stride := hostileStrides[int(arg)%len(hostileStrides)]
				_, err := md.a.Add(mesh.Mesh{VertexStride: stride, Vertices: bigVertex()[:stride]})
				if !errors.Is(err, mesh.ErrInvalidMesh) {
					t.Fatalf("command %d: Add of one %d-byte vertex: %v, want ErrInvalidMesh", i, stride, err)
				}
			case 8: // a sweep of a few steps in all, over every slab
				i++
				steps := 1 + int(arg%4)
				md.a.Changes(nil) // forget what Flush compactions moved
				if err := md.a.Sweep(arena.SweepLimits{Steps: steps}); err != nil {
					t.Fatal(err)
				}
				if n := len(md.a.Changes(nil)); n > steps {
					t.Fatalf("command %d: Sweep of %d steps made %d changes", i, steps, n)
				}
				md.verify(t)
			}
			if err := mesh.Check(md.a); err != nil {
				t.Fatalf("command %d: %v", i, err)
			}
		}
		md.flush(t)
		md.verify(t)
	})
}
