package meshlet

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/handle"
	"github.com/gpumem/gpumem/internal/invariant"
	"github.com/gpumem/gpumem/memory"
)

// BatchHandle names one batch of a Manager for its whole life, wherever its
// data and rows move: a handle.Handle of the manager's table, whose index
// is the batch's slot. Handles are comparable: use them as map keys. The
// zero BatchHandle names nothing.
type BatchHandle struct {
	h handle.Handle
}

// id returns h's slot in Manager.batches.
func (h BatchHandle) id() uint32 { return h.h.Index() }

// Placement is where a batch is now. Offsets change when a sweep or a
// compaction moves the batch (Changes says so); sizes never change.
type Placement struct {
	// DataOffset is the index of the batch's first word in the data
	// buffer; DataWords is how many words it has.
	DataOffset, DataWords uint32
	// RowOffset is the index of the batch's first row in the rows buffer
	// (its byte offset is RowOffset*RowWords*4); Meshlets is how many rows
	// it has, one per meshlet.
	RowOffset, Meshlets uint32
}

// batch is the manager's record of one batch, indexed by BatchHandle.id.
type batch struct {
	h          BatchHandle  // the live handle of the slot, once placed
	data, rows arena.Handle // zero when no batch is placed in the slot
	words      uint32       // data words
	meshlets   uint32       // rows
	// mark is the epoch of the last call that reported this batch changed:
	// a batch is reported once per call however often it moved.
	mark uint64
}

// Manager keeps meshlet batches in two arenas: data words in one, metadata
// rows in the other, allocated in lockstep. Each row's address word is
// made absolute when its batch is placed and patched on the device when
// the batch's data moves; Changes names the batches that moved.
//
// A Manager is not safe for concurrent use.
type Manager struct {
	dev        device.Device
	opts       Options
	data, rows *arena.Arena
	// changes is what Changes reports next (changes.go); fromArena is
	// scratch for forwarding the arenas' buffer changes.
	changes   memory.ChangeLog
	fromArena []memory.Change

	// ids is the table of batch handles: a handle is live from its
	// Allocate (here, or reserved by a Remote) to Remove; a live one whose
	// slot holds no data is reserved, not added yet. batches is indexed by
	// the handles' indices and grows to the largest placed.
	ids     *handle.Owner
	batches []batch
	live    int // batches placed
	// words and meshlets sum the live batches' sizes.
	words, meshlets uint64
	// Both arenas' allocations carry their batch's slot id as their owner
	// tag, so a move report names the batch (relocate.go).

	// Per call: see relocate.go.
	epoch   uint64
	pending []shift        // data moves whose rows are not patched yet
	changed []BatchHandle  // batches moved by this call, each once
	patches []device.Patch // reused patch batch
	oneMove [1]device.Move // reused single move
	scratch []byte         // reused upload bytes
	// up carries the uploads: Options.Belt, or nil for queue writes.
	up       arena.Uploader
	reqs     []arena.Request   // reused arena batch
	one      [1]arena.Request  // Add's batch
	fills    []*filler         // AddBatches' fill functions, reused
	dps, rps []arena.Placement // reused placements, data and rows

	rowLen uint32 // bytes per row: RowWords*4
	stats  Stats  // counters; Stats fills in the rest
	gone   bool   // released
}

// New creates a manager on dev with its two arenas. It returns
// ErrInvalidOptions for options that cannot work, or the error of the
// arena that could not be created (the other is released: nothing leaks).
func New(dev device.Device, opts Options) (*Manager, error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: nil device", ErrInvalidOptions)
	}
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	m := &Manager{
		dev:    dev,
		opts:   o,
		rowLen: o.RowWords * 4,
		ids:    handle.New(),
	}
	if o.Belt != nil {
		m.up = o.Belt // a nil *staging.Belt would be a non-nil Uploader
	}
	o.Data.OnMove = m.dataMoved
	o.Rows.OnMove = m.rowsMoved
	if m.data, err = arena.New(dev, o.Data); err != nil {
		return nil, newErr("data", err)
	}
	if m.rows, err = arena.New(dev, o.Rows); err != nil {
		m.data.Release()
		return nil, newErr("rows", err)
	}
	return m, nil
}

func newErr(which string, err error) error {
	if errors.Is(err, arena.ErrInvalidOptions) {
		return fmt.Errorf("%w: %s arena: %w", ErrInvalidOptions, which, err)
	}
	return fmt.Errorf("meshlet: %s arena: %w", which, err)
}

