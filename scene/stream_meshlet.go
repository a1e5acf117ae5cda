package scene

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/meshlet"
)

const (
	meshletRowWords = 4 // address, words, meshlet index, tag
	meshletSalt     = 0x6d6c6574
)

type meshletBatch struct {
	zone  int
	name  string
	h     meshlet.BatchHandle
	tag   uint32
	words int
	rel   []uint32 // each row's relative address
	gone  bool     // removed: to be dropped from the live list
}

// meshletWorkload streams each zone's meshlet batches through the meshlet
// manager, sweeping its arenas within a budget each frame. With
// Options.Belt the batches go up through the meshes' staging belt
// (meshlet.Options.Belt), which the mesh workload ends each frame; so do
// the textures' texels (bindless.Options.Belt).
type meshletWorkload struct {
	rb      *readbackWorkload
	m       *meshlet.Manager
	scale   int
	zones   [demoZones]meshletZone
	live    []*meshletBatch
	nextTag uint32
	allocs  uint64
	bytes   uint64    // data and rows handed to AddBatches
	onBelt  beltShare // the batches' uploads through the meshes' belt
	// Reused per frame: the batches to load, their data and rows, their
	// handles.
	loads   []*meshletBatch
	batches []meshlet.Batch
	handles []meshlet.BatchHandle
}

type meshletZone struct {
	sizes  [][2]int // meshlets, words per meshlet
	loaded []*meshletBatch
}

func newMeshletWorkload(dev device.Device, scale int, rb *readbackWorkload, o *workloadOptions) (*meshletWorkload, error) {
	w := &meshletWorkload{rb: rb, scale: scale}
	maxWords := uint32(min(dev.Limits().MaxBufferSize/4/2, math.MaxUint32))
	opts := meshlet.Options{Label: "meshlets", RowWords: meshletRowWords, AddressWord: 0,
		Data:        arena.Options{InitialElems: min(uint32(scale)*128<<10, maxWords), RoundToBins: true, GrowAhead: demoGrowAhead},
		Rows:        arena.Options{InitialElems: uint32(scale) * 4 << 10, RoundToBins: true, GrowAhead: demoGrowAhead},
		SweepLimits: demoSweepLimits,
		Belt:        o.sharedBelt,
	}
	if o.shrink {
		opts.ShrinkBelow, opts.ShrinkAfter = demoMeshletShrinkBelow, demoShrinkAfter
		// The arenas shrink to a sixteenth of where they start at least.
		opts.Data.MinElems, opts.Rows.MinElems = opts.Data.InitialElems/16, opts.Rows.InitialElems/16
	}
	m, err := meshlet.New(o.device("meshlets"), opts)
	if err != nil {
		return nil, err
	}
	w.m, w.onBelt.belt = m, o.sharedBelt
	o.reclaim("meshlets", m.Shrink)
	return w, nil
}

func (w *meshletWorkload) release() { w.m.Release() }

func (w *meshletWorkload) endFrame(*frameState, uint64) error { return nil }

func (w *meshletWorkload) notes() []string {
	st := w.m.Stats()
	return []string{fmt.Sprintf("meshlets: %d batches added (%s), %d live; uploaded in %d writes%s",
		w.allocs, inspect.FormatBytes(w.bytes), st.Batches, st.Writes, w.onBelt.note(", ", ""))}
}

func (w *meshletWorkload) memory() memory.Holder { return w.m }

func (w *meshletWorkload) written() uint64 { return w.bytes }

func (w *meshletWorkload) frame(f *frameState) error {
	for z := range demoZones {
		zn := &w.zones[z]
		if zn.sizes == nil {
			r := zoneRand(f.seed, z, meshletSalt)
			zn.sizes = make([][2]int, w.scale*(4+r.IntN(9)))
			for i := range zn.sizes {
				zn.sizes[i] = [2]int{logUniform(r, 8, 160), 24 + r.IntN(100)}
			}
		}
		if !f.inView[z] {
			if err := w.unloadZone(f, zn); err != nil {
				return err
			}
		}
	}
	budget, room := f.loads(3), f.uploadBytes
	// The frame's batches go up in one AddBatches call.
	loads, batches := w.loads[:0], w.batches[:0]
	for z := range demoZones {
		zn := &w.zones[z]
		for i := len(zn.loaded); f.inView[z] && budget > 0 && room > 0 && i < len(zn.sizes); i++ {
			b, bt := w.prepare(f, z, fmt.Sprintf("zone%d/batch%d", z, i), zn.sizes[i][0], zn.sizes[i][1])
			loads, batches = append(loads, b), append(batches, bt)
			budget, room = budget-1, room-min(room, batchBytes(bt))
		}
	}
	f.uploadBytes = room // what the textures may take
	w.loads, w.batches = loads, batches
	if err := w.load(f, loads, batches); err != nil {
		return err
	}
	for _, b := range loads {
		w.zones[b.zone].loaded = append(w.zones[b.zone].loaded, b)
	}
	clear(batches) // the data is on the device: let it go
	// Arm a sweep when either arena's free space is mostly in pieces.
	t := f.gpumem.start(mgrMeshlet)
	defer f.gpumem.stop(t)
	st := w.m.Stats()
	if !w.m.Armed() && (fragmented(st.Data) || fragmented(st.Rows)) {
		w.m.Arm()
	}
	return w.m.Sweep(arena.SweepLimits{})
}

