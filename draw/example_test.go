package draw_test

import (
	"fmt"

	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/draw"
	"github.com/gpumem/gpumem/mesh"
)

// A frame of the loop the package doc shows: two meshes placed, tracked,
// applied, and drawn as one run of their slab group.
func Example() {
	dev, _ := host.New(host.Options{})
	defer dev.Release()
	meshes, _ := mesh.New(dev, mesh.Options{})
	defer meshes.Release()
	t, _ := draw.NewTable(dev, meshes, "example")
	defer t.Release()
	list, _ := draw.NewList(t, 100)

	tri := mesh.Mesh{VertexStride: 8, Vertices: make([]byte, 3*8), IndexFormat: mesh.Uint16, Indices: make([]byte, 4*2)}
	quad := mesh.Mesh{VertexStride: 8, Vertices: make([]byte, 4*8), IndexFormat: mesh.Uint16, Indices: make([]byte, 6*2)}
	h1, _ := meshes.Add(tri)
	h2, _ := meshes.Add(quad)
	_ = meshes.Flush()
	id1, _ := t.Track(h1, mesh.Uint16)
	id2, _ := t.Track(h2, mesh.Uint16)
	_ = t.Apply(meshes.Changes(nil))

	list.Reset()
	_ = list.Add(id1, 1, 0) // object 0
	_ = list.Add(id2, 5, 1) // objects 1 to 5
	spans, _ := list.Pack()
	for _, s := range spans {
		fmt.Printf("span of %d draws from %d\n", s.Count, s.First)
		for i := s.First; i < s.First+s.Count; i++ {
			a := list.Args(int(i))
			fmt.Printf("  %d indices from %d, base vertex %d, %d instances from %d\n",
				a.IndexCount, a.FirstIndex, a.BaseVertex, a.InstanceCount, a.FirstInstance)
		}
	}
	fmt.Println(t.Check())
	// Output:
	// span of 2 draws from 0
	//   4 indices from 6, base vertex 4, 1 instances from 0
	//   6 indices from 0, base vertex 0, 5 instances from 1
	// <nil>
}
