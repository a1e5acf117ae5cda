//go:build cgo || js

// Package multidraw draws a packed draw.List in a WebGPU render pass: each
// Span of the list with one MultiDrawIndexedIndirect where the device can,
// from arguments a compute pass expands on the GPU out of the table's
// records.
//
// # Basics
//
// A Drawer draws in one of four modes (Mode), chosen once by New:
//
//   - MultiDraw: Prepare uploads the list's draws (record slot, instance
//     count, object: 12 bytes a draw) and records a compute pass that
//     expands them, with the table's records, into DrawIndexedIndirect
//     arguments in a buffer of the Drawer's, packed by span; Draw binds
//     each span's vertex and index buffers and issues one
//     MultiDrawIndexedIndirect for it. wgpu-native offers multi-draw on
//     every native backend (emulated as a loop where the API lacks it), so
//     the one capability it needs is a draw's first instance in an
//     indirect draw: wgpu.FeatureNameIndirectFirstInstance, which the
//     renderer must request when it creates its device. Best reports the
//     mode a device allows. Under wgpu-native's default instance flags,
//     which validate indirect draws, the renderer's encoder Finish does
//     CPU work for every draw of a MultiDrawIndexedIndirect; an instance
//     made without that flag, or MultiDrawCount, does not pay it.
//   - MultiDrawCount: as MultiDraw, but each span is one
//     MultiDrawIndexedIndirectCount, its count uploaded with the draws
//     (over its visible draws only in a culled frame: see Culling). It
//     needs wgpu.NativeFeatureMultiDrawIndirectCount besides, and is what
//     Best reports where the device has it.
//   - Indirect: as MultiDraw, with one DrawIndexedIndirect per draw. It
//     is there to be forced, for comparison and tests.
//   - Direct: one DrawIndexed per draw, its arguments from the table's
//     copy in memory (draw.List.Args). The fallback where indirect first
//     instance is missing, and in the browser, where the binding has no
//     indirect draws (GOOS=js builds offer Direct only).
//
// Every mode draws the same triangles with the same instance indices, so
// the images are equal (the package's tests compare them pixel for pixel).
//
// The frame, after the table's Apply and before the renderer's submit:
//
//	spans, err := d.Prepare(enc, list) // in the renderer's encoder, before its render pass
//	pass := enc.BeginRenderPass(...)
//	pass.SetPipeline(...); pass.SetBindGroup(...)
//	_, err = d.Draw(pass)               // the vertex slots of the group's streams and the index buffer are the Drawer's
//
// # Culling
//
// PrepareCulled is Prepare with a test of every draw on the GPU: the
// compute pass reads the draw's object's Sphere from a bounds buffer the
// renderer keeps (a Storage buffer of gpumem's device, a Sphere per object
// index: the draw's first instance) and keeps the draw unless the sphere
// lies wholly outside one of a Frustum's six planes (FrustumOf makes them
// from a view-projection matrix). What the culled draws become depends on
// the mode:
//
//   - MultiDrawCount: the pass writes each span's kept draws to the front
//     of the span's arguments, in no particular order, and counts them in
//     a buffer of the Drawer's; Draw passes the count to
//     MultiDrawIndexedIndirectCount, so culled draws cost the GPU nothing.
//   - MultiDraw and Indirect, the fallbacks of a device without the count
//     feature: the pass writes every draw in place, a culled one with no
//     instances, and Draw issues them all.
//
// Direct mode cannot cull (ErrUnsupported): its arguments never reach the
// device. Every culling mode draws what Prepare draws of a list that holds
// only the kept draws (the package's tests compare the images pixel for
// pixel).
//
// The culled frame, with bounds written where objects move:
//
//	_ = gdev.WriteBuffer(bounds, SphereBytes*uint64(object), s.Append(nil))
//	spans, err := d.PrepareCulled(enc, list, bounds, FrustumOf(viewProj))
//	pass := enc.BeginRenderPass(...)
//	_, err = d.Draw(pass)
//
// # Caveats
//
// Prepare writes the draws through gpumem's device (a queue write), so it
// takes effect before the renderer's next submit, as gpumem's own work
// does: call gpumem's Submit before submitting the encoder. One Prepare
// per submit: a second overwrites the first's arguments (and frustum). A
// Prepare whose draws are those of the last skips their upload; a Prepare
// of the list it prepared last, at the same draw.List.Version, encodes
// nothing either. Every Prepare records its expansion (or culling) pass:
// the arguments are made again each frame, so a frame whose encoder is
// dropped unsubmitted leaves nothing stale behind. A Drawer is not safe
// for concurrent use.
//
// wgpu-native's default instance flags validate the arguments of every
// indirect draw when the encoder finishes, in CPU time linear in the draws
// of each MultiDrawIndexedIndirect: most of a large list's CPU cost in
// MultiDraw mode. MultiDrawIndexedIndirectCount does not pay it, which is
// why MultiDrawCount mode draws every frame counted; the arguments it
// reads are the table's, which Apply keeps within the slabs. A renderer
// in MultiDraw mode that trusts its records may create its instance
// without that flag.
package multidraw
