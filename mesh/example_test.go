package mesh_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
)

// triangle returns a triangle's three positions (stride 12) shifted by dx,
// and its indices.
func triangle(dx float32) mesh.Mesh {
	var v []byte
	for _, p := range [][3]float32{{dx, 0, 0}, {dx + 1, 0, 0}, {dx, 1, 0}} {
		for _, f := range p {
			v = binary.LittleEndian.AppendUint32(v, math.Float32bits(f))
		}
	}
	return mesh.Mesh{VertexStride: 12, Vertices: v, IndexFormat: mesh.Uint16, Indices: []byte{0, 0, 1, 0, 2, 0}}
}

// Example walks a frame loop: meshes are staged, flushed into one slab per
// layout, drawn from their slices (base vertex and first index), modified
// in place, removed, and swept, with the moved meshes reported.
func Example() {
	dev, _ := host.New(host.Options{})
	defer dev.Release()
	a, err := mesh.New(dev, mesh.Options{MinSlabBytes: 4096})
	if err != nil {
		panic(err)
	}
	defer a.Release()

	var hs []mesh.Handle
	for i := range 4 {
		h, _ := a.Add(triangle(float32(i)))
		hs = append(hs, h)
	}
	_, _, err = a.Slices(hs[0])
	fmt.Println("before Flush:", err)

	if err := a.Flush(); err != nil { // frame 1: place and upload
		panic(err)
	}
	for _, h := range hs {
		v, i, _ := a.Slices(h)
		fmt.Printf("draw %d indices from %d, base vertex %d\n", i.Len(), i.StartElem, v.StartElem)
	}

	// Frame 2: same sizes rewrite in place; a removal leaves a hole.
	_ = a.Modify(hs[3], triangle(9))
	_ = a.Remove(hs[1])
	_ = a.Flush()
	_ = a.Compact() // or a.Sweep(budget) once a frame
	// Changes reports each moved array (vertex and index) once; draw
	// data is per mesh.
	var moved []mesh.Handle
	for _, c := range a.Changes(nil) {
		if h := mesh.HandleOf(c); c.Kind == memory.Moved && !slices.Contains(moved, h) {
			moved = append(moved, h)
		}
	}
	for _, h := range moved {
		v, i, _ := a.Slices(h)
		fmt.Printf("moved: now base vertex %d, first index %d\n", v.StartElem, i.StartElem)
	}
	st := a.Stats()
	fmt.Printf("%d meshes in %d buffers, %d of %d slab bytes used\n", st.Meshes, st.Buffers(), st.UsedBytes, st.SlabBytes)

	// Output:
	// before Flush: mesh: not resident: handle 1.0
	// draw 3 indices from 0, base vertex 0
	// draw 3 indices from 4, base vertex 3
	// draw 3 indices from 8, base vertex 6
	// draw 3 indices from 12, base vertex 9
	// moved: now base vertex 3, first index 4
	// moved: now base vertex 6, first index 8
	// 3 meshes in 2 buffers, 132 of 8200 slab bytes used
}
