package meshlet

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
)

// Keeping the address words right while the arenas move things.
//
// A row's address word holds an absolute word index into the data buffer,
// so it must change exactly when its batch's data moves, by exactly the
// distance moved, and a row move changes nothing in it. The data arena
// moves a batch's data in three places: a Sweep, a Compact, and an
// Allocate that compacts to make room (inside Add and Clone). Growth moves
// nothing: offsets survive it and only the buffer changes.
//
// Every manager call that may move anything runs in three steps:
//
//  1. begin: a new epoch; the pending list and the changed list are empty.
//  2. The arena calls. Each arena reports its moves through OnMove as it
//     records them on the device, each with its owner tag: the batch's
//     slot. A data move appends a shift (batch slot, To-From) to the
//     pending list; a data or row move marks its batch changed, once per
//     epoch (the batch's mark). Only registered batches move: an arena
//     moves allocations while making room, before the new one exists, so
//     the allocations of the batch being added are never among them (nor,
//     in AddBatches, those of the call's other batches: arena.Place never
//     reports its own allocations moved, and writes them where they end).
//  3. settle: one device.Patch on the rows buffer adds each shift to every
//     address word of its batch's rows, at the rows' offsets of the moment
//     the patch is recorded; then the call counts its changed batches
//     (Stats.Changed). The moves themselves went to the change log as
//     they came (Changes).
//
// Why the order is right: device work runs in call order, and between two
// arena calls the rows arena's offsets say where each row is on the device.
// A patch recorded after the row moves of the same call is therefore
// computed from, and lands on, the rows where they are after those moves;
// a row move recorded after a patch carries the patched words along. A
// batch that moved twice has two shifts, and patches of one word add up.
// A rows growth between a data move and its patch is harmless too: the
// patch goes to the buffer the rows are in when it is recorded.
//
// Clone needs the source's rows patched before it copies them, so it runs
// the patch of step 3 early (patch), then copies, then patches the copy's
// own address words by the distance between the two batches' data.
//
// A failed call still settles: an Add whose rows are refused may have
// compacted the data arena first, and those batches' rows need their patch
// all the same.

// shift is one pending data move: batch slot id's data moved by delta
// words (modulo 2^32: a move down is a wrapped negative delta).
type shift struct {
	id    uint32
	delta uint32
}

// begin starts a call that may move batches.
func (m *Manager) begin() {
	m.epoch++
	m.pending = m.pending[:0]
	m.changed = m.changed[:0]
}

// dataMoved is the data arena's OnMove. The move's owner tag is its batch's
// slot id.
func (m *Manager) dataMoved(mv arena.Move) {
	id := uint32(mv.Owner)
	assert(mv.Owner < uint64(len(m.batches)) && m.batches[id].data == mv.Handle, "the data arena moved an allocation no batch holds")
	m.pending = append(m.pending, shift{id: id, delta: mv.To - mv.From})
	m.mark(id)
	m.logMove(m.data, PartData, mv)
}

// rowsMoved is the rows arena's OnMove: the rows need no patch.
func (m *Manager) rowsMoved(mv arena.Move) {
	id := uint32(mv.Owner)
	assert(mv.Owner < uint64(len(m.batches)) && m.batches[id].rows == mv.Handle, "the rows arena moved an allocation no batch holds")
	m.mark(id)
	m.logMove(m.rows, PartRows, mv)
}

// mark reports batch id changed in this call, once.
func (m *Manager) mark(id uint32) {
	b := &m.batches[id]
	if b.mark == m.epoch {
		return
	}
	b.mark = m.epoch
	m.changed = append(m.changed, b.h)
}

// patch records the pending shifts as one device.Patch of the rows buffer
// and empties the list.
func (m *Manager) patch() error {
	if len(m.pending) == 0 {
		return nil
	}
	m.patches = m.patches[:0]
	for _, s := range m.pending {
		b := &m.batches[s.id]
		r, err := m.rows.Offset(b.rows)
		assert(err == nil, "a moved batch's rows handle is dead")
		m.patches = appendPatches(m.patches, r, b.meshlets, m.opts.RowWords, m.opts.AddressWord, s.delta)
	}
	m.pending = m.pending[:0]
	if err := m.dev.Patch(m.rows.Buffer(), m.patches); err != nil {
		return fmt.Errorf("meshlet: patch %d address words: %w", len(m.patches), err)
	}
	m.stats.PatchedWords += uint64(len(m.patches))
	return nil
}

