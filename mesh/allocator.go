package mesh

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/handle"
	"github.com/gpumem/gpumem/internal/invariant"
	"github.com/gpumem/gpumem/memory"
)

// Mesh is the data of one mesh as Add and Modify take it. The allocator
// keeps a reference to the slices until the Flush that uploads them: do not
// change them before.
type Mesh struct {
	// VertexStride is the size of one vertex in bytes. It may be 0 only
	// when Vertices is empty.
	VertexStride uint32
	// Vertices is the vertex array: a whole number of vertices. Empty is
	// valid: the mesh has no vertex range.
	Vertices []byte
	// IndexFormat is the width of one index; ignored when Indices is
	// empty.
	IndexFormat IndexFormat
	// Indices is the index array: a whole number of indices. Empty is
	// valid: the mesh has no index range.
	Indices []byte
	// Streams, instead of VertexStride and Vertices, gives the vertices
	// as separate arrays, one per attribute, each of its own stride and
	// all of one vertex count (see Layout): at most MaxStreams. One
	// stream is the same as Vertices.
	Streams []Stream
}

// Stream is one vertex array of a Mesh with separate attribute arrays.
type Stream struct {
	Stride uint32
	Data   []byte
}

// Handle names one mesh of an Allocator for its whole life. Handles are
// comparable: use them as map keys. The zero Handle names nothing.
type Handle struct {
	idx uint32 // index into Allocator.recs
	gen uint32 // the index's generation (package handle's); index 0 is never issued
}

// id returns h as package handle's Handle.
func (h Handle) id() handle.Handle { return handle.Pack(h.idx, h.gen) }

// String returns the handle as "handle index.generation".
func (h Handle) String() string { return fmt.Sprintf("handle %d.%d", h.idx, h.gen) }

// Slice is where one of a mesh's arrays lives: a buffer and a range of
// elements (vertices or indices) in it, [StartElem, EndElem). Draw with
// base vertex (or first index) StartElem. A mesh without that array has
// the zero Slice: a nil Buffer.
type Slice struct {
	Buffer             device.Buffer
	StartElem, EndElem uint32
}

// Len returns the number of elements in the slice.
func (s Slice) Len() uint32 { return s.EndElem - s.StartElem }

// part is where one array of a mesh lives, or is to live.
type part struct {
	layout Layout
	elems  uint32 // 0: no array
	// Placement: in a shared slab (slab != nil), in a buffer of its own
	// (own != nil), or nowhere yet (both nil, elems > 0: staged).
	h    arena.Handle
	slab *slab
	own  *owned
}

// owned is the buffers of their own of an array placed outside the slabs,
// one per stream. A part points to it, so that the parts of the many
// arrays in slabs stay small.
type owned struct{ bufs []device.Buffer }

func (p *part) placed() bool { return p.slab != nil || p.own != nil }

// record is the allocator's state of one mesh, indexed by Handle.idx.
type record struct {
	gen      uint32
	live     bool
	resident bool // both parts placed and uploaded at least once
	pending  bool // data staged for the next Flush
	parts    [2]part
	// prev keeps the placed arrays a Modify to new sizes replaced, drawn
	// (Slices) until the Flush that places the new ones; nil when none.
	prev *[2]part
	data [2][]byte // staged arrays, by Kind
	more [][]byte  // the further vertex streams' staged arrays
}

// slab is one shared buffer of one layout: an arena in slots. Each of its
// allocations carries its array's owner tag (owner), so the arena's move
// reports name the mesh without a map.
type slab struct {
	layout    Layout
	ar        *arena.Arena
	seq       uint64 // creation order, unique in its allocator: names it
	slotBytes uint32 // layout.SlotBytes(), the arena's ElemSize
}

// owner is the arena owner tag of the k array of record idx: the record
// index in the low 32 bits, the Kind above.
func owner(idx uint32, k Kind) uint64 { return uint64(k)<<32 | uint64(idx) }

// ownerOf splits an owner tag into its record index and Kind.
func ownerOf(tag uint64) (idx uint32, k Kind) { return uint32(tag), Kind(tag >> 32) }

