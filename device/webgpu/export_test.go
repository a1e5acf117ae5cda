package webgpu

// SetMoveChunk makes chunk (a multiple of 16) the most bytes of one move
// table entry of d, in place of chunkBytes; 0 restores it. Benchmarks
// compare entry sizes with it.
func SetMoveChunk(d *Device, chunk uint64) { d.tables.chunk = chunk }
