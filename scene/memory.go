package scene

import (
	"fmt"
	"slices"

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
	read := func(locate func() (device.Buffer, uint64, error), dst []byte) error {
		buf, off, err := locate()
		if err != nil {
			return err
		}
		return r.dev.ReadBuffer(buf, off, dst)
	}
	for it, d := range r.draws {
		if err := checkMesh(r.meshes, d.mesh, &it.Mesh, read); err != nil {
			return fmt.Errorf("item %d: %w", it.ID, err)
		}
	}
	return nil
}

// checkMesh reads mesh h's arrays back from a, whole slots, and compares
// them with want: its arrays as written, then zeros to the end of the
// last slot, whatever the place held before. read copies len(dst) bytes
// from the buffer and offset locate returns; it calls locate when it is
// ready to copy, since getting ready (leasing a read-back buffer under a
// budget) may move the mesh. The demo and the renderer check this way.
func checkMesh(a *mesh.Allocator, h mesh.Handle, want *mesh.Mesh, read func(locate func() (device.Buffer, uint64, error), dst []byte) error) error {
	v, i, err := a.Slices(h)
	if err != nil {
		return err
	}
	layouts := [2]mesh.Layout{mesh.VertexLayout(want.VertexStride), mesh.IndexLayout(want.IndexFormat)}
	for k, s := range [2]mesh.Slice{v, i} {
		l, arr := layouts[k], [2][]byte{want.Vertices, want.Indices}[k]
		got := make([]byte, uint64(l.Slots(s.Len()))*uint64(l.SlotBytes()))
		locate := func() (device.Buffer, uint64, error) {
			v, i, err := a.Slices(h)
			s = [2]mesh.Slice{v, i}[k]
			return s.Buffer, uint64(s.StartElem) * uint64(l.ElemBytes), err
		}
		if err := read(locate, got); err != nil {
			return fmt.Errorf("read back %v: %w", l, err)
		}
		if len(got) < len(arr) {
			return fmt.Errorf("%v at %d: %d bytes for %d written: data lost", l, s.StartElem, len(got), len(arr))
		}
		if j := mismatch(got, arr); j >= 0 {
			return fmt.Errorf("%v at %d: byte %d is %#x, wrote %#x: data lost", l, s.StartElem, j, got[j], arr[j])
		}
		if pad := got[len(arr):]; slices.ContainsFunc(pad, func(b byte) bool { return b != 0 }) {
			return fmt.Errorf("%v: padding % x of its last slot is not zeros", l, pad)
		}
	}
	return nil
}

// mismatch returns the index of the first byte of want that got differs
// in, or -1 when got begins with want.
func mismatch(got, want []byte) int {
	for j := range want {
		if got[j] != want[j] {
			return j
		}
	}
	return -1
}