// Buffers returns the data buffer (words) and the rows buffer (rows of
// RowWords words). Growth replaces them, and so does a shrink: read them
// again after any Add or Clone, and after a Sweep or Shrink when
// shrinking (Stats().Data.Growths and Stats().Rows.Growths count
// growths, Stats().Shrinks shrinks).
func (m *Manager) Buffers() (data, rows device.Buffer) {
	if m.gone {
		return nil, nil
	}
	return m.data.Buffer(), m.rows.Buffer()
}

// Len returns the number of live batches. O(1).
func (m *Manager) Len() int { return m.live }

// batch returns the placed batch h names.
func (m *Manager) batch(h BatchHandle) (*batch, error) {
	if m.gone {
		return nil, errReleased
	}
	if !m.ids.Live(h.h) {
		return nil, fmt.Errorf("%w: %v", ErrInvalidHandle, h)
	}
	if h.id() >= uint32(len(m.batches)) || m.batches[h.id()].h != h {
		return nil, fmt.Errorf("%w: %v", ErrNotAdded, h)
	}
	return &m.batches[h.id()], nil
}

// Lookup returns where h's data and rows are now. O(1); does not allocate.
func (m *Manager) Lookup(h BatchHandle) (Placement, error) {
	b, err := m.batch(h)
	if err != nil {
		return Placement{}, err
	}
	return m.placement(b), nil
}

func (m *Manager) placement(b *batch) Placement {
	d, err := m.data.Offset(b.data)
	assert(err == nil, "a live batch's data handle is dead")
	r, err := m.rows.Offset(b.rows)
	assert(err == nil, "a live batch's rows handle is dead")
	return Placement{DataOffset: d, DataWords: b.words, RowOffset: r, Meshlets: b.meshlets}
}

// Add places a batch: data, its words, and rows, RowWords words per
// meshlet, whose address words are relative to data. It uploads the data,
// and the rows with every address word made absolute (the data's offset
// added on the CPU), and returns the batch's handle. The slices are not
// kept.
//
// Errors: ErrInvalidBatch, ErrInvalidAddress, or the arenas' errors
// (arena.ErrInvalidSize for a batch above an arena's maximum,
// arena.ErrFull, arena.ErrTooManyAllocations, device errors). On error
// nothing is placed and every live batch is intact, though an arena may
// have grown or compacted (Changes reports batches moved). O(words +
// rows) and amortized O(1) allocations, unless an arena grows or compacts.
func (m *Manager) Add(data, rows []uint32) (BatchHandle, error) {
	if m.gone {
		return BatchHandle{}, errReleased
	}
	if err := m.validate(data, rows); err != nil {
		return BatchHandle{}, err
	}
	return m.placeNew("add", func(h BatchHandle) error { return m.add(h, data, rows) })
}

// placeNew takes a new handle and places a batch under it with place, in
// one call that may move batches (begin, settle); when place fails, the
// handle is given back.
func (m *Manager) placeNew(op string, place func(BatchHandle) error) (BatchHandle, error) {
	id, err := m.ids.Allocate()
	if err != nil {
		return BatchHandle{}, fmt.Errorf("meshlet: %s: %w", op, err)
	}
	h := BatchHandle{id}
	m.begin()
	if err := m.settle(place(h)); err != nil {
		ferr := m.ids.Free(id)
		assert(ferr == nil, "a fresh batch handle is dead")
		return BatchHandle{}, err
	}
	return h, nil
}

// AddReserved places a batch, as Add does, under h: a handle a Remote
// reserved (on any goroutine) and no Add has placed yet. Errors are
// Add's, and ErrInvalidHandle for a handle not live (never reserved, or
// removed), ErrAdded for one placed already; on error h stays reserved.
// Costs are Add's.
func (m *Manager) AddReserved(h BatchHandle, data, rows []uint32) error {
	if m.gone {
		return errReleased
	}
	if !m.ids.Live(h.h) {
		return fmt.Errorf("%w: %v", ErrInvalidHandle, h)
	}
	if h.id() < uint32(len(m.batches)) && m.batches[h.id()].h == h {
		return fmt.Errorf("%w: %v", ErrAdded, h)
	}
	if err := m.validate(data, rows); err != nil {
		return err
	}
	m.begin()
	return m.settle(m.add(h, data, rows))
}