// Allocator packs the vertex and index arrays of many meshes into shared
// slabs, one set of slabs per element layout: Add and Modify stage meshes,
// Flush places and uploads them, Sweep compacts within a budget, and
// Changes and Slices say where each mesh is now, for draw data.
//
// An Allocator is not safe for concurrent use; see Loader for staging
// meshes from other goroutines.
type Allocator struct {
	dev device.Device
	set Options
	// maxBuffer is the device's Limits().MaxBufferSize, read once: a
	// device's limits never change.
	maxBuffer uint64
	recs      []record // by handle index
	// ids issues the handles, here and to Loaders (loader.go).
	ids  *handle.Owner
	live int
	// loaders are the Loaders made (loader.go); loaderOps is the scratch
	// their queues swap with.
	loaders   []*Loader
	loaderOps []loaderOp
	// pending is the queue of staged meshes, in staging order, from
	// head on: a Flush takes from its front, so one that
	// Options.MaxFlushBytes stops early costs what it takes, not what
	// stays staged. An entry whose record died or was reused is skipped
	// when reached. staged counts the live records with pending set.
	pending []Handle
	head    int
	staged  int
	// taken is how many entries of pending from head the Flush in
	// progress takes (all but under Options.MaxFlushBytes); set by flush.
	taken    int
	slabs    []*slab
	byLayout map[Layout][]*slab
	own      int    // live buffers of their own
	ownBytes uint64 // their bytes
	slabSeq  uint64 // the newest slab's seq

	// up carries Flush's uploads: Options.Belt, or nil for queue writes.
	up arena.Uploader

	// Per-Flush scratch, reused.
	groups     []group // the frame's layouts, in the order first staged; groups[:ngroups] are this Flush's
	ngroups    int
	groupAt    [2][groupDirect]uint32 // 1 + index in groups of the layout of that Kind and ElemBytes; 0: none yet
	groupBig   map[Layout]uint32      // the same for ElemBytes of groupDirect or more
	placed     []piece
	rewrites   []piece  // arrays placed before this Flush (rewritten in place) and those given buffers of their own by it
	pieceKeys  []uint64 // sortPieces' keys
	keyScratch []uint64 // and sortKeys' scratch
	reqs       []arena.Request
	ps         []arena.Placement
	pad        []byte // scratch for an array's last slot, padded with zeros

	changes   memory.ChangeLog // what Changes reports next (changes.go)
	fromSlab  []memory.Change  // a slab arena's changes, being forwarded
	sweepNext int

	stats    Stats
	released bool
}

// New creates an allocator on dev with options s. It creates no buffer:
// slabs are created by Flush as data needs them. It returns
// ErrInvalidOptions for options that cannot work.
func New(dev device.Device, s Options) (*Allocator, error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: nil device", ErrInvalidOptions)
	}
	set, err := s.resolve(dev.Limits())
	if err != nil {
		return nil, err
	}
	var up arena.Uploader
	if set.Belt != nil {
		up = set.Belt // a nil *staging.Belt would be a non-nil Uploader
	}
	return &Allocator{
		dev:       dev,
		up:        up,
		set:       set,
		maxBuffer: dev.Limits().MaxBufferSize,
		byLayout:  map[Layout][]*slab{},
		ids:       handle.New(),
	}, nil
}

// Options returns the allocator's options, defaults filled in and sizes
// clamped to the device.
func (a *Allocator) Options() Options { return a.set }

// Len returns the number of live meshes. O(1).
func (a *Allocator) Len() int { return a.live }

// parse checks m and returns its two parts, unplaced. It divides once per
// vertex array (elements and remainder from one quotient) and shifts for
// indices: Add runs it for every mesh.
func (a *Allocator) parse(m *Mesh) ([2]part, error) {
	var ps [2]part
	if len(m.Streams) > 0 {
		if len(m.Vertices) > 0 || m.VertexStride != 0 {
			return ps, fmt.Errorf("%w: both Vertices and Streams", ErrInvalidMesh)
		}
		if err := a.parseStreams(&ps[Vertices], m.Streams); err != nil {
			return ps, err
		}
	} else if n := uint64(len(m.Vertices)); n > 0 {
		stride := uint64(m.VertexStride)
		var elems uint64
		if stride != 0 {
			elems = n / stride
		}
		if stride == 0 || elems*stride != n {
			return ps, fmt.Errorf("%w: %d vertex bytes with stride %d", ErrInvalidMesh, len(m.Vertices), m.VertexStride)
		}
		l := VertexLayout(m.VertexStride)
		if l.SlotBytes() == 0 {
			return ps, fmt.Errorf("%w: stride %d: a slot of %d vertices passes 2^32 bytes", ErrInvalidMesh, m.VertexStride, l.ElemsPerSlot())
		}
		if err := a.count(&ps[Vertices], l, elems); err != nil {
			return ps, err
		}
	}
	if n := uint64(len(m.Indices)); n > 0 {
		switch m.IndexFormat {
		case Uint16, Uint32:
		case 0:
			return ps, fmt.Errorf("%w: %d index bytes and no IndexFormat (want mesh.Uint16 or mesh.Uint32)", ErrInvalidMesh, len(m.Indices))
		default:
			return ps, fmt.Errorf("%w: IndexFormat %d bytes (want mesh.Uint16 or mesh.Uint32)", ErrInvalidMesh, uint8(m.IndexFormat))
		}
		if n&uint64(m.IndexFormat-1) != 0 {
			return ps, fmt.Errorf("%w: %d index bytes of %v", ErrInvalidMesh, len(m.Indices), m.IndexFormat)
		}
		// Uint16 is 2 bytes, Uint32 4: a shift of 1 or 2.
		if err := a.count(&ps[Indices], IndexLayout(m.IndexFormat), n>>(m.IndexFormat>>1)); err != nil {
			return ps, err
		}
	}
	return ps, nil
}

