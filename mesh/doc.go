// Package mesh packs the vertex and index arrays of many meshes into a few
// shared device buffers, slabs, so a renderer draws them back to back
// without rebinding, and keeps them packed as meshes come, change and go.
//
// # Basics
//
// An Allocator keeps slabs per element Layout: vertices of one stride, or
// uint16 or uint32 indices. Each slab is an arena (package arena) whose
// elements are slots: one or more whole elements making a multiple of 4
// bytes (see Layout), so every range starts and ends where device copies
// may. Ranges are reported in elements: a Slice is a buffer and
// [StartElem, EndElem) in vertices or indices, to draw with base vertex (or
// first index) StartElem.
//
// A mesh whose attributes live in separate arrays (positions, normals,
// texture coordinates, each of its own stride: Mesh.Streams) is placed
// in slabs of one buffer per stream, allocated in lockstep (arena
// planes): its vertices start at one element in every stream, so one
// base vertex draws them all, binding Streams' buffers to the vertex
// buffer slots. Each stream takes its own bytes only, as in a buffer of
// its own, up to a slot's padding.
//
// The frame loop:
//
//	h, _ := a.Add(m)        // staged: nothing placed, not resident
//	_ = a.Modify(h, m2)     // same sizes: rewritten in place; else re-placed
//	_ = a.Remove(other)     // ranges given back now
//	_ = a.Flush()           // place and upload (see Allocator.Flush)
//	_ = a.Sweep(budget)     // optional: bounded compaction
//	for _, c := range a.Changes(cs[:0]) { ... rebuild what c names ... }
//	v, i, _ := a.Slices(h)  // draw
//
// Flush places the staged arrays in slabs, growing them as its doc says,
// and uploads them. Arrays at or above Options.LargeThresholdBytes, and
// with Options.NoBaseVertex every vertex array, get a buffer of their
// own. A slab left empty is released at the next Flush. Slabs start at
// Options.MinSlabBytes and grow by Options.GrowthFactor up to
// Options.MaxSlabBytes (clamped to the device's largest buffer); a full
// slab leaves new arrays to a new slab.
//
// Slabs compact: Sweep moves a bounded number of ranges per call over the
// slabs whose free space is in pieces, Compact packs them all, and a Flush
// may compact a slab to make room. Every range moved, and every slab
// buffer replaced or released, is reported by Changes (memory.Change).
//
// # Invariants
//
//   - A resident mesh's arrays are, byte for byte, where Slices says: as
//     given to the last Add or Modify taken by a successful Flush,
//     whatever growth, sweep or compaction happened since. The padding of
//     a range's last slot is zeros.
//   - Ranges of live meshes never overlap; a slab holds arrays of one
//     layout only; a mesh with an empty array has no range for it (the
//     zero Slice).
//   - A mesh is resident from the Flush that takes it after its Add until
//     Remove. A Modify keeps it resident and drawn as it was until the
//     Flush that takes it: the same sizes are rewritten in place then; new
//     sizes keep the old ranges until then, and that Flush reports the new
//     ones (Moved) and gives the old back. Every Flush takes every staged mesh, unless
//     Options.MaxFlushBytes bounds it: then it takes them in staging
//     order while under the bound, at least one, and leaves the rest.
//   - A failed Flush places nothing, leaves staged meshes staged and
//     resident meshes' data intact; it can be retried.
//
// # Costs
//
// Add, Modify, Remove, Resident and Slices are O(1) (Slices does not
// allocate; Add allocates only to grow its tables). Flush's cost is in its
// doc. Sweep is O(slabs + budget). Stats is O(slabs).
//
// # Lifetimes
//
// Add and Modify keep a reference to the mesh's byte slices until the
// Flush that uploads them: do not change them before. A Slice's Buffer is
// valid until the next Flush, Sweep, Compact, Shrink or Release: growth
// and shrinking replace a slab's buffer and sweeps move ranges, and
// Changes reports both. Buffers are released once the device is done with
// the work recorded on them, so draws already recorded stay right. Handles die with Remove and
// Release; a stale handle is reported, never reused by mistake (handles
// carry a generation).
//
// # Caveats
//
// A device error other than a refused buffer (a lost device) leaves the
// contents unspecified. An Allocator is not safe for concurrent use: one
// goroutine (the render loop's) owns it, and loading goroutines stage
// meshes through Loaders, which its Flush takes.
package mesh