// validate checks a batch's data and rows as Add takes them.
func (m *Manager) validate(data, rows []uint32) error {
	rw := int(m.opts.RowWords)
	switch {
	case len(data) == 0 || len(rows) == 0:
		return fmt.Errorf("%w: %d data words, %d row words", ErrInvalidBatch, len(data), len(rows))
	case len(rows)%rw != 0:
		return fmt.Errorf("%w: %d row words is not a whole number of %d-word rows", ErrInvalidBatch, len(rows), rw)
	case uint64(len(data)) > uint64(^uint32(0)) || uint64(len(rows)/rw) > uint64(^uint32(0)):
		return fmt.Errorf("%w: %d data words, %d rows", ErrInvalidBatch, len(data), len(rows)/rw)
	}
	for i := int(m.opts.AddressWord); i < len(rows); i += rw {
		if uint64(rows[i]) > uint64(len(data)) {
			return fmt.Errorf("%w: row %d addresses word %d of %d", ErrInvalidAddress, i/rw, rows[i], len(data))
		}
	}
	return nil
}

// add places a valid batch under h, live and not placed: its data, then
// its rows with the data's offset in their address words, each an arena
// batch of one (arena.Arena.Place).
func (m *Manager) add(h BatchHandle, data, rows []uint32) error {
	words, meshlets := uint32(len(data)), uint32(len(rows)/int(m.opts.RowWords))
	m.one[0] = arena.Request{Owner: uint64(h.id()), Elems: words, Data: m.bytes(data, 0, 0)}
	dps, _, err := m.data.Place(m.dps[:0], m.one[:], m.up)
	m.dps = dps
	if err != nil {
		m.one[0] = arena.Request{}
		return fmt.Errorf("meshlet: add: %d data words: %w", words, err)
	}
	hd, off := dps[0].Handle, dps[0].Offset
	m.one[0] = arena.Request{Owner: uint64(h.id()), Elems: meshlets, Data: m.bytes(rows, m.opts.AddressWord, off)}
	rps, _, err := m.rows.Place(m.rps[:0], m.one[:], m.up)
	m.rps = rps
	m.one[0] = arena.Request{}
	if err != nil {
		ferr := m.data.Free(hd)
		assert(ferr == nil, "a fresh data handle is dead")
		return fmt.Errorf("meshlet: add: %d rows: %w", meshlets, err)
	}
	m.register(h, hd, rps[0].Handle, words, meshlets)
	return nil
}

// bytes returns words as little-endian bytes in the manager's scratch,
// with add added to every RowWords-th word from index addr on, or to none
// when add is 0.
func (m *Manager) bytes(words []uint32, addr, add uint32) []byte {
	n := 4 * len(words)
	if cap(m.scratch) < n {
		m.scratch = make([]byte, n)
	}
	b := m.scratch[:n]
	putWords(b, words, m.opts.RowWords, addr, add)
	return b
}

// allocate reserves words data words and meshlets rows for batch slot id
// (their owner tag), in lockstep: when the rows are refused the data is
// given back before the error returns.
func (m *Manager) allocate(id, words, meshlets uint32) (arena.Handle, arena.Handle, error) {
	hd, err := m.data.AllocateOwned(words, uint64(id))
	if err != nil {
		return arena.Handle{}, arena.Handle{}, fmt.Errorf("%d data words: %w", words, err)
	}
	hr, err := m.rows.AllocateOwned(meshlets, uint64(id))
	if err != nil {
		ferr := m.data.Free(hd)
		assert(ferr == nil, "a fresh data handle is dead")
		return arena.Handle{}, arena.Handle{}, fmt.Errorf("%d rows: %w", meshlets, err)
	}
	return hd, hr, nil
}

// release gives back the allocations of a batch that was never registered.
func (m *Manager) release(hd, hr arena.Handle) {
	if id, err := m.data.Owner(hd); err == nil {
		m.changes.Forget(id<<1 | uint64(PartData))
		m.changes.Forget(id<<1 | uint64(PartRows))
	}
	e1, e2 := m.data.Free(hd), m.rows.Free(hr)
	assert(e1 == nil && e2 == nil, "a fresh handle is dead")
}

