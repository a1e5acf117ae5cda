package webgpu

import "fmt"

// SetMoveChunk makes chunk (a multiple of 16) the most bytes of one move
// table entry of d, in place of chunkBytes; 0 restores it. Benchmarks
// compare entry sizes with it.
func SetMoveChunk(d *Device, chunk uint64) { d.tables.chunk = chunk }

// SetTableUpload sets how d's move tables reach the GPU: "staged" (the
// default: written into d's staging buffers, which it destroys and makes
// as tables change size), "kept" (staged, but no staging buffer destroyed
// before Release) or "queue" (queue writes, as in the browser). It
// submits and waits first, so that no table is staged under the old way.
func SetTableUpload(d *Device, mode string) error {
	if err := d.Wait(); err != nil {
		return err
	}
	switch mode {
	case "staged", "kept", "queue":
		d.stage.keep, d.stage.queue = mode == "kept", mode == "queue"
		return nil
	}
	return fmt.Errorf("SetTableUpload: unknown mode %q", mode)
}