// parseStreams makes p the unplaced vertex array of separate streams ss.
func (a *Allocator) parseStreams(p *part, ss []Stream) error {
	if len(ss) > MaxStreams {
		return fmt.Errorf("%w: %d vertex streams, at most %d", ErrInvalidMesh, len(ss), MaxStreams)
	}
	strides := make([]uint32, len(ss))
	var elems uint64
	for i, s := range ss {
		n := uint64(len(s.Data))
		if s.Stride == 0 || n%uint64(s.Stride) != 0 {
			return fmt.Errorf("%w: stream %d: %d bytes with stride %d", ErrInvalidMesh, i, n, s.Stride)
		}
		if e := n / uint64(s.Stride); i == 0 {
			elems = e
		} else if e != elems {
			return fmt.Errorf("%w: stream %d has %d vertices, stream 0 %d", ErrInvalidMesh, i, e, elems)
		}
		strides[i] = s.Stride
	}
	if elems == 0 {
		return nil // no vertices: no vertex range, as for empty Vertices
	}
	l, err := StreamsLayout(strides...)
	if err != nil {
		return err
	}
	for i := range len(ss) {
		if l.StreamSlotBytes(i) == 0 {
			return fmt.Errorf("%w: stream %d: a slot of %d vertices passes 2^32 bytes", ErrInvalidMesh, i, l.ElemsPerSlot())
		}
	}
	return a.count(p, l, elems)
}

// count makes p an unplaced array of elems elements of l, checking that
// it fits in one buffer of the device.
func (a *Allocator) count(p *part, l Layout, elems uint64) error {
	if elems > 1<<32-1 {
		return fmt.Errorf("%w: %d %v, more than 2^32-1", ErrInvalidMesh, elems, l)
	}
	p.layout, p.elems = l, uint32(elems)
	if l.set == 0 {
		if b := wholeSlots(p.elems, strideShift(l.ElemBytes), l.ElemBytes); b > a.maxBuffer {
			return a.tooLarge(p, b)
		}
		return nil
	}
	for i := range l.Streams() {
		if b := a.streamBytes(p, i); b > a.maxBuffer {
			return a.tooLarge(p, b)
		}
	}
	return nil
}

// tooLarge returns count's error for p's stream of b bytes.
func (a *Allocator) tooLarge(p *part, b uint64) error {
	return fmt.Errorf("%w: %v of %d bytes, above the device's largest buffer (%d): %w",
		ErrInvalidMesh, p.layout, b, a.maxBuffer, device.ErrTooLarge)
}

// bytes returns the bytes p's array takes placed, every stream: whole
// slots.
func (a *Allocator) bytes(p *part) uint64 {
	if l := p.layout; l.set == 0 {
		return wholeSlots(p.elems, strideShift(l.ElemBytes), l.ElemBytes)
	}
	var b uint64
	for i := range p.layout.Streams() {
		b += a.streamBytes(p, i)
	}
	return b
}

// streamBytes returns the bytes p's stream i takes placed: whole slots.
func (a *Allocator) streamBytes(p *part, i int) uint64 {
	return wholeSlots(p.elems, p.layout.slotShift(), p.layout.Stride(i))
}

// wholeSlots returns the bytes elems elements of stride bytes take in
// slots of 1<<shift elements.
func wholeSlots(elems uint32, shift uint, stride uint32) uint64 {
	return (uint64(elems) + 1<<shift - 1) >> shift << shift * uint64(stride)
}