// appendPatches appends a patch adding delta to the address word of each of
// n rows from row first.
func appendPatches(p []device.Patch, first, n, rowWords, addressWord, delta uint32) []device.Patch {
	w := first*rowWords + addressWord
	for range n {
		p = append(p, device.Patch{Index: w, Delta: delta})
		w += rowWords
	}
	return p
}

// settle ends a call begun by begin: the pending patches, then the count.
// It returns err, joined with the patch's error if that fails too.
func (m *Manager) settle(err error) error {
	if perr := m.patch(); perr != nil {
		err = errors.Join(err, perr)
	}
	m.stats.Changed += uint64(len(m.changed))
	return err
}

// Sweep takes one bounded step of each arena's running sweep (see
// arena.Arena.Sweep) and patches the address words of every batch whose
// data moved. Changes reports the moved batch parts.
//
// The limits (zero fields take Options.SweepLimits's) are spent across both
// arenas: the second gets the moves, bytes and steps the first left, and
// none when the first spent any of them; the arenas take turns going
// first, so neither starves. O(limits + patched rows); no allocation once
// the manager's reused slices have grown.
func (m *Manager) Sweep(limits arena.SweepLimits) error {
	if !m.gone {
		m.ids.Flush() // removed handles, for the Remotes' reservations
	}
	if m.gone {
		return errReleased
	}
	b := limits.Or(m.opts.SweepLimits)
	first, second := m.data, m.rows
	if m.stats.Sweeps%2 == 1 {
		first, second = second, first
	}
	m.stats.Sweeps++
	m.begin()
	steps := first.Stats().SweepSteps
	moves, err := first.Sweep(b)
	if err == nil {
		var bytes uint64
		for _, mv := range moves {
			bytes += uint64(mv.Elems) * uint64(first.ElemSize())
		}
		spent := first.Stats().SweepSteps - steps
		if len(moves) < b.Moves && bytes < b.Bytes && spent < uint64(b.Steps) {
			b.Moves -= len(moves)
			b.Bytes -= bytes
			b.Steps -= int(spent)
			_, err = second.Sweep(b)
		}
	}
	if err != nil {
		err = fmt.Errorf("meshlet: sweep: %w", err)
	}
	return m.settle(err)
}

// Compact packs both arenas fully (arena.Arena.Compact), ending any sweep,
// and patches the moved batches' address words; Changes reports the
// moved batch parts. O(batches + patched rows); no allocation once the
// reused slices have grown.
func (m *Manager) Compact() error {
	if m.gone {
		return errReleased
	}
	m.begin()
	_, err := m.data.Compact()
	if err == nil {
		_, err = m.rows.Compact()
	}
	if err != nil {
		err = fmt.Errorf("meshlet: compact: %w", err)
	}
	return m.settle(err)
}

// Shrink gives memory back now, whatever Options.ShrinkBelow: it packs
// both arenas and moves each into a buffer of what it holds plus an
// sixteenth, never below its MinElems (arena.Arena.Shrink), patches the
// moved batches' address words and returns the bytes given back; moved
// batches and replaced buffers are reported by Changes. A
// budget.Reclaimer as it is. After an error (a device refusal of a
// smaller buffer) every batch is intact, packed, in the buffers it had.
// O(batches + patched rows) and a copy of each arena's used range.
func (m *Manager) Shrink() (freedBytes uint64, err error) {
	if m.gone {
		return 0, errReleased
	}
	m.begin()
	freedBytes, err = m.data.Shrink()
	if err == nil {
		var n uint64
		n, err = m.rows.Shrink()
		freedBytes += n
	}
	if err != nil {
		err = fmt.Errorf("meshlet: shrink: %w", err)
	}
	return freedBytes, m.settle(err)
}

// Arm starts a sweep episode in both arenas by hand, as a fragmentation
// refusal would (arena.Arena.Arm).
func (m *Manager) Arm() {
	if !m.gone {
		m.data.Arm()
		m.rows.Arm()
	}
}

// Armed reports whether either arena has a sweep running: Sweep has work.
func (m *Manager) Armed() bool {
	return !m.gone && (m.data.Armed() || m.rows.Armed())
}
