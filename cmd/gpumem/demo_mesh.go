package main

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/internal/invariant"
	"github.com/gpumem/gpumem/mesh"
)

// The meshes workload drives the mesh allocator as a renderer does: each
// zone's meshes are added when the zone streams in and removed when it
// leaves; a few meshes a frame swap level of detail (a Modify of other
// sizes: re-placed) and one rewrites its vertices (a Modify of the same
// sizes: in place); one Flush a frame places and uploads what was staged,
// then a budgeted Sweep compacts the slabs.
//
// The allocator shows its slabs through each mesh's Slices: the demo
// groups the live meshes' ranges by buffer to draw each slab (every slab
// holds a live mesh after a Flush, which releases the empty ones) and to
// break the summary's meshes row down by layout. Every frame it checks
// that what it sees adds up to the allocator's Stats (meshes, slab bytes,
// bytes placed, bytes uploaded), and that every range it saw at a new
// place was reported by Moved. Growths and moves are the allocator's
// totals: ranges alone cannot tell them apart by layout exactly (a slab
// may grow with none of its earlier ranges left in it).

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

// meshLayouts are the layouts in the order of the summary's rows.
var meshLayouts = []mesh.Layout{
	mesh.VertexLayout(12), mesh.VertexLayout(20), mesh.VertexLayout(24), mesh.VertexLayout(6),
	mesh.IndexLayout(mesh.Uint16), mesh.IndexLayout(mesh.Uint32),
}

// layoutName is a layout's short name in buffer names: "v12", "u16".
func layoutName(l mesh.Layout) string {
	if l.Kind == mesh.Indices {
		return fmt.Sprintf("u%d", 8*l.ElemBytes)
	}
	return fmt.Sprintf("v%d", l.ElemBytes)
}

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
	// at is where each array was after the last Flush or Sweep; the
	// zero Slice until the array is placed at its present size.
	at [2]mesh.Slice
	// dirty marks a placed array staged for a rewrite in place.
	dirty [2]bool
	// movedIn is the frame each array last moved in, and moves how many
	// times it moved in that frame: the map stripes exactly the arrays
	// that moved, and a slab's moves in a frame are its arrays' moves.
	movedIn, moves [2]int
}

// restage records new contents of m's arrays, staged by the Modify the
// caller makes next: an array of another size loses its place until the
// Flush; one of the same size is rewritten in place.
func (m *demoMesh) restage(old [2]mesh.Layout, oldLen [2]int) {
	for k := range m.at {
		if m.layout(mesh.Kind(k)) != old[k] || m.len(mesh.Kind(k)) != oldLen[k] {
			m.at[k], m.dirty[k] = mesh.Slice{}, false
		} else if m.at[k].Buffer != nil {
			m.dirty[k] = true
		}
	}
}

func (m *demoMesh) len(k mesh.Kind) int {
	if k == mesh.Vertices {
		return m.verts
	}
	return m.idx
}