// register records a placed batch under h, in its slot.
func (m *Manager) register(h BatchHandle, hd, hr arena.Handle, words, meshlets uint32) {
	id := h.id()
	if id >= uint32(len(m.batches)) {
		m.batches = append(m.batches, make([]batch, int(id)+1-len(m.batches))...)
	}
	b := &m.batches[id]
	assert(b.data == (arena.Handle{}), "a batch registered in a slot that holds one")
	*b = batch{h: h, data: hd, rows: hr, words: words, meshlets: meshlets}
	m.live++
	m.words += uint64(words)
	m.meshlets += uint64(meshlets)
}

// Remove gives h's data and rows back and ends h; a handle reserved and
// not added yet is only ended. The bytes are left as they are: work
// recorded before Remove still reads them, and a later Add or Clone may
// overwrite them. O(1); amortized no allocation.
func (m *Manager) Remove(h BatchHandle) error {
	b, err := m.batch(h)
	switch {
	case errors.Is(err, ErrNotAdded):
		return m.free(h)
	case err != nil:
		return err
	}
	m.release(b.data, b.rows)
	m.live--
	m.words -= uint64(b.words)
	m.meshlets -= uint64(b.meshlets)
	*b = batch{}
	return m.free(h)
}

// free ends h in the handle table.
func (m *Manager) free(h BatchHandle) error {
	err := m.ids.Free(h.h)
	assert(err == nil, "a live batch handle is refused")
	return nil
}

// Clone places a copy of h and returns its handle. The copy is made on the
// device, from the bytes h has there now (which the GPU may have changed
// since Add): the data and rows are moved within their buffers, then the
// copy's address words are patched on the device by the distance between
// the two batches' data. Errors and costs are Add's, with O(meshlets)
// patches and no CPU copy of the bytes.
func (m *Manager) Clone(h BatchHandle) (BatchHandle, error) {
	b, err := m.batch(h)
	if err != nil {
		return BatchHandle{}, err
	}
	src, words, meshlets := h.id(), b.words, b.meshlets
	return m.placeNew("clone", func(c BatchHandle) error { return m.clone(c, src, words, meshlets) })
}

func (m *Manager) clone(c BatchHandle, src, words, meshlets uint32) error {
	hd, hr, err := m.allocate(c.id(), words, meshlets)
	if err != nil {
		return fmt.Errorf("meshlet: clone: %w", err)
	}
	// The allocations may have compacted an arena and moved the source:
	// patch the moved rows first, so the copy reads them right, and read
	// the source's offsets now.
	if err := m.patch(); err != nil {
		m.release(hd, hr)
		return fmt.Errorf("meshlet: clone: %w", err)
	}
	from := m.placement(&m.batches[src])
	to, err := m.data.Offset(hd)
	assert(err == nil, "a fresh data handle is dead")
	toRow, err := m.rows.Offset(hr)
	assert(err == nil, "a fresh rows handle is dead")
	m.oneMove[0] = device.Move{Src: 4 * uint64(from.DataOffset), Dst: 4 * uint64(to), Size: 4 * uint64(words)}
	err = m.dev.Move(m.data.Buffer(), m.oneMove[:])
	if err == nil {
		rl := uint64(m.rowLen)
		m.oneMove[0] = device.Move{Src: rl * uint64(from.RowOffset), Dst: rl * uint64(toRow), Size: rl * uint64(meshlets)}
		err = m.dev.Move(m.rows.Buffer(), m.oneMove[:])
	}
	if err == nil {
		m.patches = appendPatches(m.patches[:0], toRow, meshlets, m.opts.RowWords, m.opts.AddressWord, to-from.DataOffset)
		err = m.dev.Patch(m.rows.Buffer(), m.patches)
	}
	if err != nil {
		m.release(hd, hr)
		return fmt.Errorf("meshlet: clone: %w", err)
	}
	m.stats.Clones++
	m.stats.PatchedWords += uint64(meshlets)
	m.register(c, hd, hr, words, meshlets)
	return nil
}

// Release releases both arenas' buffers (once the device is done with
// them). Handles die with them. Idempotent and nil-safe; later calls return
// device.ErrReleased.
func (m *Manager) Release() {
	if m == nil || m.gone {
		return
	}
	m.gone = true
	m.ids.Release()
	m.data.Release()
	m.rows.Release()
}

// assert panics when the manager's own bookkeeping is broken: a bug, never
// bad input.
func assert(ok bool, what string) { invariant.Check(ok, "meshlet", what) }
