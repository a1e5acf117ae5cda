package meshlet

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
)

// Batch is one batch for AddBatches: Data, its words, and Rows, RowWords
// words per meshlet, whose address words are relative to Data, as Add
// takes them.
type Batch struct {
	Data, Rows []uint32
}

// AddBatches places many batches in one call, as a loop of Add would, and
// appends their handles to dst in the order of batches. It allocates every
// batch's data and rows first, then uploads each arena's allocations in
// runs: allocations that lie end to end in an arena (each starting where
// the one before it ends, bin rounding included) go up in one device
// write, so a frame's batches, which land one after another in free
// space, take a few writes in all instead of two each. The rows are
// written with every address word made absolute, as Add does. The slices
// are not kept. An empty batches adds nothing and returns dst.
//
// Invariants, besides Add's (doc.go):
//   - All or nothing: on any error (an invalid batch, an arena's refusal,
//     a device's refusal of a growth or of a write, a budget's refusal)
//     no batch is placed, every allocation the call made is given back,
//     every handle it took is ended, dst comes back as it was given, and
//     every live batch is intact, though an arena may have grown or
//     compacted (OnMove reports the live batches moved). The manager
//     stays usable.
//   - On success each batch reads back exactly as if it had been added
//     alone: its data words, and its rows with the address words equal to
//     its data offset plus the relative address. Only the placement may
//     differ from a loop of Add, not the contents.
//   - The batches' bytes are on the device when the call returns (the
//     writes are recorded, in call order, like Add's).
//   - The bytes a run covers between two batches are the first batch's
//     bin rounding and margin: they are written as the arena leaves them
//     (zeros, or arena.GuardPattern in a margin), and no live batch's
//     byte is written.
//   - A batch placed by this call is never reported changed by it, even
//     when allocating a later batch of the call moved it: it is written
//     where it ends up.
//
// Errors: those of Add, for the first batch that fails, wrapped with its
// index in batches. Invalid input (ErrInvalidBatch, ErrInvalidAddress) is
// found before anything is allocated. O(total words + rows + n log n)
// for n batches; amortized no allocation besides dst's growth, unless an
// arena grows or compacts.
func (m *Manager) AddBatches(dst []BatchHandle, batches []Batch) ([]BatchHandle, error) {
	if m.gone {
		return dst, errReleased
	}
	for i, b := range batches {
		if err := m.validate(b.Data, b.Rows); err != nil {
			return dst, fmt.Errorf("batch %d of %d: %w", i, len(batches), err)
		}
	}
	if len(batches) == 0 {
		return dst, nil
	}
	n0 := len(dst)
	dst = slices.Grow(dst, len(batches))
	for range batches {
		id, err := m.ids.Allocate()
		if err != nil {
			m.endHandles(dst[n0:])
			return dst[:n0], fmt.Errorf("meshlet: add batches: %w", err)
		}
		dst = append(dst, BatchHandle{id})
	}
	hs := dst[n0:]
	m.begin()
	err := m.addBatches(hs, batches)
	if err = m.settle(err); err != nil {
		m.endHandles(hs)
		return dst[:n0], err
	}
	return dst, nil
}

// endHandles ends handles taken and never placed, last first, so the table
// hands them out again in the order it would have.
func (m *Manager) endHandles(hs []BatchHandle) {
	for i := len(hs) - 1; i >= 0; i-- {
		err := m.ids.Free(hs[i].h)
		assert(err == nil, "a fresh batch handle is dead")
	}
}

// addBatches places valid batches under the fresh handles hs, within a
// call begun by begin. Each batch's slot holds its allocations, marked
// fresh, as soon as they are made, so that the arenas' move reports of a
// later batch's allocation find them (dataMoved and rowsMoved skip fresh
// batches: they are written where they end up). On error every fresh
// slot is emptied and its allocations given back.
func (m *Manager) addBatches(hs []BatchHandle, batches []Batch) (err error) {
	maxID := uint32(0)
	for _, h := range hs {
		maxID = max(maxID, h.id())
	}
	if maxID >= uint32(len(m.batches)) {
		m.batches = append(m.batches, make([]batch, int(maxID)+1-len(m.batches))...)
	}
	placed := 0
	defer func() {
		if err == nil {
			return
		}
		for _, h := range hs[:placed] {
			b := &m.batches[h.id()]
			m.release(b.data, b.rows)
			*b = batch{}
		}
	}()
	for i, bt := range batches {
		h := hs[i]
		words, meshlets := uint32(len(bt.Data)), uint32(len(bt.Rows)/int(m.opts.RowWords))
		hd, hr, err := m.allocate(h.id(), words, meshlets)
		if err != nil {
			return fmt.Errorf("meshlet: add batches: batch %d of %d: %w", i, len(batches), err)
		}
		b := &m.batches[h.id()]
		assert(b.data == (arena.Handle{}), "a batch registered in a slot that holds one")
		*b = batch{h: h, data: hd, rows: hr, words: words, meshlets: meshlets, fresh: true}
		placed++
	}
	// Every allocation is made: the offsets are final for this call.
	runs := m.runs[:0]
	for i, h := range hs {
		b := &m.batches[h.id()]
		d, e1 := m.data.Offset(b.data)
		r, e2 := m.rows.Offset(b.rows)
		assert(e1 == nil && e2 == nil, "a fresh batch's handle is dead")
		runs = append(runs, upload{i: uint32(i), data: d, row: r})
	}
	m.runs = runs
	if err := m.writeData(runs, batches); err != nil {
		return fmt.Errorf("meshlet: add batches: %w", err)
	}
	if err := m.writeRows(runs, batches); err != nil {
		return fmt.Errorf("meshlet: add batches: %w", err)
	}
	for _, h := range hs {
		b := &m.batches[h.id()]
		b.fresh = false
		m.live++
		m.words += uint64(b.words)
		m.meshlets += uint64(b.meshlets)
	}
	return nil
}

