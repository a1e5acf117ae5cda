// Package staging is an upload belt: bytes bound for device buffers are
// written into mapped staging chunks and copied on the GPU, and a chunk is
// written again only once the GPU has finished copying out of it.
//
// # Basics
//
// A Belt owns chunks: device buffers of ChunkBytes bytes with usage
// MapWrite|CopySrc. Upload writes the caller's bytes into the current
// chunk through its mapping (device.Device.WriteBuffer on a MapWrite
// buffer: on a GPU, a memcpy into memory the GPU reads, with no staging
// copy of the backend's own) and records a copy from there to the
// destination. Uploads larger than what is left in a chunk are split over
// chunks. EndFrame(fence) gives the frame's chunks to the GPU until the
// device completes fence; chunks whose fence completed are reused, oldest
// first.
//
// UploadFunc lets the caller write an upload's bytes straight into the
// chunk (device.FillBuffer) instead of copying them from a slice: a caller
// that gathers many small pieces into one upload (the mesh allocator
// gathers adjacent arrays and their padding) saves a copy of every byte.
//
// Upload takes effect in call order, like any device call: a copy, draw or
// read recorded after it sees the bytes.
//
// When an upload has left Options.SubmitChunks written chunks for the
// next since the last submit, the belt submits the work recorded so far
// (device.Device.Submit; Stats().Submits), so that the GPU copies out of
// the full chunks while the CPU fills the next. A submit costs the caller
// time of its own, so the belt makes one per few chunks, not per chunk.
// What a frame uploads beyond its last such submit is submitted by the
// caller (its Fence).
//
// When every chunk the belt may have (MaxChunks) is in use, Upload fences
// what it has written and waits for the GPU (device.Device.Wait): a bulk
// upload larger than the belt streams through it, never fails for want of
// chunks and never writes a chunk the GPU still reads.
//
// UploadTexture writes one layer's mip of a texture into a chunk, its rows
// BytesPerRowAlignment apart, and records a copyBufferToTexture
// (device.Device.CopyBufferToTexture).
//
// The mesh allocator, the meshlet manager and the bindless registry upload
// through a Belt when given one (their Options.Belt); a program can use
// one for its own uploads too.
//
// Against queue writes (WriteBuffer to the CopyDst destination): a GPU
// backend's queue write copies the bytes into a staging buffer it makes
// for that write, then copies on the GPU; the belt skips making that
// buffer, reusing chunks that are mapped and paged in already. The
// package's benchmarks compare the two on each device.
//
// # Invariants
//
//   - A chunk is written only when no fence it was used under is pending:
//     it is new, free (its fence completed), or the open frame's.
//   - Every chunk is in exactly one place: the open frame's (current or
//     filled), in flight with a fence, or free.
//
// # Caveats
//
// On webgpu a chunk stays mapped until the next submit, and a submit
// unmaps it; any submit in the middle of a frame (Submit, Fence, a read,
// or a WriteBuffer to a CopyDst buffer, which submits what is recorded
// first) makes the belt's next write into that chunk map it again, which
// waits for the GPU. Keep a frame's uploads on the belt, or batch queue
// writes before or after them.
//
// A Belt is not safe for concurrent use.
package staging
