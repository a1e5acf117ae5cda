package scene

import (
	"bytes"
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
)

// Memory returns the managers that hold the renderer's memory, for
// inspect.Snapshot: the mesh slabs, the bindless pages, the constants'
// ring and the upload belt.
func (r *Renderer) Memory() []memory.Holder {
	return []memory.Holder{r.meshes, r.textures, r.consts, r.belt}
}

// CheckMeshes reads every live item's vertex and index arrays back from
// where gpumem keeps them now and compares them with the item's data: the
// proof that no sweep, growth or shrink lost a byte. It waits for the GPU.
func (r *Renderer) CheckMeshes() error {
	for it, d := range r.draws {
		v, ix, err := r.meshes.Slices(d.mesh)
		if err != nil {
			return fmt.Errorf("item %d: %w", it.ID, err)
		}
		if err := r.checkSlice(v, uint64(it.Mesh.VertexStride), it.Mesh.Vertices); err != nil {
			return fmt.Errorf("item %d vertices: %w", it.ID, err)
		}
		if err := r.checkSlice(ix, uint64(it.Mesh.IndexFormat), it.Mesh.Indices); err != nil {
			return fmt.Errorf("item %d indices: %w", it.ID, err)
		}
	}
	return nil
}

// checkSlice compares s, of elements elem bytes large, with want. Reads
// are whole words, so it reads the aligned words around s.
func (r *Renderer) checkSlice(s mesh.Slice, elem uint64, want []byte) error {
	if len(want) == 0 {
		return nil
	}
	if s.Buffer == nil || uint64(s.Len())*elem != uint64(len(want)) {
		return fmt.Errorf("slice of %d elements of %d bytes for %d bytes", s.Len(), elem, len(want))
	}
	start := uint64(s.Start) * elem
	lo := start &^ (device.CopyAlignment - 1)
	hi := min((start+uint64(len(want))+device.CopyAlignment-1)&^(device.CopyAlignment-1), s.Buffer.Size())
	got := make([]byte, hi-lo)
	if err := r.dev.ReadBuffer(s.Buffer, lo, got); err != nil {
		return err
	}
	if got := got[start-lo:][:len(want)]; !bytes.Equal(got, want) {
		return fmt.Errorf("bytes [%d, %d) of the buffer differ from the mesh's", start, start+uint64(len(want)))
	}
	return nil
}