// streamsOf returns m's further vertex streams' arrays.
func streamsOf(m *Mesh) [][]byte {
	if len(m.Streams) < 2 {
		return nil
	}
	more := make([][]byte, len(m.Streams)-1)
	for i, s := range m.Streams[1:] {
		more[i] = s.Data
	}
	return more
}

// vertexData returns m's first vertex array.
func vertexData(m *Mesh) []byte {
	if len(m.Streams) > 0 {
		return m.Streams[0].Data
	}
	return m.Vertices
}

// Add stages mesh m and returns its handle. Nothing is placed or uploaded
// until the next Flush; until then Slices returns ErrNotResident. Errors:
// ErrInvalidMesh. O(1); it allocates only to grow its tables.
func (a *Allocator) Add(m Mesh) (Handle, error) {
	if a.released {
		return Handle{}, errReleased
	}
	ps, err := a.parse(&m)
	if err != nil {
		return Handle{}, err
	}
	id, err := a.ids.Allocate()
	if err != nil {
		return Handle{}, fmt.Errorf("mesh: add: %w", err)
	}
	h := Handle{idx: id.Index(), gen: id.Generation()}
	a.take(h, ps, &m)
	return h, nil
}

// take makes h, a handle just issued, a live mesh of parts ps and m's
// data, staged.
func (a *Allocator) take(h Handle, ps [2]part, m *Mesh) {
	if n := int(h.idx) + 1; n > len(a.recs) {
		a.recs = slices.Grow(a.recs, n-len(a.recs))[:n]
	}
	r := &a.recs[h.idx]
	// Field by field: a whole-record literal is built aside and copied.
	r.gen, r.live, r.resident, r.pending, r.prev = h.gen, true, false, false, nil
	r.parts = ps
	r.data[Vertices], r.data[Indices], r.more = vertexData(m), m.Indices, streamsOf(m)
	a.stage(r, h)
	a.live++
}

// stage queues r for the next Flush.
func (a *Allocator) stage(r *record, h Handle) {
	if !r.pending {
		r.pending = true
		a.staged++
		a.pending = append(a.pending, h)
	}
}

// record returns the live record h names.
func (a *Allocator) record(h Handle) (*record, error) {
	if a.released {
		return nil, errReleased
	}
	if h.idx == 0 || h.idx >= uint32(len(a.recs)) || a.recs[h.idx].gen != h.gen || !a.recs[h.idx].live {
		if h.idx != 0 && a.ids.Live(h.id()) {
			// A Loader's, not taken by a Flush yet.
			return nil, fmt.Errorf("%w: %v: a Loader's mesh the next Flush takes", ErrNotResident, h)
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidHandle, h)
	}
	return &a.recs[h.idx], nil
}

// Modify stages new data for the mesh h names. An array whose layout and
// element count are unchanged keeps its range and is rewritten in place at
// the next Flush: draws before that Flush see the old data. An array whose
// size or layout changed gets a new range at the next Flush that takes the
// mesh (Options.MaxFlushBytes); until then Slices keeps answering with the
// old range, which keeps the old data, and the mesh stays resident. That
// Flush reports the array as Moved (its new size in SizeBytes) and gives
// the old range back. A mesh not resident yet has no old range to draw.
// Errors: ErrInvalidHandle, ErrInvalidMesh (the mesh is left as it was).
// O(1).
func (a *Allocator) Modify(h Handle, m Mesh) error {
	r, err := a.known(h)
	if err != nil {
		return err
	}
	ps, err := a.parse(&m)
	if err != nil {
		return err
	}
	a.modify(r, h, ps, m)
	return nil
}

// known is record for the owner's Modify and Remove: a Loader's mesh not
// taken yet is taken first.
func (a *Allocator) known(h Handle) (*record, error) {
	r, err := a.record(h)
	if err != nil && errors.Is(err, ErrNotResident) {
		a.takeLoaders()
		r, err = a.record(h)
	}
	return r, err
}

// modify is Modify of r, h's record, to the checked parts ps of m.
func (a *Allocator) modify(r *record, h Handle, ps [2]part, m Mesh) {
	for k := range r.parts {
		cur := &r.parts[k]
		if cur.layout == ps[k].layout && cur.elems == ps[k].elems {
			continue // same shape: keep the place, rewrite in place
		}
		if r.resident && cur.placed() && !r.old(Kind(k)).placed() {
			if r.prev == nil {
				r.prev = new([2]part)
			}
			r.prev[k] = *cur // drawn until the new array is placed
		} else {
			a.unplace(h.idx, Kind(k), cur)
		}
		r.parts[k] = ps[k]
	}
	r.data = [2][]byte{vertexData(&m), m.Indices}
	r.more = streamsOf(&m)
	a.stage(r, h)
}

