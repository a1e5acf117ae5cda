package mesh

import (
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
)

// Flush places and uploads a frame's staged arrays:
//
//  1. Sort. Every staged array that is not placed yet (added, or modified
//     to a new size) is either dedicated — at or above the large
//     threshold, too large for a slab (margin included: arena's
//     Options.Holds), or a vertex array in NoBaseVertex mode: it gets a
//     buffer of its own now — or joins its layout's group.
//  2. Place, layout by layout, largest array first: each slab of the
//     layout in turn gets the arrays still unplaced as one batch
//     (arena.Arena.PlaceSome), which fills its holes, grows it at most
//     once for the rest and writes them through Options.Belt; the arrays
//     a slab leaves go on to the next, and those no slab takes to new
//     slabs, each sized for what it takes (arena.NewFor).
//  3. Rewrite the arrays modified in place, and upload the buffers of
//     their own; mark the meshes resident. Slabs left empty are released.
//
// A failure at any step (the device refuses a buffer) gives back every
// place this call made, so the staged meshes stay staged and not resident,
// and resident meshes keep their data and ranges (a compaction on the
// way may have moved some: Changes reports them). The next Flush tries again.

// dequeue drops the first n entries of the pending queue. The entries
// left move to the front once the dropped ones are at least as many: a
// move copies no more entries than were dropped since the last, so
// dequeue is O(n) amortized, and the queue holds at most twice its
// entries.
func (a *Allocator) dequeue(n int) {
	a.head += n
	switch rest := len(a.pending) - a.head; {
	case rest == 0:
		clear(a.pending)
		a.pending, a.head = a.pending[:0], 0
	case a.head >= rest:
		copy(a.pending, a.pending[a.head:])
		clear(a.pending[rest:])
		a.pending, a.head = a.pending[:rest], 0
	}
}

// piece is one staged array waiting for a place.
type piece struct {
	idx   uint32 // record
	kind  Kind
	slots uint32
}

// Flush places every staged array, growing each slab at most once, and
// uploads the staged data; see above. Call it once a frame, before drawing.
// With Options.MaxFlushBytes it takes the staged meshes in the order they
// were staged while the bytes taken are under that bound (the first
// always), and leaves the rest staged for the next Flush.
// Errors come from the device (device.ErrOutOfMemory, ...) or a full slab
// (arena.ErrTooManyAllocations); after one, nothing staged is placed and
// the call can be repeated. O(staged arrays · log) plus the bytes uploaded
// and copied; it allocates only to grow its scratch tables, new slabs'
// tables, and new buffers.
func (a *Allocator) Flush() error {
	if a.released {
		return errReleased
	}
	if len(a.loaders) > 0 {
		a.takeLoaders()
		defer a.ids.Flush() // removed handles, for the Loaders' reservations
	}
	if err := a.flush(); err != nil {
		a.rollback()
		return err
	}
	for _, h := range a.pending[a.head : a.head+a.taken] {
		if r := &a.recs[h.idx]; r.live && r.gen == h.gen {
			a.swap(h.idx, r)
			r.pending, r.resident = false, true
			r.data, r.more = [2][]byte{}, nil
			a.staged--
		}
	}
	a.dequeue(a.taken)
	a.releaseEmpty()
	a.stats.Flushes++
	return nil
}

