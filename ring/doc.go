// Package ring is per-frame GPU memory: a ring buffer for constants, a
// linear per-frame allocator (Frame) for vertex and index scratch, both of which reuse a
// byte only once the GPU has finished every frame that could read it.
//
// # Basics
//
// A frame's memory is handed out during the frame, used by the work the
// caller records, and given up at the frame's end with EndFrame(fence),
// where fence is what device.Device.Fence returned for the submission that
// carries the frame's work. The memory comes back for reuse once
// device.Device.Completed reaches that fence, and never before: the
// package polls Completed (without blocking) at EndFrame and when it runs
// out of room.
//
// Buffer is a ring over one device buffer. Frames follow one another
// around it; a new allocation takes the bytes after the last one, wrapping
// to offset 0 only when the bytes there belong to finished frames. When
// every byte is held by frames in flight, Buffer grows (a new, larger
// device buffer; the old one is released once the frames that use it have
// finished) or returns ErrFull, as Options.Grow says. Offsets are aligned
// to the device's uniform offset alignment (256 bytes by default), so a
// Slice can be bound with a dynamic offset.
//
// Frame is a linear allocator over one block per frame in flight: a frame
// bumps through its own block; EndFrame hands the block to the GPU and the
// next frame takes a block whose fence has completed, or a new one. A
// frame that overflows its block chains another (Options.Grow) or gets
// ErrFull; the next blocks are made as large as the frame needed, so in a
// steady state every frame uses one block.
//
// Units are bytes, and every exported field that holds a byte offset or
// size says so in its name (Slice.OffsetBytes, Slice.SizeBytes,
// BufferOptions.SizeBytes), as mesh.Slice's say elements. Allocations are
// aligned to their Alignment, and their sizes rounded up to it; both are
// powers of two and at least 4, so every Slice can be written with device.Device.WriteBuffer.
//
// # Invariants
//
//   - A byte handed out in a frame is not handed out again, in any buffer,
//     until Completed has reached that frame's fence.
//   - A device buffer a Slice points into stays alive (not released) at
//     least until the fence of the frame the Slice was handed out in.
//   - A failed call changes nothing: no byte, no buffer, no count.
//
// # Caveats
//
// Growth replaces the buffer: a bind group built on the old one must be
// rebuilt for the new one (Changes reports it Replaced). The
// old buffer stays valid for the frame that is open and the frames in
// flight.
//
// Neither type is safe for concurrent use; the caller serializes calls,
// as it does for the device.
package ring
