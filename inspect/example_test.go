package inspect_test

import (
	"fmt"
	"os"

	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
)

// A manager that keeps its own records contributes a buffer from its live
// regions; the gaps become free regions, and the dump adds up the totals.
func Example() {
	b, err := memory.NewBuffer("meshes/index", "arena", 4096, []inspect.Region{
		{Offset: 0, Size: 1024, Used: 960, Kind: "index", Name: "zone1/mesh0"},
		{Offset: 2048, Size: 512, Kind: "index", Name: "zone1/mesh1", State: inspect.StateMoving},
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
	//    "kind": "arena",
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
