package inspect_test

import (
	"fmt"
	"io"
	"os"

	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/mesh"
	"github.com/gpumem/gpumem/ring"

	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
)

// A manager that keeps its own records contributes a buffer from its live
// regions; the gaps become free regions, and the dump adds up the totals.
func Example() {
	b, err := memory.NewBuffer("meshes/index", memory.IndexSlab, 4096, []memory.Region{
		{Offset: 0, Size: 1024, Used: 960, Kind: "index", Name: "zone1/mesh0"},
		{Offset: 2048, Size: 512, Kind: "index", Name: "zone1/mesh1", State: memory.StateMoving},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	d := inspect.New("host", "frame 1", b)
	d.WriteJSON(os.Stdout)
	fmt.Printf("fragmentation %.2f\n", d.Totals.Fragmentation)
	// Output:
	// {
	//  "version": 1,
	//  "device": "host",
	//  "label": "frame 1",
	//  "buffers": [
	//   {
	//    "name": "meshes/index",
	//    "kind": "index slab",
	//    "capacity_bytes": 4096,
	//    "regions": [
	//     {
	//      "offset": 0,
	//      "size": 1024,
	//      "used": 960,
	//      "state": "used",
	//      "kind": "index",
	//      "name": "zone1/mesh0"
	//     },
	//     {
	//      "offset": 1024,
	//      "size": 1024,
	//      "state": "free"
	//     },
	//     {
	//      "offset": 2048,
	//      "size": 512,
	//      "used": 512,
	//      "state": "moving",
	//      "kind": "index",
	//      "name": "zone1/mesh1"
	//     },
	//     {
	//      "offset": 2560,
	//      "size": 1536,
	//      "state": "free"
	//     }
	//    ],
	//    "stats": {
	//     "buffers": 1,
	//     "capacity_bytes": 4096,
	//     "reserved_bytes": 1536,
	//     "occupied_bytes": 1472,
	//     "slack_bytes": 64,
	//     "free_bytes": 2560,
	//     "largest_free_bytes": 1536,
	//     "allocations": 2,
	//     "moving": 1,
	//     "free_regions": 2,
	//     "fragmentation": 0.4
	//    }
	//   }
	//  ],
	//  "totals": {
	//   "buffers": 1,
	//   "capacity_bytes": 4096,
	//   "reserved_bytes": 1536,
	//   "occupied_bytes": 1472,
	//   "slack_bytes": 64,
	//   "free_bytes": 2560,
	//   "largest_free_bytes": 1536,
	//   "allocations": 2,
	//   "moving": 1,
	//   "free_regions": 2,
	//   "fragmentation": 0.4
	//  }
	// }
	// fragmentation 0.40
}

// One call maps a program's memory: every manager is a memory.Holder, so
// Snapshot takes a dump of any set of them, which WriteHTML (or
// WriteSVG, WritePNG, WriteJSON) turns into a memory map.
func ExampleSnapshot() {
	dev, _ := host.New(host.Options{})
	defer dev.Release()
	meshes, _ := mesh.New(dev, mesh.Options{Label: "meshes"})
	defer meshes.Release()
	constants, _ := ring.NewBuffer(dev, ring.BufferOptions{Label: "constants"})
	defer constants.Release()

	// A frame: two meshes and a block of constants.
	tri := mesh.Mesh{VertexStride: 12, Vertices: make([]byte, 3*12), IndexFormat: mesh.Uint16, Indices: make([]byte, 3*2)}
	h, _ := meshes.Add(tri)
	meshes.Add(tri)
	meshes.Flush()
	constants.Write(make([]byte, 208))

	d := inspect.Snapshot("host", "frame 1", meshes, constants)
	names := map[string]string{h.String(): "triangle"}
	d.Rename(func(r memory.Region) string { return names[r.Name] })
	for _, b := range d.Buffers {
		fmt.Printf("%s (%s): %d allocations, %d of %d bytes\n", b.Name, b.Kind, b.Stats.Allocations, b.Stats.OccupiedBytes, b.CapacityBytes)
		for _, r := range b.Regions {
			if r.Live() {
				fmt.Printf("  %s %s at %d, %d bytes\n", r.Kind, r.Name, r.Offset, r.Used)
			}
		}
	}
	if err := inspect.WriteHTML(io.Discard, &d); err != nil { // or to a file: the map
		fmt.Println(err)
	}
	// Output:
	// meshes: slab of 12-byte vertices #1 (vertex slab): 2 allocations, 72 of 1048584 bytes
	//   vertex triangle at 0, 36 bytes
	//   vertex handle 2.0 at 36, 36 bytes
	// meshes: slab of uint16 indices #2 (index slab): 2 allocations, 12 of 1048576 bytes
	//   index triangle at 0, 6 bytes
	//   index handle 2.0 at 8, 6 bytes
	// constants (ring buffer): 1 allocations, 256 of 65536 bytes
	//   ring open frame at 0, 256 bytes
}
