// Package inspect shows GPU memory: a statistics snapshot and a JSON dump
// of every buffer a program's managers hold, and memory maps drawn from a
// dump as SVG, a self-contained HTML page, or PNG.
//
// # Basics
//
// Snapshot takes a Dump of any set of managers in one call: every gpumem
// manager is a memory.Holder that shows its buffers read-only (package
// memory), so a program's memory map is
//
//	d := inspect.Snapshot("my device", "frame 300", meshes, meshlets, textures, constants)
//	inspect.WriteHTML(f, &d)
//
// A Dump is a value: the whole picture at one moment. Each Buffer in it is
// one device buffer (an arena, a slab, a page of textures), given as the
// Regions that tile it in address order: allocations, with their owner's
// kind and name, and free regions. Rename gives allocations the program's
// own names (managers name them by handle or source id); MarkMoved marks
// what moved since an earlier snapshot (striped on the maps). New makes a
// Dump of buffers built by hand (memory.NewBuffer, arena.Arena.Snapshot).

// WriteSVG, WriteHTML and WritePNG draw a dump's memory map: a bar per
// buffer, or for a texture array (Buffer.Layers) a grid of its layers.
// MapSVG and StatsTable give the pieces for a page of one's own (gpumem
// demo's report), and Plot draws series over frames as SVG line charts,
// stacked or not, with markers and the values under the pointer on hover.
//
// Units: every offset and size in a Dump is in bytes. An allocation's Size
// is what its allocator holds for it; Used is what its owner asked for;
// Size-Used is bin-rounding slack, drawn lighter on the maps.
//
// # Schema (version 1)
//
// WriteJSON writes, and ReadJSON reads, this JSON object. The schema is
// stable: a change that would make an old reader misread a dump bumps
// Version; new fields may be added without a bump, and readers ignore
// fields they do not know.
//
//	{
//	  "version": 1,                  // Version; ReadJSON refuses others
//	  "device": "host",              // the device, in words
//	  "label": "frame 300",          // what the dump is of (optional)
//	  "buffers": [{
//	    "name": "meshes/vertex",     // the buffer's label
//	    "kind": "vertex slab",       // what it is (memory.Kind's String)
//	    "elem_bytes": 32,            // allocation unit (optional)
//	    "capacity_bytes": 1048576,
//	    "usage": "Vertex|CopySrc|CopyDst", // usage flags (optional; a
//	                                 // texture array's are Texture...)
//	    "layers": 0,                 // a texture array's layers of
//	                                 // elem_bytes each (optional)
//	    "regions": [                 // tile [0, capacity_bytes) in order
//	      {"offset": 0, "size": 4096, "used": 4000, "state": "used",
//	       "kind": "vertex", "name": "zone1/mesh3"},
//	      {"offset": 4096, "size": 1044480, "state": "free"}
//	    ],
//	    "stats": { ...Stats... }
//	  }],
//	  "totals": { ...Stats... }      // the buffers' stats added up
//	}
//
// A buffer's "kind" is one of memory.Kind's names ("arena", "vertex
// slab", "index slab", "vertex buffer", "index buffer", "meshlet arena",
// "texture page", "ring buffer", "frame block", "staging chunk", "pool
// buffer") or "" for a buffer built by hand; ReadJSON refuses any other.
// JSON keys may come in any order.
//
// A region's "state" is "used" (a live allocation), "moving" (a live
// allocation that moved during the dump's frame: MarkMoved found it at
// another place of its buffer in the snapshot before, at the same size)
// or "free". "used" (the bytes asked for, at most
// "size"), "kind" and "name" are absent for free regions; "kind" is the
// owner's kind ("vertex", "index", "meshlet-data", ...), which the maps
// color by.
//
// Stats keys: "buffers", "capacity_bytes", "reserved_bytes" (held by
// allocations), "occupied_bytes" (asked for), "slack_bytes" (reserved -
// occupied), "free_bytes", "largest_free_bytes", "allocations",
// "moving", "free_regions", "fragmentation" (1 - largest free / free, 0
// when nothing is free; for totals, 1 - the sum of the buffers' largest
// free regions / the free bytes); of the dump's frame, from managers that
// count them, "frame_moves" and "frame_bytes_moved" (an allocation moved
// during the frame is "moving"; one moved twice counts twice in
// frame_moves); and the history since the manager started, "history"
// (true when it is counted, so that zeros mean none), "growths", "moves",
// "bytes_moved", "bytes_copied", "sweeps_completed", "full_compactions"
// (each omitted when zero).
//
// # Caveats
//
// A dump read from a file is checked (ErrInvalidDump) before anything is
// drawn from it; a Dump built in the program is checked by the renderers.
// Maps are deterministic: the same dump gives the same bytes.
//
// Nothing in the package keeps state; its functions are safe for
// concurrent use on distinct values.
package inspect
