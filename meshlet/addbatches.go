package meshlet

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	"github.com/gpumem/gpumem/arena"
)

// Batch is one batch for AddBatches: Data, its words, and Rows, RowWords
// words per meshlet, whose address words are relative to Data, as Add
// takes them.
type Batch struct {
	Data, Rows []uint32
}

// AddBatches places many batches in one call, as a loop of Add would, and
// appends their handles to dst in the order of batches. It places every
// batch's data as one batch of the data arena, then every batch's rows as
// one batch of the rows arena, with every address word made absolute, as
// Add does (arena.Arena.Place: each arena makes room at most once for the
// call, and the batches go up through Options.Belt, in a few writes of
// allocations that lie end to end). The slices are not kept. An empty
// batches adds nothing and returns dst.
//
// Invariants, besides Add's (doc.go):
//   - All or nothing: on any error (an invalid batch, an arena's refusal,
//     a device's refusal of a growth or of a write) no batch is placed,
//     every allocation the call made is given back, every handle it took
//     is ended, dst comes back as it was given, and every live batch is
//     intact, though an arena may have grown or compacted (Changes
//     reports the live batches moved). The manager stays usable.
//   - On success each batch reads back exactly as if it had been added
//     alone: its data words, and its rows with the address words equal to
//     its data offset plus the relative address. Only the placement may
//     differ from a loop of Add, not the contents.
//   - The batches' bytes are on the device, or on the belt, when the call
//     returns.
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
	if maxID := slices.MaxFunc(hs, func(x, y BatchHandle) int { return int(x.id()) - int(y.id()) }).id(); maxID >= uint32(len(m.batches)) {
		m.batches = append(m.batches, make([]batch, int(maxID)+1-len(m.batches))...)
	}
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
// call begun by begin: the data of all as one arena batch, then the rows
// of all, whose address words need the data's offsets. When the rows fail
// the data is given back.
func (m *Manager) addBatches(hs []BatchHandle, batches []Batch) error {
	fs := m.fillers(len(batches))
	defer func() { // no caller slice kept past the call
		clear(m.reqs)
		for _, f := range fs {
			f.words = nil
		}
	}()
	reqs := m.reqs[:0]
	for i, bt := range batches {
		fs[i].words, fs[i].add = bt.Data, 0
		reqs = append(reqs, arena.Request{Owner: uint64(hs[i].id()), Elems: uint32(len(bt.Data)), Fill: fs[i].fn})
	}
	m.reqs = reqs
	dps, _, err := m.data.Place(m.dps[:0], reqs, m.up)
	m.dps = dps
	if err != nil {
		return fmt.Errorf("meshlet: add batches: data: %w", err)
	}
	rw, aw := m.opts.RowWords, m.opts.AddressWord
	reqs = reqs[:0]
	for i, bt := range batches {
		f := fs[i]
		f.words, f.rowWords, f.addr, f.add = bt.Rows, rw, aw, dps[i].Offset
		reqs = append(reqs, arena.Request{Owner: uint64(hs[i].id()), Elems: uint32(len(bt.Rows)) / rw, Fill: f.fn})
	}
	rps, _, err := m.rows.Place(m.rps[:0], reqs, m.up)
	m.rps = rps
	if err != nil {
		for _, p := range dps {
			ferr := m.data.Free(p.Handle)
			assert(ferr == nil, "a fresh data handle is dead")
		}
		return fmt.Errorf("meshlet: add batches: rows: %w", err)
	}
	for i, h := range hs {
		m.register(h, dps[i].Handle, rps[i].Handle, uint32(len(batches[i].Data)), uint32(len(batches[i].Rows))/rw)
	}
	return nil
}

// filler writes one batch's words as an arena.Request's Fill: putWords
// of its fields. fn is its put method, bound once, so that AddBatches
// makes no closure per batch.
type filler struct {
	words               []uint32
	rowWords, addr, add uint32
	fn                  func(dst []byte)
}

func (f *filler) put(dst []byte) { putWords(dst, f.words, f.rowWords, f.addr, f.add) }

// fillers returns n fillers, kept for the next calls: it allocates only
// for more batches than a call has had before (the new fillers, and a
// method value each).
func (m *Manager) fillers(n int) []*filler {
	if k := n - len(m.fills); k > 0 {
		fresh := make([]filler, k)
		for i := range fresh {
			f := &fresh[i]
			f.fn = f.put
			m.fills = append(m.fills, f)
		}
	}
	return m.fills[:n]
}

// hostLittleEndian is whether the host stores a uint32 as WebGPU buffers
// do, least significant byte first: then a word slice's memory is its bytes.
var hostLittleEndian = binary.NativeEndian.Uint32([]byte{1, 0, 0, 0}) == 1

// putWords writes words into dst as little-endian bytes, with add added
// to every rowWords-th word from index addr on, or to none when add is 0.
// It writes each byte of dst at least once and reads none: dst may be a
// mapping, where reads are slow.
func putWords(dst []byte, words []uint32, rowWords, addr, add uint32) {
	if hostLittleEndian {
		copy(dst, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), 4*len(words)))
	} else {
		for i, w := range words {
			binary.LittleEndian.PutUint32(dst[4*i:], w)
		}
	}
	if add != 0 {
		for i := int(addr); i < len(words); i += int(rowWords) {
			binary.LittleEndian.PutUint32(dst[4*i:], words[i]+add)
		}
	}
}