// swap gives back the arrays r drew while its new ones were staged (see
// Modify), now that they are placed, and reports each as Moved to its new
// place: coalesced with a move of the old range not yet taken, so From is
// where the consumer last saw it.
func (a *Allocator) swap(idx uint32, r *record) {
	h := Handle{idx: idx, gen: r.gen}
	if r.prev == nil {
		return
	}
	defer func() { r.prev = nil }()
	for k := range r.prev {
		old := &r.prev[k]
		if !old.placed() {
			continue
		}
		from := a.slice(old)
		fromBytes := uint64(from.StartElem) * uint64(old.layout.ElemBytes)
		a.giveBack(old)
		r.prev[k] = part{}
		to := a.slice(&r.parts[k])
		p := &r.parts[k]
		a.changes.Moved(owner(idx, Kind(k)), memory.Change{Owner: h.Owner(), Part: uint8(k), Old: from.Buffer, Buffer: to.Buffer,
			FromBytes: fromBytes, ToBytes: uint64(to.StartElem) * uint64(p.layout.ElemBytes), SizeBytes: a.streamBytes(p, 0)})
		a.stats.MeshesMoved++
	}
}

// drawn returns the array of kind k that Slices answers with: the old one
// while a new one is staged (Modify), else the current one.
func (r *record) drawn(k Kind) *part {
	if old := r.old(k); old.placed() {
		return old
	}
	return &r.parts[k]
}

// old returns the old array of kind k that r draws until its new one is
// placed: an unplaced part when none. Read only.
func (r *record) old(k Kind) *part {
	if r.prev == nil {
		return &unplaced
	}
	return &r.prev[k]
}

// unplaced is the part of no array, for old to return.
var unplaced part

// unplace gives p, the k array of record idx, back (giveBack) and forgets
// its pending move.
func (a *Allocator) unplace(idx uint32, k Kind, p *part) {
	if p.slab != nil {
		a.changes.Forget(owner(idx, k))
	}
	a.giveBack(p)
}

// giveBack gives p's range or buffer back. A slab left empty is released at
// the next Flush.
func (a *Allocator) giveBack(p *part) {
	switch {
	case p.slab != nil:
		if err := p.slab.ar.Free(p.h); err != nil {
			invariant.Broken("mesh", "free of a placed range failed: %v", err)
		}
	case p.own != nil:
		for _, b := range p.own.bufs {
			a.ownBytes -= b.Size()
			a.changes.Released(b, nil)
			b.Release()
		}
		a.own--
	}
	p.slab, p.h, p.own = nil, arena.Handle{}, nil
}

// Remove gives the mesh's ranges back and ends its handle. Draws already
// recorded keep reading the old bytes until their work is done; the ranges
// may be reused by the next Flush. Errors: ErrInvalidHandle. O(1).
func (a *Allocator) Remove(h Handle) error {
	r, err := a.known(h)
	if err != nil {
		return err
	}
	a.remove(r, h)
	return nil
}

// remove is Remove of r, h's record.
func (a *Allocator) remove(r *record, h Handle) {
	for k := range r.parts {
		a.unplace(h.idx, Kind(k), &r.parts[k])
		if r.prev != nil {
			a.giveBack(&r.prev[k])
		}
	}
	if r.pending {
		a.staged--
	}
	*r = record{} // a pending entry of h is skipped: no live record
	if err := a.ids.Free(h.id()); err != nil {
		invariant.Broken("mesh", "free of a live handle %v: %v", h, err)
	}
	a.live--
}

// Resident reports whether h's data is uploaded: Slices would succeed.
// O(1).
func (a *Allocator) Resident(h Handle) bool {
	r, err := a.record(h)
	return err == nil && r.resident
}

// Staged reports whether h has data staged that no Flush has taken yet:
// it was added or modified since the last Flush, or a Flush bounded by
// Options.MaxFlushBytes left it. A staged mesh may be resident too (a
// rewrite in place not taken yet: its ranges hold the old data). O(1).
func (a *Allocator) Staged(h Handle) bool {
	r, err := a.record(h)
	return err == nil && r.pending
}