// fragmented reports whether an arena's free space is worth a sweep: more
// than an eighth of its capacity, and less than half of it in one piece.
func fragmented(st arena.Stats) bool {
	return st.FreeElems > st.CapacityElems/8 && st.LargestFreeElems < st.FreeElems/2
}

// prepare makes a batch of meshlets of wordsPer words each, give or take
// a quarter: its record and the data and rows to add.
func (w *meshletWorkload) prepare(f *frameState, z int, name string, meshlets, wordsPer int) (*meshletBatch, meshlet.Batch) {
	w.nextTag++
	b := &meshletBatch{zone: z, name: name, tag: w.nextTag}
	var data []uint32
	rows := make([]uint32, 0, meshlets*meshletRowWords)
	for i := range meshlets {
		n := wordsPer*3/4 + f.rng.IntN(wordsPer/2+1)
		b.rel = append(b.rel, uint32(len(data)))
		rows = append(rows, uint32(len(data)), uint32(n), uint32(i), b.tag)
		for range n {
			data = append(data, word(b.tag, len(data)))
		}
	}
	b.words = len(data)
	return b, meshlet.Batch{Data: data, Rows: rows}
}

// batchBytes returns the bytes b uploads: its data words and its rows.
func batchBytes(b meshlet.Batch) uint64 { return uint64(4 * (len(b.Data) + len(b.Rows))) }

// load adds a frame's prepared batches in one AddBatches call (all or
// nothing) and records them.
func (w *meshletWorkload) load(f *frameState, bs []*meshletBatch, batches []meshlet.Batch) error {
	if len(bs) == 0 {
		return nil
	}
	before := w.onBelt.uploads()
	t := f.gpumem.start(mgrMeshlet)
	hs, err := w.m.AddBatches(w.handles[:0], batches)
	f.gpumem.stop(t)
	w.onBelt.add(before)
	if err != nil {
		return fmt.Errorf("load %s and %d more: %w", bs[0].name, len(bs)-1, err)
	}
	w.handles = hs
	for i, b := range bs {
		b.h = hs[i]
		f.names[b.h.String()] = b.name
		w.allocs++
		w.bytes += batchBytes(batches[i])
		w.live = append(w.live, b)
	}
	return nil
}

// unloadZone removes the batches of zn, which has left the view (see
// unloadAll).
func (w *meshletWorkload) unloadZone(f *frameState, zn *meshletZone) error {
	n, err := unloadAll(f, mgrMeshlet, zn.loaded, func(b *meshletBatch) error { return w.m.Remove(b.h) })
	for _, b := range zn.loaded[:n] {
		b.gone = true
		delete(f.names, b.h.String())
	}
	w.live = slices.DeleteFunc(w.live, func(x *meshletBatch) bool { return x.gone })
	zn.loaded = slices.Delete(zn.loaded, 0, n)
	if err != nil {
		return fmt.Errorf("remove %s: %w", zn.loaded[0].name, err)
	}
	return nil
}

func (w *meshletWorkload) check(rng *rand.Rand, n int) (int, error) {
	return checkSome(w.live, rng, n, w.checkOne)
}

// checkOne reads a batch's data and rows back: the data as written, every
// row as written but for its address word, which must be the data's
// offset now plus the row's relative address.
func (w *meshletWorkload) checkOne(b *meshletBatch) error {
	// Each read locates the batch once its read-back buffer is leased
	// (see readAt); the rows' address words are those of the data's place
	// when the rows are read.
	var p meshlet.Placement
	locate := func(rowsBuf bool) func() (device.Buffer, uint64, error) {
		return func() (device.Buffer, uint64, error) {
			var err error
			p, err = w.m.Lookup(b.h)
			data, rows := w.m.Buffers()
			if rowsBuf {
				return rows, 4 * meshletRowWords * uint64(p.RowOffset), err
			}
			return data, 4 * uint64(p.DataOffset), err
		}
	}
	got := make([]byte, 4*b.words)
	if err := w.rb.readAt(locate(false), got); err != nil {
		return err
	}
	if err := verify(got, b.tag, b.name+" data"); err != nil {
		return err
	}
	rb := make([]byte, 4*meshletRowWords*len(b.rel))
	if err := w.rb.readAt(locate(true), rb); err != nil {
		return err
	}
	for i, rel := range b.rel {
		addr := binary.LittleEndian.Uint32(rb[16*i:])
		tag := binary.LittleEndian.Uint32(rb[16*i+12:])
		if addr != p.DataOffset+rel || tag != b.tag {
			return fmt.Errorf("%s row %d: address %d tag %d, want %d and %d: data lost", b.name, i, addr, tag, p.DataOffset+rel, b.tag)
		}
	}
	return nil
}
