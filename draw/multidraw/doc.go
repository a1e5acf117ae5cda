//go:build cgo || js

// Package multidraw draws a packed draw.List in a WebGPU render pass: each
// Span of the list with one MultiDrawIndexedIndirect where the device can,
// from arguments a compute pass expands on the GPU out of the table's
// records.
//
// # Basics
//
// A Drawer draws in one of three modes (Mode), chosen once by New:
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
//     mode a device allows.
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
//	_, err = d.Draw(pass)               // vertex slot 0 and the index buffer are the Drawer's
//
// # Caveats
//
// Prepare writes the draws through gpumem's device (a queue write), so it
// takes effect before the renderer's next submit, as gpumem's own work
// does: call gpumem's Submit before submitting the encoder. One Prepare
// per submit: a second overwrites the first's arguments. A Drawer is not
// safe for concurrent use.
package multidraw
