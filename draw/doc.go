// Package draw keeps the indirect draw arguments of a mesh.Allocator's
// meshes on the device and packs a frame's draws by slab group, so that a
// renderer draws every mesh of a group with one multi-draw instead of a
// DrawIndexed, a buffer bind and a bind group each.
//
// # Basics
//
// A Table holds one record per mesh it tracks: Args, the 20 bytes of a
// DrawIndexedIndirect (index count, instance count 1, first index, base
// vertex, first instance 0), in a device buffer (Table.Buffer), at the
// record's slot (ID.Slot). Each record belongs to a Group: the meshes whose
// vertex and index arrays lie in the same buffers, drawn with one vertex
// and index binding. A List is a frame's draws: which meshes, how many
// instances, and an object index that reaches the renderer's per-object
// data through the draw's first instance. Pack orders them by group, so
// that each group's draws are one contiguous run (a Span).
//
// The frame loop, after the mesh allocator's own (see package mesh):
//
//	_ = meshes.Flush()                  // place the frame's meshes
//	id, _ := t.Track(h)                 // a mesh new since the last frame
//	_ = t.Remove(id)                    // before or after meshes.Remove(h)
//	cs = meshes.Changes(cs[:0])         // the renderer takes the changes once
//	_ = t.Apply(cs)                     // ... and hands them on; records are written
//	l.Reset()
//	_ = l.Add(id, 1, object)            // every draw of the frame
//	spans := l.Pack()                   // a run of draws per group
//
// List.Version changes only when the list's draws or the records they
// name may have: a list filled again with the draws it held keeps it.
// While it stays, Pack returns the spans it packed last and multidraw
// neither encodes nor uploads the draws again, so a still frame costs the
// renderer its Adds. A renderer that draws the same meshes frame after
// frame (a still scene, or one culled on the GPU) may also keep its List
// instead of filling it again.
//
// and then the render pass side, which device.Device does not have:
// package draw/multidraw turns a packed List into the arguments on the
// device and draws each Span with one MultiDrawIndexedIndirect, or with
// the fallbacks where the device lacks it.
//
// # Invariants
//
//   - After Apply, every tracked mesh's record, on the device and in
//     Table.Record, is what mesh.Allocator.Slices says: IndexCount is the
//     index slice's length, FirstIndex its StartElem, BaseVertex the vertex
//     slice's StartElem, and its Group's buffers are the slices' buffers.
//     Table.Check verifies it.
//   - A group's buffers follow the slab they belong to: a Replaced change
//     (growth, shrink) renames the buffer in the group; offsets survive
//     growth, so no record changes.
//   - A Moved change is what refreshes a record: Apply reads the mesh's
//     Slices and brings the record there, whether a sweep moved the mesh
//     or a Flush re-placed it after a Modify to new sizes.
//
// How records reach the device: a record whose mesh is new, refreshed, or
// moved to another group is written whole; a record whose mesh moved
// within its group has only its first index and base vertex changed, and
// those are patched on the GPU, one device.Patch for every move of the
// Apply (the pattern of meshlet's address words). A sweep moves a few
// hundred scattered meshes a frame: one patch dispatch costs less than as
// many queue writes, and, unlike rewriting the span they cover, its cost
// does not grow with the table (BenchmarkApply measures the three).
//
// # Costs
//
// Track, Remove, Record and List.Add are O(1) and do not allocate
// but to grow their tables. Apply is O(changes + records written); it
// records one patch and one write per run of adjacent records written.
// Pack is O(draws + groups), O(1) for a list whose Version has not changed
// since it was packed. Check is O(records) and waits for the device.
//
// # Caveats
//
// A Table reads the mesh allocator (Slices) but never takes its Changes:
// they are the renderer's to take, once a frame, and hand to Apply. A
// Table and its Lists are not safe for concurrent use, nor concurrently
// with the mesh allocator.
package draw