// upload is one batch of an AddBatches call: its index in the call, and
// where its data and rows were placed.
type upload struct {
	i         uint32
	data, row uint32
}

// reservedElems returns what an allocation of elems that a took spans
// (arena.Arena.Reserved). The allocation succeeded, so the size is valid.
func reservedElems(a *arena.Arena, elems uint32) uint32 {
	n, err := a.Reserved(elems)
	if err != nil {
		return elems // unreachable: a took this size; never bridge more than elems
	}
	return n
}

// fill returns the byte a run writes between two batches of an arena of
// options o: what the arena left there, GuardPattern's byte in a margin.
func fill(o *arena.Options) byte {
	if o.GuardBytes > 0 {
		return byte(arena.GuardPattern & 0xff) // every byte of the pattern is the same
	}
	return 0
}

// writeData writes every batch's data, one device write per run of data
// allocations that lie end to end.
func (m *Manager) writeData(ups []upload, batches []Batch) error {
	slices.SortFunc(ups, func(a, b upload) int { return cmp.Compare(a.data, b.data) })
	o := &m.opts.Data
	return m.writeRuns(m.data.Buffer(), 4, fill(o), len(ups),
		func(k int) (uint32, uint32) {
			u := ups[k]
			return u.data, uint32(len(batches[u.i].Data))
		},
		func(k int) uint32 { return reservedElems(m.data, uint32(len(batches[ups[k].i].Data))) },
		func(k int, dst []byte) {
			for j, w := range batches[ups[k].i].Data {
				binary.LittleEndian.PutUint32(dst[4*j:], w)
			}
		})
}

// writeRows writes every batch's rows, address words made absolute, one
// device write per run of rows allocations that lie end to end.
func (m *Manager) writeRows(ups []upload, batches []Batch) error {
	slices.SortFunc(ups, func(a, b upload) int { return cmp.Compare(a.row, b.row) })
	o := &m.opts.Rows
	rw := m.opts.RowWords
	return m.writeRuns(m.rows.Buffer(), m.rowLen, fill(o), len(ups),
		func(k int) (uint32, uint32) {
			u := ups[k]
			return u.row, uint32(len(batches[u.i].Rows)) / rw
		},
		func(k int) uint32 { return reservedElems(m.rows, uint32(len(batches[ups[k].i].Rows))/rw) },
		func(k int, dst []byte) {
			u := ups[k]
			rows := batches[u.i].Rows
			for j, w := range rows {
				binary.LittleEndian.PutUint32(dst[4*j:], w)
			}
			for j := int(m.opts.AddressWord); j < len(rows); j += int(rw) {
				binary.LittleEndian.PutUint32(dst[4*j:], rows[j]+u.data)
			}
		})
}

// writeRuns writes n allocations of an arena's buffer buf, in address
// order: place(k) is allocation k's offset and elements, span(k) the
// elements it reserves (at least its elements), put(k, dst) encodes its
// bytes into dst. Allocations whose place starts where the one before
// reserves to go up in one write, the reserve between them written as
// pad; a run ends at its last allocation's elements.
func (m *Manager) writeRuns(buf device.Buffer, elemSize uint32, pad byte, n int,
	place func(k int) (off, elems uint32), span func(k int) uint32, put func(k int, dst []byte)) error {
	es := uint64(elemSize)
	for k := 0; k < n; {
		start, _ := place(k)
		end := k + 1 // the run is allocations [k, end)
		for end < n {
			prev, _ := place(end - 1)
			next, _ := place(end)
			if uint64(prev)+uint64(span(end-1)) != uint64(next) {
				break
			}
			end++
		}
		last, lastElems := place(end - 1)
		size := (uint64(last) + uint64(lastElems) - uint64(start)) * es
		if uint64(cap(m.scratch)) < size {
			m.scratch = make([]byte, size)
		}
		b := m.scratch[:size]
		for j := k; j < end; j++ {
			off, elems := place(j)
			from := (uint64(off) - uint64(start)) * es
			to := from + uint64(elems)*es
			put(j, b[from:to])
			if j+1 < end { // the reserve up to the next allocation
				next, _ := place(j + 1)
				gap := b[to : (uint64(next)-uint64(start))*es]
				for i := range gap {
					gap[i] = pad
				}
			}
		}
		if err := m.dev.WriteBuffer(buf, uint64(start)*es, b); err != nil {
			return err
		}
		m.stats.Writes++
		k = end
	}
	return nil
}
