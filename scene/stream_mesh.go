package scene

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
	"github.com/gpumem/gpumem/staging"
)

// The meshes workload drives the mesh allocator as a renderer does: each
// zone's meshes are added when the zone streams in and removed when it
// leaves; a few meshes a frame swap level of detail (a Modify of other
// sizes: re-placed) and one rewrites its vertices (a Modify of the same
// sizes: in place); one Flush a frame places and uploads what was staged,
// then a budgeted Sweep compacts the slabs.
//
// A Flush takes at most Options.FlushBytes of staged meshes
// (mesh.Options.MaxFlushBytes), in the order they were staged; the rest
// wait for the next frames' Flushes, so the first frames' burst of loading
// spreads over frames instead of making a few Flushes of tens of MiB. A
// mesh a Flush has not taken yet (Staged) is not spot-checked: it is not
// resident yet, or still holds its old data. Before the final check the
// workload flushes until nothing is staged.
//
// With Options.Belt the uploads go through a staging belt (mesh.Options.Belt),
// ended each frame with the frame's fence.
//
// The maps show the slabs as the allocator does (mesh.Allocator.Memory);
// every frame the demo checks that each array the maps show moving (at
// another place than the frame before, at the same size) belongs to a
// mesh that Changes reported moved.

const (
	meshSalt     = 0x6d657368
	meshMinVerts = 48
	meshMaxVerts = 12000
	meshLoads    = 5 // meshes added a frame at most
	meshLODs     = 2 // meshes re-placed at another level of detail a frame
)

// meshStrides are the vertex layouts of the scene: position (12 bytes),
// position and UV (20), position and normal (24), and quantized position
// (6: three 16-bit values, two vertices a slot).
var meshStrides = [...]uint32{12, 20, 24, 6}

// demoMesh is one mesh of the scene.
type demoMesh struct {
	zone   int
	name   string
	h      mesh.Handle
	stride uint32
	format mesh.IndexFormat
	verts  int
	idx    int
	tags   [2]uint32 // content of the vertex and index arrays
	gone   bool      // removed: to be dropped from the live list
}

// data returns the mesh's arrays as written: vertices of word-hash bytes,
// and indices below the vertex count.
func (m *demoMesh) data() mesh.Mesh {
	var scratch []byte
	v := fill(&scratch, m.tags[0], m.verts*int(m.stride))
	ix := make([]byte, m.idx*int(m.format))
	for i := range m.idx {
		x := word(m.tags[1], i) % uint32(m.verts)
		if m.format == mesh.Uint16 {
			binary.LittleEndian.PutUint16(ix[2*i:], uint16(x))
		} else {
			binary.LittleEndian.PutUint32(ix[4*i:], x)
		}
	}
	return mesh.Mesh{VertexStride: m.stride, Vertices: v, IndexFormat: m.format, Indices: ix}
}

type meshWorkload struct {
	rb    *readbackWorkload
	a     *mesh.Allocator
	belt  *staging.Belt // with Options.Belt
	dev   device.Device
	scale int
	// flushBytes bounds a Flush (mesh.Options.MaxFlushBytes; 0: none).
	flushBytes uint64
	zones      [demoZones]meshZone
	live       []*demoMesh // in load order
	nextTag    uint32
	// moved holds the handles of the meshes Changes reported moved this frame
	// (as strings, the memory's owner names); handles the handle of each
	// mesh name.
	moved   map[string]string
	handles map[string]string
	changes []memory.Change // the allocator's Changes, reused
	// replaced holds the meshes re-placed at another size this frame: one
	// back at its size of the frame before (a level of detail there and
	// back) is at another place at the same size, as if it had moved.
	replaced map[string]bool
	// replacing holds the meshes re-placed at another size that a Flush
	// has not taken yet: they move to replaced in the frame one does.
	replacing map[*demoMesh]bool
	// lods and rewrites are the changes of detail and rewrites the frames
	// so far owe, fractions carried over.
	lods, rewrites float64
	// Over the run: Add, Modify of other sizes, Modify in place, Remove,
	// and the meshes Changes reported moved.
	adds, replacedN, rewritten, removes, reported uint64
	// Of the bounded Flushes: the frames that ended with meshes staged,
	// the most staged at a frame's end, the spot checks skipped for a
	// staged mesh, and the Flushes it took at the end to take the rest.
	framesPending, settleFlushes uint64
	peakPending                  int
	skipped                      int
}

// meshZone is one zone's meshes: their sizes and layouts, and the loaded
// ones.
type meshZone struct {
	specs  []meshSpec
	loaded []*demoMesh
}

type meshSpec struct {
	verts, idx int
	stride     uint32
	format     mesh.IndexFormat
}