func (a *Allocator) flush() error {
	a.placed, a.rewrites = a.placed[:0], a.rewrites[:0]
	defer func() { clear(a.reqs[:cap(a.reqs)]) }() // no array kept past its Flush
	a.resetGroups()
	// taken: the bytes of the meshes this Flush takes, in staging order,
	// while under MaxFlushBytes (the first always).
	var taken uint64
	a.taken = len(a.pending) - a.head
	for i, h := range a.pending[a.head:] {
		r := &a.recs[h.idx]
		if !r.live || r.gen != h.gen {
			continue // removed, perhaps its record reused
		}
		if limit := a.set.MaxFlushBytes; limit > 0 {
			if taken >= limit {
				a.taken = i
				break
			}
			taken += a.bytes(&r.parts[Vertices]) + a.bytes(&r.parts[Indices])
		}
		for k := range r.parts {
			p := &r.parts[k]
			if p.elems == 0 {
				continue
			}
			pc := piece{idx: h.idx, kind: Kind(k), slots: p.layout.Slots(p.elems)}
			if p.placed() {
				a.rewrites = append(a.rewrites, pc) // same size: rewritten in place
				continue
			}
			if a.set.NoBaseVertex && p.layout.Kind == Vertices || a.bytes(p) >= a.set.LargeThresholdBytes {
				if err := a.placeOwn(p, pc); err != nil {
					return err
				}
				continue
			}
			g := &a.groups[a.groupOf(p.layout)]
			if pc.slots > g.maxHeld {
				// Too large for a slab of its layout, margin included.
				if err := a.placeOwn(p, pc); err != nil {
					return err
				}
				continue
			}
			g.pieces = append(g.pieces, pc)
		}
	}
	for i := range a.ngroups {
		if err := a.placeGroup(&a.groups[i]); err != nil {
			return err
		}
	}
	// The rest: rewrites in place, and arrays in buffers of their own.
	for _, pc := range a.rewrites {
		r := &a.recs[pc.idx]
		p := &r.parts[pc.kind]
		if err := a.upload(p, 0, r.data[pc.kind]); err != nil {
			return err
		}
		for i := 1; i < p.layout.Streams(); i++ {
			var d []byte
			if i <= len(r.more) {
				d = r.more[i-1]
			}
			if err := a.upload(p, i, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// groupDirect bounds the element sizes whose group groupAt finds without
// hashing: every index layout and vertex strides below 256 bytes.
const groupDirect = 256

// group is one layout's share of a Flush: the arrays to place in its
// slabs, and the sizes of the layout's slabs.
type group struct {
	layout Layout
	// maxHeld is the most slots a slab of the layout holds, margin
	// included (arena.Options.Holds, which grows with the slots).
	maxHeld uint32
	pieces  []piece
}

// resetGroups empties the groups of the previous Flush, keeping their
// storage.
func (a *Allocator) resetGroups() {
	for i := range a.ngroups {
		g := &a.groups[i]
		if l := g.layout; l.ElemBytes < groupDirect && l.set == 0 {
			a.groupAt[l.Kind][l.ElemBytes] = 0
		}
		clear(g.pieces) // no record index kept alive past its Flush
		g.pieces = g.pieces[:0]
	}
	clear(a.groupBig)
	a.ngroups = 0
}

// groupOf returns the index in a.groups of l's group for this Flush,
// making it (after the ones made before: groups are placed in the order
// their layouts were first staged). O(1); a table lookup for the usual
// layouts, a map lookup for vertices of groupDirect bytes or more.
func (a *Allocator) groupOf(l Layout) int {
	var at *uint32
	if l.ElemBytes < groupDirect && l.set == 0 {
		at = &a.groupAt[l.Kind&1][l.ElemBytes]
		if *at != 0 {
			return int(*at - 1)
		}
	} else if i, ok := a.groupBig[l]; ok {
		return int(i - 1)
	}
	i := a.ngroups
	if i == len(a.groups) {
		a.groups = append(a.groups, group{})
	}
	g := &a.groups[i]
	g.layout, g.maxHeld, g.pieces = l, maxHeld(a.set.slabLimits(l)), g.pieces[:0]
	a.ngroups++
	if at != nil {
		*at = uint32(i + 1)
	} else {
		if a.groupBig == nil {
			a.groupBig = map[Layout]uint32{}
		}
		a.groupBig[l] = uint32(i + 1)
	}
	return i
}

// maxHeld returns the most elements o.Holds accepts, 0 if none. Holds is
// monotone (a request holds when its size and its bin's size are within
// MaxElems, and both grow with it), so a binary search finds the bound:
// a Flush checks its arrays against it, sparing one Holds per array.
func maxHeld(o arena.Options) uint32 {
	lo, hi := uint32(0), o.MaxElems // Holds(lo) or lo == 0; Holds(e) false for e > hi
	for lo < hi {
		mid := hi - (hi-lo)/2
		if o.Holds(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// placeOwn creates p's buffers of their own, one per stream.
func (a *Allocator) placeOwn(p *part, pc piece) error {
	n := p.layout.Streams()
	bufs := make([]device.Buffer, n)
	for i := range bufs {
		buf, err := a.dev.CreateBuffer(device.BufferDesc{
			Label: a.set.label("mesh " + p.layout.String()),
			Size:  a.streamBytes(p, i),
			Usage: p.layout.usage() | device.CopySrc | device.CopyDst | a.set.Usage,
		})
		if err != nil {
			for _, b := range bufs[:i] {
				b.Release()
			}
			return fmt.Errorf("mesh: buffer of its own for %d %v: %w", p.elems, p.layout, err)
		}
		bufs[i] = buf
		a.ownBytes += buf.Size()
	}
	p.own = &owned{bufs}
	a.own++
	a.placed = append(a.placed, pc)     // to give back if the Flush fails
	a.rewrites = append(a.rewrites, pc) // uploaded with the rewrites
	return nil
}

// placeGroup places g's pieces in the slabs of g's layout, then in new
// slabs; see Flush.
func (a *Allocator) placeGroup(g *group) error {
	l, rest := g.layout, g.pieces
	a.sortPieces(rest)
	for _, s := range a.byLayout[l] {
		if len(rest) == 0 {
			return nil
		}
		var err error
		if rest, err = a.placeIn(s, rest); err != nil {
			return err
		}
	}
	for len(rest) > 0 {
		s, err := a.newSlab(l, a.requests(rest))
		if err != nil {
			return err
		}
		n := len(rest)
		if rest, err = a.placeIn(s, rest); err != nil {
			return err
		}
		if len(rest) == n {
			return fmt.Errorf("mesh: a new slab of %v took none of %d arrays: %w", l, n, arena.ErrTooManyAllocations) // cannot happen: NewFor
		}
	}
	return nil
}

// requests returns the arena requests of pieces, in a.reqs.
func (a *Allocator) requests(pieces []piece) []arena.Request {
	reqs := slices.Grow(a.reqs[:0], len(pieces))[:len(pieces)]
	for i, pc := range pieces {
		r := &a.recs[pc.idx]
		req := &reqs[i] // filled in place: a Request is large
		req.Owner, req.Elems, req.Data, req.Fill, req.Planes = owner(pc.idx, pc.kind), pc.slots, r.data[pc.kind], nil, nil
		if pc.kind == Vertices {
			req.Planes = r.more
		}
	}
	a.reqs = reqs
	return reqs
}

// placeIn places pieces in s as one batch (arena.Arena.PlaceSome), and
// returns those s left, in pieces' storage and order.
func (a *Allocator) placeIn(s *slab, pieces []piece) ([]piece, error) {
	ps, _, err := s.ar.PlaceSome(a.ps[:0], a.requests(pieces), a.up)
	a.ps = ps
	if err != nil {
		return nil, fmt.Errorf("mesh: place %d arrays of %v: %w", len(pieces), s.layout, err)
	}
	left := pieces[:0]
	for i, pc := range pieces {
		if ps[i].Handle == (arena.Handle{}) {
			left = append(left, pc)
			continue
		}
		r := &a.recs[pc.idx]
		p := &r.parts[pc.kind]
		p.slab, p.h = s, ps[i].Handle
		a.placed = append(a.placed, pc)
		a.stats.BytesUploaded += uint64(len(r.data[pc.kind]))
	}
	return left, nil
}

// newSlab creates a slab of l sized for reqs (arena.NewFor).
func (a *Allocator) newSlab(l Layout, reqs []arena.Request) (*slab, error) {
	a.slabSeq++
	s := &slab{layout: l, seq: a.slabSeq, slotBytes: l.SlotBytes()}
	ar, err := arena.NewFor(a.dev, a.set.arenaOptions(l, a.set.shape(l).minSlots, func(m arena.Move) { a.onMove(s, m) }), reqs)
	if err != nil {
		return nil, fmt.Errorf("mesh: new slab of %v: %w", l, err)
	}
	s.ar = ar
	a.slabs = append(a.slabs, s)
	a.byLayout[l] = append(a.byLayout[l], s)
	a.stats.SlabsCreated++
	return s, nil
}

// upload writes data, p's stream s array, to p's place: its bytes, then
// zeros to the end of its last slot, so the padding never keeps what an
// earlier array left there. It allocates only to grow the padding scratch.
func (a *Allocator) upload(p *part, s int, data []byte) error {
	if p.slab != nil {
		if err := p.slab.ar.RewritePlane(p.h, s, data, a.up); err != nil {
			return fmt.Errorf("mesh: upload %v: %w", p.layout, err)
		}
		a.stats.BytesUploaded += uint64(len(data))
		return nil
	}
	own := p.own.bufs[s]
	n := len(data) &^ 3
	if n > 0 {
		if err := a.put(own, 0, data[:n]); err != nil {
			return fmt.Errorf("mesh: upload %v: %w", p.layout, err)
		}
	}
	if rest := int(a.streamBytes(p, s)) - n; rest > 0 {
		if cap(a.pad) < rest {
			a.pad = make([]byte, rest)
		}
		pad := a.pad[:rest]
		clear(pad)
		copy(pad, data[n:])
		if err := a.put(own, uint64(n), pad); err != nil {
			return fmt.Errorf("mesh: upload %v: %w", p.layout, err)
		}
	}
	a.stats.BytesUploaded += uint64(len(data))
	return nil
}

// put writes b to buf at off: through the staging belt if there is one,
// else as a queue write.
func (a *Allocator) put(buf device.Buffer, off uint64, b []byte) error {
	if a.set.Belt != nil {
		return a.set.Belt.Upload(buf, off, b)
	}
	return a.dev.WriteBuffer(buf, off, b)
}

// sortPieces sorts the pieces of one group, largest first, ties in the
// order given (staging order). They share their layout, and so their
// Kind, and each is a (slots, record) pair; so it sorts them as packed
// keys, without a comparison function, and by their sizes' bytes only.
func (a *Allocator) sortPieces(pieces []piece) {
	if len(pieces) < 2 {
		return
	}
	keys := a.pieceKeys[:0]
	for _, pc := range pieces {
		keys = append(keys, uint64(^pc.slots)<<32|uint64(pc.idx))
	}
	a.keyScratch = slices.Grow(a.keyScratch[:0], len(keys))[:len(keys)]
	sortKeys(keys, a.keyScratch)
	kind := pieces[0].kind
	for i, k := range keys {
		pieces[i] = piece{idx: uint32(k), kind: kind, slots: ^uint32(k >> 32)}
	}
	a.pieceKeys = keys
}

// sortKeys sorts keys by their high 32 bits, in increasing order and
// stably: keys with the same high half keep their order, whatever their
// low half (a record index, carried along). buf (as long as keys) is
// scratch: a least-significant-byte radix sort over the high half's bytes
// that differ between keys, so a Flush's pieces (sizes of a few
// significant bytes) sort in one or two linear passes. Small inputs go to
// an insertion sort.
func sortKeys(keys, buf []uint64) {
	if len(keys) < 64 {
		for i := 1; i < len(keys); i++ {
			k := keys[i]
			j := i
			for ; j > 0 && keys[j-1]>>32 > k>>32; j-- {
				keys[j] = keys[j-1]
			}
			keys[j] = k
		}
		return
	}
	or, and := uint64(0), ^uint64(0)
	for _, k := range keys {
		or |= k
		and &= k
	}
	varying := (or ^ and) >> 32
	src, dst := keys, buf
	for shift := uint(32); shift < 64; shift += 8 {
		if varying>>(shift-32)&0xff == 0 {
			continue
		}
		var at [256]int
		for _, k := range src {
			at[k>>shift&0xff]++
		}
		pos := 0
		for i, c := range at {
			at[i] = pos
			pos += c
		}
		for _, k := range src {
			b := k >> shift & 0xff
			dst[at[b]] = k
			at[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// rollback gives back every place the failed Flush made.
func (a *Allocator) rollback() {
	for _, pc := range a.placed {
		a.unplace(pc.idx, pc.kind, &a.recs[pc.idx].parts[pc.kind])
	}
	a.placed = a.placed[:0]
	a.releaseEmpty()
}

// releaseEmpty releases every slab that holds no array.
func (a *Allocator) releaseEmpty() {
	kept := a.slabs[:0]
	for _, s := range a.slabs {
		if s.ar.Len() > 0 {
			kept = append(kept, s)
			continue
		}
		a.retire(s)
		list := a.byLayout[s.layout]
		if i := slices.Index(list, s); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		if len(list) == 0 {
			delete(a.byLayout, s.layout)
		} else {
			a.byLayout[s.layout] = list
		}
	}
	clear(a.slabs[len(kept):])
	a.slabs = kept
}
