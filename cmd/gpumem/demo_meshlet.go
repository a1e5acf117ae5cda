package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/internal/invariant"
	"github.com/gpumem/gpumem/meshlet"
	"github.com/gpumem/gpumem/offset"
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
	// from is where the batch's data and rows were at the frame's start
	// (or its Add): the map stripes what is elsewhere now.
	from [2]uint32
}

// meshletWorkload streams each zone's meshlet batches through the meshlet
// manager, sweeping its arenas within a budget each frame.
type meshletWorkload struct {
	rb       *readbackWorkload
	m        *meshlet.Manager
	zones    [demoZones]meshletZone
	live     []*meshletBatch
	byHandle map[meshlet.BatchHandle]*meshletBatch
	moved    map[meshlet.BatchHandle]int
	frameN   int
	nextTag  uint32
	allocs   uint64
	written  [2]uint64 // data, rows
	scratch  []byte
	// start is the manager's statistics at the frame's start: the frame's
	// moves are the arenas' counters since.
	start meshlet.Stats
}

type meshletZone struct {
	sizes  [][2]int // meshlets, words per meshlet
	loaded []*meshletBatch
}

func newMeshletWorkload(dev device.Device, rb *readbackWorkload) (*meshletWorkload, error) {
	w := &meshletWorkload{rb: rb, byHandle: map[meshlet.BatchHandle]*meshletBatch{}, moved: map[meshlet.BatchHandle]int{}}
	m, err := meshlet.New(dev, meshlet.Options{Label: "meshlets", RowWords: meshletRowWords, AddressWord: 0,
		Data:   arena.Options{InitialElems: 128 << 10, RoundToBins: true},
		Rows:   arena.Options{InitialElems: 4 << 10, RoundToBins: true},
		Budget: demoBudget,
		OnMove: func(h meshlet.BatchHandle) { w.moved[h] = w.frameN },
	})
	if err != nil {
		return nil, err
	}
	w.m = m
	return w, nil
}

func (w *meshletWorkload) release() { w.m.Release() }

func (w *meshletWorkload) endFrame(uint64) error { return nil }

func (w *meshletWorkload) notes() []string { return nil }

func (w *meshletWorkload) frame(f *frameState) error {
	w.frameN = f.n
	w.start = w.m.Stats()
	for _, b := range w.live {
		b.from = w.where(b)
	}
	for z := range demoZones {
		zn := &w.zones[z]
		if zn.sizes == nil {
			r := zoneRand(f.seed, z, meshletSalt)
			zn.sizes = make([][2]int, 4+r.IntN(9))
			for i := range zn.sizes {
				zn.sizes[i] = [2]int{logUniform(r, 8, 160), 24 + r.IntN(100)}
			}
		}
		if !f.inView[z] {
			for _, b := range zn.loaded {
				if err := w.unload(b); err != nil {
					return err
				}
			}
			zn.loaded = zn.loaded[:0]
		}
	}
	budget := 3
	for z := range demoZones {
		zn := &w.zones[z]
		for f.inView[z] && budget > 0 && len(zn.loaded) < len(zn.sizes) {
			i := len(zn.loaded)
			b, err := w.load(z, fmt.Sprintf("zone%d/batch%d", z, i), zn.sizes[i][0], zn.sizes[i][1], f.rng)
			if err != nil {
				return err
			}
			zn.loaded = append(zn.loaded, b)
			budget--
		}
	}
	// Arm a sweep when either arena's free space is mostly in pieces.
	st := w.m.Stats()
	if !w.m.Armed() && (fragmented(st.Data) || fragmented(st.Rows)) {
		w.m.Arm()
	}
	_, err := w.m.Sweep(arena.Budget{})
	return err
}

// fragmented reports whether an arena's free space is worth a sweep: more
// than an eighth of its capacity, and less than half of it in one piece.
func fragmented(st arena.Stats) bool {
	return st.FreeElems > st.CapacityElems/8 && st.LargestFreeElems < st.FreeElems/2
}

func (w *meshletWorkload) load(z int, name string, meshlets, wordsPer int, rng *rand.Rand) (*meshletBatch, error) {
	w.nextTag++
	b := &meshletBatch{zone: z, name: name, tag: w.nextTag}
	// Meshlets of wordsPer words, give or take a quarter.
	var data []uint32
	rows := make([]uint32, 0, meshlets*meshletRowWords)
	for i := range meshlets {
		n := wordsPer*3/4 + rng.IntN(wordsPer/2+1)
		b.rel = append(b.rel, uint32(len(data)))
		rows = append(rows, uint32(len(data)), uint32(n), uint32(i), b.tag)
		for range n {
			data = append(data, word(b.tag, len(data)))
		}
	}
	b.words = len(data)
	h, err := w.m.Add(data, rows)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	b.h = h
	b.from = w.where(b)
	w.allocs++
	w.written[0] += uint64(4 * len(data))
	w.written[1] += uint64(4 * len(rows))
	w.byHandle[h] = b
	w.live = append(w.live, b)
	return b, nil
}