// demoGrowAhead is the free fraction below which the mesh slabs and
// the meshlet arenas start making their next buffer, off the frame
// (arena.Options.GrowAhead): a growth then costs its frame a copy, not a
// buffer's creation; and the texture buckets their next page
// (bindless.Options.PageAhead): a full bucket's next registration takes
// the page made ahead.
const demoGrowAhead = 0.25

func newMeshWorkload(dev device.Device, scale int, rb *readbackWorkload, o *workloadOptions) (*meshWorkload, error) {
	w := &meshWorkload{rb: rb, scale: scale, moved: map[string]string{}, handles: map[string]string{}, replaced: map[string]bool{},
		replacing: map[*demoMesh]bool{}, dev: o.device("meshes"), flushBytes: o.flushBytes}
	// Small slabs, so that the run shows growth, several slabs of a
	// layout and their release; at scale, slabs as much larger as the
	// scene (up to 256 MiB), so their number stays about the same.
	maxSlab := min(uint64(scale)<<20, 256<<20)
	opts := mesh.Options{Label: "meshes", MinSlabBytes: maxSlab / 4, MaxSlabBytes: maxSlab, MaxFlushBytes: o.flushBytes,
		GrowAhead: demoGrowAhead}
	if o.shrink {
		opts.ShrinkBelow, opts.ShrinkAfter = demoMeshShrinkBelow, demoShrinkAfter
		// A slab shrinks no lower than the size it starts at.
		opts.MinSlabBytes = maxSlab / 16
	}
	if o.belt {
		b, err := staging.New(w.dev, staging.Options{Label: "meshes/staging"})
		if err != nil {
			return nil, err
		}
		w.belt, opts.Belt, o.sharedBelt = b, b, b
	}
	a, err := mesh.New(w.dev, opts)
	if err != nil {
		if w.belt != nil {
			w.belt.Release()
		}
		return nil, err
	}
	w.a = a
	o.reclaim("meshes", func() (uint64, error) {
		// What the shrink moves, the frame's map shows moving: Changes
		// says so, also when the smaller buffer was refused (the slabs
		// are compacted then).
		n, err := a.Shrink()
		w.noteMoves()
		return n, err
	})
	return w, nil
}

func (w *meshWorkload) release() {
	w.a.Release()
	if w.belt != nil {
		w.belt.Release() // after the allocator, as the belt's doc asks
	}
}

func (w *meshWorkload) endFrame(f *frameState, fence uint64) error {
	if n := w.a.Stats().Pending; n > 0 {
		w.framesPending++
		w.peakPending = max(w.peakPending, n)
	}
	if w.belt == nil {
		return nil
	}
	t := f.gpumem.start(mgrStaging)
	err := w.belt.EndFrame(fence)
	f.gpumem.stop(t)
	if err != nil {
		return fmt.Errorf("staging belt end frame: %w", err)
	}
	return nil
}

// settle flushes until no mesh is staged: bounded Flushes may have left
// some for later frames, and the final check reads every mesh back.
func (w *meshWorkload) settle() error {
	for w.a.Stats().Pending > 0 {
		if err := w.a.Flush(); err != nil {
			return fmt.Errorf("mesh flush: %w", err)
		}
		w.settleFlushes++
		if w.belt != nil {
			fence, err := w.dev.Fence()
			if err == nil {
				err = w.belt.EndFrame(fence)
			}
			if err != nil {
				return fmt.Errorf("staging belt end frame: %w", err)
			}
		}
	}
	w.a.Changes(nil) // the frames are over: nothing to report
	return nil
}

// memory is the allocator's memory, and the belt's with Options.Belt.
func (w *meshWorkload) memory() memory.Holder {
	if w.belt == nil {
		return w.a
	}
	return holders{w.a, w.belt}
}

// holders shows the memory of several holders as one.
type holders []memory.Holder

func (hs holders) Memory() []memory.Buffer {
	var bufs []memory.Buffer
	for _, h := range hs {
		bufs = append(bufs, h.Memory()...)
	}
	return bufs
}

func (w *meshWorkload) written() uint64 { return w.a.Stats().BytesUploaded }

