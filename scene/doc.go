// Package scene is the workload gpumem's demo streams and its examples
// draw, in one package a program can import to see gpumem at work on its
// own device.
//
// It holds two things that share the managers and the checks:
//
//   - Stream runs the demo: a camera travels along a loop of zones, the
//     zones near it stream in a few items a frame and the ones it leaves
//     unload, each manager (mesh, meshlet, bindless, ring, frame arena,
//     pool, and a staging belt and a budget where asked) with its
//     workload, for Options.Frames frames on any device.Device. The Run
//     it returns writes the summary (WriteSummary) and a self-contained
//     HTML report with plots and memory maps (WriteReport); Last is the
//     last frame's dump, as inspect.Snapshot gives it.
//   - Scene and Renderer are the examples' scene: a few hundred textured
//     meshes streaming in and out of a grid of tiles (Scene, without a
//     GPU), drawn by a small WebGPU renderer (Renderer) whose meshes live
//     in gpumem's mesh slabs, whose textures live in its bindless pages
//     and whose per-frame constants live in its ring. examples/offscreen
//     renders it to a PNG, examples/window to a window, examples/browser
//     to a web page.
//
// # Invariants
//
//   - The same seed gives the same scene: Scene's items, and Stream's
//     figures on every device, timings aside.
//   - No byte is lost: Stream spot-checks what it wrote by read-back every
//     frame and reads back every live mesh, batch, texture and frame in
//     flight at its end; Renderer.CheckMeshes reads back every live mesh.
//     A mismatch is an error, never a log line.
//   - What a buffer is comes from its memory.Kind, never its name: the
//     summary groups buffers by kind and element size, the plots by kind.
//   - The maps and figures are the managers' own (memory.Holder through
//     inspect.Snapshot); nothing here rebuilds them.
//
// # Caveats
//
// Stream makes and releases its managers on the device it is given and
// leaves the device to the caller; it is not safe for concurrent use of
// one device by other work. A Renderer works on a webgpu device only
// (it draws with the WebGPU binding) and is used from one goroutine.
package scene