func (w *meshletWorkload) unload(b *meshletBatch) error {
	if err := w.m.Remove(b.h); err != nil {
		return err
	}
	delete(w.byHandle, b.h)
	delete(w.moved, b.h)
	w.live = slices.DeleteFunc(w.live, func(x *meshletBatch) bool { return x == b })
	return nil
}

func (w *meshletWorkload) check(rng *rand.Rand, n int) (int, error) {
	return checkSome(w.live, rng, n, w.checkOne)
}

// checkOne reads a batch's data and rows back: the data as written, every
// row as written but for its address word, which must be the data's
// offset now plus the row's relative address.
func (w *meshletWorkload) checkOne(b *meshletBatch) error {
	p, err := w.m.Lookup(b.h)
	if err != nil {
		return err
	}
	data, rows := w.m.Buffers()
	got := make([]byte, 4*b.words)
	if err := w.rb.read(data, 4*uint64(p.DataOffset), got); err != nil {
		return err
	}
	if err := verify(got, b.tag, b.name+" data"); err != nil {
		return err
	}
	rb := make([]byte, 4*meshletRowWords*len(b.rel))
	if err := w.rb.read(rows, 4*meshletRowWords*uint64(p.RowOffset), rb); err != nil {
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

func (w *meshletWorkload) buffers() []inspect.Buffer {
	st := w.m.Stats()
	var data, rows []inspect.Region
	rw := uint64(4 * meshletRowWords)
	for _, b := range w.live {
		p, err := w.m.Lookup(b.h)
		if err != nil {
			continue
		}
		state := func(k int, at uint32) inspect.State {
			if w.moved[b.h] == w.frameN && b.from[k] != at {
				return inspect.StateMoving
			}
			return inspect.StateUsed
		}
		data = append(data, inspect.Region{Offset: 4 * uint64(p.DataOffset), Size: 4 * uint64(binRound(p.DataWords)),
			Used: 4 * uint64(p.DataWords), State: state(0, p.DataOffset), Kind: "meshlet-data", Name: b.name})
		rows = append(rows, inspect.Region{Offset: rw * uint64(p.RowOffset), Size: rw * uint64(binRound(p.Meshlets)),
			Used: rw * uint64(p.Meshlets), State: state(1, p.RowOffset), Kind: "meshlet-rows", Name: b.name})
	}
	db, err1 := inspect.NewBuffer("meshlets/data", "meshlet", 4*uint64(st.Data.CapacityElems), data)
	rb, err2 := inspect.NewBuffer("meshlets/rows", "meshlet", rw*uint64(st.Rows.CapacityElems), rows)
	if err := errors.Join(err1, err2); err != nil {
		invariant.Broken("demo", "meshlet placements overlap: %v", err) // the manager's invariant broke
	}
	db.ElemBytes, rb.ElemBytes = 4, uint32(rw)
	if dbuf, rbuf := w.m.Buffers(); dbuf != nil && rbuf != nil {
		db.Usage, rb.Usage = dbuf.Desc().Usage.String(), rbuf.Desc().Usage.String()
	}
	db = db.WithHistory(inspect.ArenaHistory(st.Data)).WithFrame(st.Data.Moves-w.start.Data.Moves, st.Data.BytesMoved-w.start.Data.BytesMoved)
	rb = rb.WithHistory(inspect.ArenaHistory(st.Rows)).WithFrame(st.Rows.Moves-w.start.Rows.Moves, st.Rows.BytesMoved-w.start.Rows.BytesMoved)
	return []inspect.Buffer{db, rb}
}

// where returns the offsets of b's data and rows now.
func (w *meshletWorkload) where(b *meshletBatch) [2]uint32 {
	p, err := w.m.Lookup(b.h)
	if err != nil {
		return [2]uint32{}
	}
	return [2]uint32{p.DataOffset, p.RowOffset}
}

// binRound is the size the arenas (RoundToBins) hold for a request.
func binRound(n uint32) uint32 {
	r, ok := offset.RoundUp(n)
	if !ok {
		return n
	}
	return r
}

func (w *meshletWorkload) rows() []bufferRow {
	st := w.m.Stats()
	return []bufferRow{
		arenaRow("meshlets/data", "meshlet", w.allocs, w.written[0], st.Data, 4),
		arenaRow("meshlets/rows", "meshlet", w.allocs, w.written[1], st.Rows, 4*meshletRowWords),
	}
}