func (w *meshWorkload) frame(f *frameState) error {
	clear(w.replaced)
	for z := range demoZones {
		zn := &w.zones[z]
		if zn.specs == nil {
			r := zoneRand(f.seed, z, meshSalt)
			zn.specs = make([]meshSpec, w.scale*(8+r.IntN(17)))
			for i := range zn.specs {
				v := logUniform(r, meshMinVerts, meshMaxVerts)
				s := meshSpec{verts: v, idx: 3 * (v + r.IntN(v)) / 2, stride: meshStrides[r.IntN(len(meshStrides))], format: mesh.Uint32}
				if r.IntN(2) == 0 {
					s.format = mesh.Uint16
				}
				zn.specs[i] = s
			}
		}
		if !f.inView[z] {
			if err := w.unloadZone(f, zn); err != nil {
				return err
			}
		}
	}
	// Stream in, nearest zones first (in zone order, which is
	// deterministic).
	budget := f.loads(meshLoads)
	for z := range demoZones {
		zn := &w.zones[z]
		for f.inView[z] && budget > 0 && len(zn.loaded) < len(zn.specs) {
			i := len(zn.loaded)
			m := &demoMesh{zone: z, name: fmt.Sprintf("zone%d/mesh%d", z, i), stride: zn.specs[i].stride,
				format: zn.specs[i].format, verts: zn.specs[i].verts, idx: zn.specs[i].idx}
			w.retag(m)
			data := m.data()
			t := f.gpumem.start(mgrMesh)
			h, err := w.a.Add(data)
			f.gpumem.stop(t)
			if err != nil {
				return fmt.Errorf("add %s: %w", m.name, err)
			}
			m.h = h
			f.names[h.String()] = m.name
			w.handles[m.name] = h.String()
			w.adds++
			w.live = append(w.live, m)
			zn.loaded = append(zn.loaded, m)
			budget--
		}
	}
	// Level of detail: a few meshes swap to a finer or coarser version:
	// other sizes, so new ranges at the Flush.
	w.lods += meshLODs * float64(w.scale) * f.churn
	for ; w.lods >= 1; w.lods-- {
		if len(w.live) == 0 {
			break
		}
		m := w.live[f.rng.IntN(len(w.live))]
		nv := m.verts * 2
		if f.rng.IntN(2) == 0 || nv > 2*meshMaxVerts {
			nv = max(meshMinVerts/2, m.verts/2)
		}
		m.verts, m.idx = nv, 3*nv/2+f.rng.IntN(nv)
		w.retag(m)
		if err := w.modify(f, m); err != nil {
			return fmt.Errorf("modify %s: %w", m.name, err)
		}
		w.replaced[m.name] = true
		w.replacing[m] = true
		w.replacedN++
	}
	// Animated meshes rewrite their vertices: same sizes, same ranges.
	w.rewrites += float64(w.scale) * f.churn
	for ; w.rewrites >= 1; w.rewrites-- {
		if len(w.live) == 0 {
			break
		}
		m := w.live[f.rng.IntN(len(w.live))]
		w.nextTag++
		m.tags[0] = w.nextTag
		if err := w.modify(f, m); err != nil {
			return fmt.Errorf("rewrite %s: %w", m.name, err)
		}
		w.rewritten++
	}
	uploaded := w.a.Stats().BytesUploaded
	t := f.gpumem.start(mgrMesh)
	err := w.a.Flush()
	if err == nil {
		err = w.a.Sweep(demoSweepLimits)
	}
	clear(w.moved)
	w.noteMoves()
	f.gpumem.stop(t)
	// The demo's bookkeeping, not gpumem's time: Stats walks the slabs.
	f.spendUpload(w.a.Stats().BytesUploaded - uploaded)
	if err != nil {
		return fmt.Errorf("mesh flush and sweep: %w", err)
	}
	// A mesh re-placed in an earlier frame that this Flush took is at
	// its new place from this frame on.
	for m := range w.replacing {
		if !w.a.Staged(m.h) {
			w.replaced[m.name] = true
			delete(w.replacing, m)
		}
	}
	return nil
}

// noteMoves adds the meshes that Changes reports moved to the frame's
// moved set, each once (a mesh moves in up to two arrays).
func (w *meshWorkload) noteMoves() {
	w.changes = w.a.Changes(w.changes[:0])
	for _, c := range w.changes {
		if c.Kind != memory.Moved {
			continue
		}
		if h := mesh.HandleOf(c).String(); !hasKey(w.moved, h) {
			w.moved[h] = ""
			w.reported++
		}
	}
	clear(w.changes)
}

// modify stages m's data as it is now.
func (w *meshWorkload) modify(f *frameState, m *demoMesh) error {
	data := m.data()
	t := f.gpumem.start(mgrMesh)
	defer f.gpumem.stop(t)
	return w.a.Modify(m.h, data)
}

// verifyMoves checks that every array d shows moving this frame belongs
// to a mesh Changes reported moved, or to one re-placed this frame.
func (w *meshWorkload) verifyMoves(d *inspect.Dump) error {
	for _, b := range d.Buffers {
		switch b.Kind {
		case memory.VertexSlab, memory.IndexSlab, memory.VertexBuffer, memory.IndexBuffer:
		default:
			continue
		}
		for _, r := range b.Regions {
			if r.State != memory.StateMoving {
				continue
			}
			if _, ok := w.moved[w.handles[r.Name]]; !ok && !w.replaced[r.Name] {
				return fmt.Errorf("%s's %s array moved in %s, and Changes did not report it", r.Name, r.Kind, b.Name)
			}
		}
	}
	return nil
}