func (m *demoMesh) layout(k mesh.Kind) mesh.Layout {
	if k == mesh.Vertices {
		return mesh.VertexLayout(m.stride)
	}
	return mesh.IndexLayout(m.format)
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

// layoutHistory is what happened to one layout's arrays over the run.
type layoutHistory struct {
	allocs  uint64 // arrays placed
	written uint64 // bytes uploaded: placed and rewritten in place
}

type meshWorkload struct {
	rb      *readbackWorkload
	a       *mesh.Allocator
	zones   [demoZones]meshZone
	live    []*demoMesh         // in load order
	moved   map[mesh.Handle]int // frame of the last reported move
	frameN  int
	nextTag uint32
	hist    map[mesh.Layout]*layoutHistory
	// Over the run: Add, Modify of other sizes, Modify in place, Remove.
	adds, lods, rewrites, removes uint64
	reported                      uint64             // meshes Moved reported
	moving                        map[*demoMesh]bool // ranges seen moving this frame
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

func newMeshWorkload(dev device.Device, rb *readbackWorkload) (*meshWorkload, error) {
	w := &meshWorkload{rb: rb, moved: map[mesh.Handle]int{},
		hist: map[mesh.Layout]*layoutHistory{}, moving: map[*demoMesh]bool{}}
	for _, l := range meshLayouts {
		w.hist[l] = &layoutHistory{}
	}
	// Small slabs, so that the run shows growth, several slabs of a
	// layout and their release.
	a, err := mesh.New(dev, mesh.Options{Label: "meshes", MinSlabBytes: 256 << 10, MaxSlabBytes: 1 << 20})
	if err != nil {
		return nil, err
	}
	w.a = a
	return w, nil
}

func (w *meshWorkload) release() { w.a.Release() }

func (w *meshWorkload) endFrame(uint64) error { return nil }

func (w *meshWorkload) frame(f *frameState) error {
	w.frameN = f.n
	for z := range demoZones {
		zn := &w.zones[z]
		if zn.specs == nil {
			r := zoneRand(f.seed, z, meshSalt)
			zn.specs = make([]meshSpec, 8+r.IntN(17))
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
			for _, m := range zn.loaded {
				if err := w.unload(m); err != nil {
					return err
				}
			}
			zn.loaded = zn.loaded[:0]
		}
	}
	// Stream in, nearest zones first (in zone order, which is
	// deterministic).
	budget := meshLoads
	for z := range demoZones {
		zn := &w.zones[z]
		for f.inView[z] && budget > 0 && len(zn.loaded) < len(zn.specs) {
			i := len(zn.loaded)
			m := &demoMesh{zone: z, name: fmt.Sprintf("zone%d/mesh%d", z, i), stride: zn.specs[i].stride,
				format: zn.specs[i].format, verts: zn.specs[i].verts, idx: zn.specs[i].idx}
			w.retag(m)
			h, err := w.a.Add(m.data())
			if err != nil {
				return fmt.Errorf("add %s: %w", m.name, err)
			}
			m.h = h
			w.adds++
			w.live = append(w.live, m)
			zn.loaded = append(zn.loaded, m)
			budget--
		}
	}
	// Level of detail: a few meshes swap to a finer or coarser version:
	// other sizes, so new ranges at the Flush.
	for range meshLODs {
		if len(w.live) == 0 {
			break
		}
		m := w.live[f.rng.IntN(len(w.live))]
		nv := m.verts * 2
		if f.rng.IntN(2) == 0 || nv > 2*meshMaxVerts {
			nv = max(meshMinVerts/2, m.verts/2)
		}
		old, oldLen := [2]mesh.Layout{m.layout(mesh.Vertices), m.layout(mesh.Indices)}, [2]int{m.verts, m.idx}
		m.verts, m.idx = nv, 3*nv/2+f.rng.IntN(nv)
		w.retag(m)
		m.restage(old, oldLen)
		if err := w.a.Modify(m.h, m.data()); err != nil {
			return fmt.Errorf("modify %s: %w", m.name, err)
		}
		w.lods++
	}
	// An animated mesh rewrites its vertices: same sizes, same ranges.
	if len(w.live) > 0 {
		m := w.live[f.rng.IntN(len(w.live))]
		w.nextTag++
		m.tags[0] = w.nextTag
		m.restage([2]mesh.Layout{m.layout(mesh.Vertices), m.layout(mesh.Indices)}, [2]int{m.verts, m.idx})
		if err := w.a.Modify(m.h, m.data()); err != nil {
			return fmt.Errorf("rewrite %s: %w", m.name, err)
		}
		w.rewrites++
	}
	if err := w.a.Flush(); err != nil {
		return fmt.Errorf("mesh flush: %w", err)
	}
	if err := w.observe(); err != nil {
		return err
	}
	if err := w.a.Sweep(demoBudget); err != nil {
		return fmt.Errorf("mesh sweep: %w", err)
	}
	if err := w.observe(); err != nil {
		return err
	}
	for _, h := range w.a.Moved() {
		w.moved[h] = w.frameN
		w.reported++
	}
	// Every range seen moving this frame belongs to a mesh Moved listed.
	for m := range w.moving {
		if w.moved[m.h] != w.frameN {
			return fmt.Errorf("%s moved, and Moved did not report it", m.name)
		}
	}
	clear(w.moving)
	return nil
}

// retag gives m's arrays new contents.
func (w *meshWorkload) retag(m *demoMesh) {
	w.nextTag += 2
	m.tags = [2]uint32{w.nextTag - 1, w.nextTag}
}

// observe looks where every live mesh's arrays are now, after a Flush or a
// Sweep: an array placed for the first time at its size is an allocation
// of its layout, uploaded; a dirty one was rewritten in place; one at a
// new place moved.
func (w *meshWorkload) observe() error {
	for _, m := range w.live {
		v, i, err := w.a.Slices(m.h)
		if err != nil {
			return fmt.Errorf("%s after flush: %w", m.name, err)
		}
		for k, cur := range [2]mesh.Slice{v, i} {
			l := m.layout(mesh.Kind(k))
			h := w.hist[l]
			prev := m.at[k]
			m.at[k] = cur
			switch {
			case prev.Buffer == nil:
				h.allocs++
				h.written += uint64(cur.Len()) * uint64(l.ElemBytes)
			case cur.Start != prev.Start:
				w.moving[m] = true
				if m.movedIn[k] != w.frameN {
					m.movedIn[k], m.moves[k] = w.frameN, 0
				}
				m.moves[k]++
			}
			if m.dirty[k] {
				m.dirty[k] = false
				h.written += uint64(cur.Len()) * uint64(l.ElemBytes)
			}
		}
	}
	return nil
}

func (w *meshWorkload) unload(m *demoMesh) error {
	if err := w.a.Remove(m.h); err != nil {
		return fmt.Errorf("remove %s: %w", m.name, err)
	}
	w.removes++
	delete(w.moved, m.h)
	w.live = slices.DeleteFunc(w.live, func(x *demoMesh) bool { return x == m })
	return nil
}

func (w *meshWorkload) check(rng *rand.Rand, n int) (int, error) {
	if err := w.agree(); err != nil {
		return 0, err
	}
	return checkSome(w.live, rng, n, w.checkOne)
}

// checkOne reads a mesh's ranges back, whole slots: its arrays as written,
// then zeros to the end of the last slot, whatever the place held before.
func (w *meshWorkload) checkOne(m *demoMesh) error {
	v, i, err := w.a.Slices(m.h)
	if err != nil {
		return fmt.Errorf("%s: %w", m.name, err)
	}
	want := m.data()
	for k, s := range [2]mesh.Slice{v, i} {
		l := m.layout(mesh.Kind(k))
		arr := [2][]byte{want.Vertices, want.Indices}[k]
		got := make([]byte, uint64(l.Slots(s.Len()))*uint64(l.SlotBytes()))
		if err := w.rb.read(s.Buffer, uint64(s.Start)*uint64(l.ElemBytes), got); err != nil {
			return fmt.Errorf("%s: read back %v: %w", m.name, l, err)
		}
		if !bytes.Equal(got[:len(arr)], arr) {
			j := 0
			for got[j] == arr[j] {
				j++
			}
			return fmt.Errorf("%s %v at %d: byte %d is %#x, wrote %#x: data lost", m.name, l, s.Start, j, got[j], arr[j])
		}
		if pad := got[len(arr):]; slices.ContainsFunc(pad, func(b byte) bool { return b != 0 }) {
			return fmt.Errorf("%s %v: padding % x of its last slot is not zeros", m.name, l, pad)
		}
	}
	return nil
}

// agree checks that the demo's view of the slabs adds up to the
// allocator's Stats: meshes, the slabs' bytes and the bytes placed in
// them, the bytes uploaded. O(live meshes).
func (w *meshWorkload) agree() error {
	st := w.a.Stats()
	var capacity, used, written uint64
	for _, sb := range w.slabs() {
		capacity += sb.CapacityBytes
		used += sb.Stats.ReservedBytes
	}
	for _, h := range w.hist {
		written += h.written
	}
	if capacity != st.SlabBytes+st.OwnBytes || used != st.UsedBytes || written != st.BytesUploaded || st.Meshes != len(w.live) {
		return fmt.Errorf("the demo sees %d meshes, %d of %d slab bytes used, %d bytes uploaded; mesh.Stats says %d, %d of %d+%d, %d",
			len(w.live), used, capacity, written, st.Meshes, st.UsedBytes, st.SlabBytes, st.OwnBytes, st.BytesUploaded)
	}
	return nil
}

// slabView is one of the allocator's buffers as the demo sees it.
type slabView struct {
	layout  mesh.Layout
	buf     device.Buffer
	regions []inspect.Region
	// moves and bytesMoved are the frame's moves of the slab's arrays.
	moves, bytesMoved uint64
}

// slabs returns the allocator's buffers, drawn from the live meshes'
// ranges, in layout order, then by capacity, then by their first range's
// owner: the same order on every run.
func (w *meshWorkload) slabs() []slabBuffer {
	byBuf := map[device.Buffer]*slabView{}
	var views []*slabView
	for _, m := range w.live {
		for k, s := range m.at {
			if s.Buffer == nil {
				continue
			}
			l := m.layout(mesh.Kind(k))
			v := byBuf[s.Buffer]
			if v == nil {
				v = &slabView{layout: l, buf: s.Buffer}
				byBuf[s.Buffer] = v
				views = append(views, v)
			}
			state := inspect.StateUsed
			if m.movedIn[k] == w.frameN {
				state = inspect.StateMoving
				v.moves += uint64(m.moves[k])
				v.bytesMoved += uint64(m.moves[k]) * uint64(l.Slots(s.Len())) * uint64(l.SlotBytes())
			}
			kind := "vertex"
			if l.Kind == mesh.Indices {
				kind = "index"
			}
			v.regions = append(v.regions, inspect.Region{Offset: uint64(s.Start) * uint64(l.ElemBytes),
				Size: uint64(l.Slots(s.Len())) * uint64(l.SlotBytes()), Used: uint64(s.Len()) * uint64(l.ElemBytes),
				State: state, Kind: kind, Name: m.name})
		}
	}
	for _, v := range views {
		slices.SortFunc(v.regions, func(a, b inspect.Region) int { return cmp.Compare(a.Offset, b.Offset) })
	}
	order := func(l mesh.Layout) int { return slices.Index(meshLayouts, l) }
	slices.SortFunc(views, func(a, b *slabView) int {
		return cmp.Or(cmp.Compare(order(a.layout), order(b.layout)), -cmp.Compare(a.buf.Size(), b.buf.Size()),
			cmp.Compare(a.regions[0].Name, b.regions[0].Name))
	})
	var out []slabBuffer
	count := map[mesh.Layout]int{}
	for _, v := range views {
		count[v.layout]++
		name := fmt.Sprintf("meshes/%s slab %d", layoutName(v.layout), count[v.layout])
		b, err := inspect.NewBuffer(name, "mesh slab", v.buf.Size(), v.regions)
		if err != nil {
			invariant.Broken("demo", "mesh ranges overlap: %v", err) // the allocator's invariant broke
		}
		b.ElemBytes = v.layout.ElemBytes // regions come in slots of 1, 2 or 4 elements
		b.Usage = v.buf.Desc().Usage.String()
		out = append(out, slabBuffer{b.WithFrame(v.moves, v.bytesMoved), v.layout})
	}
	return out
}

// slabBuffer is a slab's buffer for a dump, and its layout.
type slabBuffer struct {
	inspect.Buffer
	layout mesh.Layout
}

func (w *meshWorkload) buffers() []inspect.Buffer {
	var bufs []inspect.Buffer
	for _, sb := range w.slabs() {
		bufs = append(bufs, sb.Buffer)
	}
	return bufs
}

// rows returns the allocator's row, its totals, then one row per layout
// breaking its state down (sub rows: history is the allocator's, whole).
func (w *meshWorkload) rows() []bufferRow {
	st := w.a.Stats()
	top := bufferRow{name: "meshes", written: st.BytesUploaded, frag: true,
		growths: st.Growths, moves: st.Moves, bytesMoved: st.BytesMoved, bytesCopied: st.BytesCopied, newBuffers: st.SlabsCreated}
	subs := make([]bufferRow, len(meshLayouts))
	for i, l := range meshLayouts {
		h := w.hist[l]
		subs[i] = bufferRow{name: "  " + l.String(), category: l.Kind.String(), allocs: h.allocs, written: h.written, frag: true, sub: true}
		top.allocs += h.allocs
	}
	for _, sb := range w.slabs() {
		s := sb.Stats
		for _, r := range []*bufferRow{&top, &subs[slices.Index(meshLayouts, sb.layout)]} {
			r.live += s.Allocations
			r.occupied += s.OccupiedBytes
			r.reserved += s.ReservedBytes
			r.capacity += s.CapacityBytes
			r.free += s.FreeBytes
			r.largest += s.LargestFreeBytes
		}
	}
	return append([]bufferRow{top}, subs...)
}

func (w *meshWorkload) notes() []string {
	st := w.a.Stats()
	return []string{
		fmt.Sprintf("meshes: %d added, %d re-placed at another level of detail, %d rewritten in place, %d removed;",
			w.adds, w.lods, w.rewrites, w.removes),
		fmt.Sprintf("  %d flushes uploaded %s; %d slabs created, %d released, %d alive; Moved reported %d meshes",
			st.Flushes, inspect.FormatBytes(st.BytesUploaded), st.SlabsCreated, st.SlabsReleased, st.Slabs, w.reported),
	}
}