// Slices returns where the mesh's vertex and index arrays are now. A mesh
// without one of them gets the zero Slice for it. Errors: ErrInvalidHandle,
// ErrNotResident before the Flush that uploads the mesh's data. The
// slices stay right until the next Flush, Sweep, Modify of the mesh or
// Release: growth replaces a slab's buffer, and sweeps move ranges
// (Changes reports both). O(1); it does not allocate.
func (a *Allocator) Slices(h Handle) (vertex, index Slice, err error) {
	r, err := a.record(h)
	if err != nil {
		return Slice{}, Slice{}, err
	}
	if !r.resident {
		return Slice{}, Slice{}, fmt.Errorf("%w: %v", ErrNotResident, h)
	}
	return a.slice(r.drawn(Vertices)), a.slice(r.drawn(Indices)), nil
}

// Streams appends to dst where each of the mesh's vertex streams is now:
// one Slice per stream of its layout (Layout.Streams), all of one range, so
// one base vertex draws them all; an interleaved mesh has one, Slices'
// vertex Slice, and a mesh without vertices none. Errors and lifetime as
// Slices'. O(streams); it allocates only when dst lacks room.
func (a *Allocator) Streams(h Handle, dst []Slice) ([]Slice, error) {
	r, err := a.record(h)
	if err != nil {
		return dst, err
	}
	if !r.resident {
		return dst, fmt.Errorf("%w: %v", ErrNotResident, h)
	}
	p := r.drawn(Vertices)
	if p.elems == 0 {
		return dst, nil
	}
	s := a.slice(p)
	dst = append(dst, s)
	for i := 1; i < p.layout.Streams(); i++ {
		if p.slab != nil {
			s.Buffer = p.slab.ar.PlaneBuffer(i)
		} else {
			s.Buffer = p.own.bufs[i]
		}
		dst = append(dst, s)
	}
	return dst, nil
}

func (a *Allocator) slice(p *part) Slice {
	switch {
	case p.slab != nil:
		off, err := p.slab.ar.Offset(p.h)
		if err != nil {
			invariant.Broken("mesh", "placed range not in its slab: %v", err)
		}
		// Slabs hold at most 2^32-1 elements (see Options.shape), so
		// neither StartElem nor EndElem wraps.
		start := off * p.layout.ElemsPerSlot()
		return Slice{Buffer: p.slab.ar.Buffer(), StartElem: start, EndElem: start + p.elems}
	case p.own != nil:
		return Slice{Buffer: p.own.bufs[0], EndElem: p.elems}
	}
	return Slice{}
}

// onMove is a slab's arena.Options.OnMove: the move's owner tag names the
// mesh and array (every slab allocation is made with one: see claim).
func (a *Allocator) onMove(s *slab, m arena.Move) {
	idx, k := ownerOf(m.Owner)
	held := func(p *part) bool { return p.slab == s && p.h == m.Handle }
	if idx >= uint32(len(a.recs)) || k > Indices || !held(&a.recs[idx].parts[k]) && !held(a.recs[idx].old(k)) {
		invariant.Broken("mesh", "a slab of %v moved a range no mesh holds (owner %#x)", s.layout, m.Owner)
	}
	r := &a.recs[idx]
	h := Handle{idx: idx, gen: r.gen}
	a.stats.MeshesMoved++
	e, buf := uint64(s.slotBytes), s.ar.Buffer()
	a.changes.Moved(m.Owner, memory.Change{Owner: h.Owner(), Part: uint8(k), Old: buf, Buffer: buf,
		FromBytes: uint64(m.From) * e, ToBytes: uint64(m.To) * e, SizeBytes: uint64(m.Elems) * e})
}

// Release releases every slab and buffer, once the device is done with
// them. Handles die with it. Idempotent and nil-safe; later calls return
// device.ErrReleased.
func (a *Allocator) Release() {
	if a == nil || a.released {
		return
	}
	a.released = true
	a.ids.Release()
	for _, s := range a.slabs {
		s.ar.Release()
	}
	for i := range a.recs {
		for k := range a.recs[i].parts {
			for _, p := range []*part{&a.recs[i].parts[k], a.recs[i].old(Kind(k))} {
				if p.own != nil {
					for _, b := range p.own.bufs {
						b.Release()
					}
				}
			}
		}
	}
	a.slabs, a.byLayout, a.recs, a.pending, a.head, a.staged = nil, nil, nil, nil, 0, 0
}