// retag gives m's arrays new contents.
func (w *meshWorkload) retag(m *demoMesh) {
	w.nextTag += 2
	m.tags = [2]uint32{w.nextTag - 1, w.nextTag}
}

// unloadZone removes the meshes of zn, which has left the view (see
// unloadAll).
func (w *meshWorkload) unloadZone(f *frameState, zn *meshZone) error {
	n, err := unloadAll(f, mgrMesh, zn.loaded, func(m *demoMesh) error { return w.a.Remove(m.h) })
	for _, m := range zn.loaded[:n] {
		w.removes++
		m.gone = true
		delete(w.replacing, m)
		delete(f.names, m.h.String())
		delete(w.handles, m.name)
	}
	w.live = slices.DeleteFunc(w.live, func(x *demoMesh) bool { return x.gone })
	zn.loaded = slices.Delete(zn.loaded, 0, n)
	if err != nil {
		return fmt.Errorf("remove %s: %w", zn.loaded[0].name, err)
	}
	return nil
}

// check reads back n meshes chosen by rng, skipping those a Flush has
// not taken yet (every mesh when n < 0: none may be staged then).
func (w *meshWorkload) check(rng *rand.Rand, n int) (int, error) {
	if n < 0 {
		return checkSome(w.live, rng, n, w.checkOne)
	}
	c := 0
	for range n {
		if len(w.live) == 0 {
			break
		}
		m := w.live[rng.IntN(len(w.live))]
		if w.a.Staged(m.h) {
			w.skipped++
			continue
		}
		if err := w.checkOne(m); err != nil {
			return c, err
		}
		c++
	}
	return c, nil
}

// checkOne reads a mesh's arrays back through the pool (see checkMesh).
func (w *meshWorkload) checkOne(m *demoMesh) error {
	if w.a.Staged(m.h) {
		return fmt.Errorf("%s: still staged, no Flush took it", m.name)
	}
	want := m.data()
	if err := checkMesh(w.a, m.h, &want, w.rb.readAt); err != nil {
		return fmt.Errorf("%s: %w", m.name, err)
	}
	return nil
}

func (w *meshWorkload) notes() []string {
	st := w.a.Stats()
	notes := []string{
		fmt.Sprintf("meshes: %d added, %d re-placed at another level of detail, %d rewritten in place, %d removed;",
			w.adds, w.replacedN, w.rewritten, w.removes),
		fmt.Sprintf("  %d flushes uploaded %s; %d slabs created, %d released, %d alive; Moved reported %d meshes",
			st.Flushes, inspect.FormatBytes(st.BytesUploaded), st.SlabsCreated, st.SlabsReleased, st.Slabs, w.reported),
	}
	bound := "unbounded"
	if w.flushBytes > 0 {
		bound = "at most " + inspect.FormatBytes(w.flushBytes)
	}
	notes = append(notes, fmt.Sprintf("  each Flush takes %s: %d frames ended with meshes staged (%d at most), %d spot checks skipped them; %d Flushes after the last frame",
		bound, w.framesPending, w.peakPending, w.skipped, w.settleFlushes))
	if w.belt != nil {
		bs := w.belt.Stats()
		notes = append(notes, fmt.Sprintf("  with the meshlets, textures and constants, through a staging belt: %d uploads (%s) in %d copies; %d chunks of %s alive;",
			bs.Uploads, inspect.FormatBytes(bs.Bytes), bs.Copies, bs.Chunks, inspect.FormatBytes(w.belt.ChunkBytes())),
			fmt.Sprintf("  %d submits of the chunks it filled (%.1f ms in all); %d waits for the GPU, every chunk in use (%.1f ms)",
				bs.Submits, bs.SubmitTime.Seconds()*1e3, bs.Waits, bs.WaitTime.Seconds()*1e3))
	}
	return notes
}

// hasKey reports whether m holds k.
func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// beltShare counts the uploads a workload made through the meshes'
// staging belt (Options.Belt); belt is nil without one.
type beltShare struct {
	belt *staging.Belt
	n    int
}

// uploads returns the uploads the belt has carried so far, 0 without one.
func (s *beltShare) uploads() int {
	if s.belt == nil {
		return 0
	}
	return s.belt.Stats().Uploads
}

// add counts the belt's uploads since it carried before.
func (s *beltShare) add(before int) { s.n += s.uploads() - before }

// note says how many of the workload's writes the belt carried, for its
// summary line, between before and after; nothing without a belt.
func (s *beltShare) note(before, after string) string {
	if s.belt == nil {
		return ""
	}
	return fmt.Sprintf("%s%d of them through the meshes' staging belt%s", before, s.n, after)
}
