package mesh

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
)

// Flush places and uploads a frame's staged arrays. It runs in three
// steps, so that each slab grows at most once a frame:
//
//  1. Sort. Every staged array that is not placed yet (added, or modified
//     to a new size) is either dedicated — at or above the large
//     threshold, too large for a slab (margin included), or a vertex
//     array in NoBaseVertex mode: it gets a buffer of its own now — or
//     joins its layout's group.
//
//  2. Place, layout by layout, largest array first. For each slab of the
//     layout, in order: first fill the slab's holes, placing every array
//     the slab serves as it is (arena.AllocateIfFits: it allocates where a
//     free region holds the array, and refuses the rest without making
//     room), so nothing grows or moves.
//     Then take the arrays left that still fit under the slab's maximum
//     (first fit, decreasing) and reserve room for all of them at once:
//     arena.Reserve of the sum of their rounded sizes (each array's
//     guard margin included, Options.GuardBytes), which makes room
//     as a refused allocation of that sum would, and allocates nothing.
//     If the arena had to grow for it, that was the slab's one growth
//     this frame: one new buffer and one copy of the used part. The
//     reserved room is one free region of at least that sum, so every
//     array of the batch is then allocated without a refusal, by the same
//     argument. Arrays no slab takes go to new slabs, each sized for what
//     it takes (at least the minimum slab size).
//
//  3. Upload every staged array, placed now or before (a modification
//     of the same size is rewritten in place), and mark its mesh
//     resident. Slabs left empty are released.
//
// A failure at any step (the device refuses a buffer) gives back every
// place this call made, so the staged meshes stay staged and not resident,
// and resident meshes keep their data and ranges (a compaction on the
// way may have moved some: Moved lists them). The next Flush tries again.

// piece is one staged array waiting for a place.
type piece struct {
	idx   uint32 // record
	kind  Kind
	slots uint32
	need  uint32 // slots and margin rounded up to their allocator bin (slabShape.need)
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
	if err := a.flush(); err != nil {
		a.rollback()
		return err
	}
	for _, h := range a.pending[:a.taken] {
		if r := &a.recs[h.idx]; r.live && r.gen == h.gen {
			r.pending, r.resident = false, true
			r.data = [2][]byte{}
		}
	}
	// The meshes left for the next Flush (Options.MaxFlushBytes), in
	// staging order, less the removed ones.
	left := a.pending[:0]
	for _, h := range a.pending[a.taken:] {
		if r := &a.recs[h.idx]; r.live && r.gen == h.gen {
			left = append(left, h)
		}
	}
	clear(a.pending[len(left):])
	a.pending = left
	a.releaseEmpty()
	a.stats.Flushes++
	return nil
}

func (a *Allocator) flush() error {
	a.placeEpoch++ // slabs moved from here on are marked (onMove)
	a.placed, a.rewrites = a.placed[:0], a.rewrites[:0]
	a.runs.ups = a.runs.ups[:0]
	defer a.runs.reset()
	a.resetGroups()
	// taken: the bytes of the meshes this Flush takes, in staging order,
	// while under MaxFlushBytes (the first always).
	var taken uint64
	a.taken = len(a.pending)
	for i, h := range a.pending {
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
			need, ok := g.shape.need(pc.slots)
			if !ok {
				// Too large for a slab of its layout, margin included.
				if err := a.placeOwn(p, pc); err != nil {
					return err
				}
				continue
			}
			pc.need = need
			g.pieces = append(g.pieces, pc)
		}
	}
	for i := range a.ngroups {
		if err := a.placeGroup(&a.groups[i]); err != nil {
			return err
		}
	}
	// The uploads: the arrays placed in slabs now were queued as they
	// were placed (claim), in that order (mostly by slab and offset
	// already, which makes the sort in uploadRuns needless), with the
	// offsets the arena gave them; a compaction on the way (a Reserve,
	// or an allocation that made room) may have moved those of its slab,
	// which onMove marked: their offsets are read again now. Then the rest: rewrites in place, and arrays in
	// buffers of their own, uploaded at once. Each array is in exactly
	// one of the two lists.
	for i := range a.runs.ups {
		u := &a.runs.ups[i]
		if u.slab.movedAt != a.placeEpoch {
			continue // nothing in its slab moved since it was placed
		}
		off, err := u.slab.ar.Offset(u.h)
		if err != nil {
			return fmt.Errorf("mesh: upload %v: %w", u.slab.layout, err)
		}
		u.off = uint64(off) * uint64(u.slab.slotBytes)
	}
	for _, pc := range a.rewrites {
		if err := a.queueUpload(pc.idx, pc.kind); err != nil {
			return err
		}
	}
	return a.uploadRuns()
}

// groupDirect bounds the element sizes whose group groupAt finds without
// hashing: every index layout and vertex strides below 256 bytes.
const groupDirect = 256

// group is one layout's share of a Flush: the arrays to place in its
// slabs, and the sizes of the layout's slabs.
type group struct {
	layout Layout
	shape  slabShape
	pieces []piece
}

// resetGroups empties the groups of the previous Flush, keeping their
// storage.
func (a *Allocator) resetGroups() {
	for i := range a.ngroups {
		g := &a.groups[i]
		if l := g.layout; l.ElemBytes < groupDirect {
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
	if l.ElemBytes < groupDirect {
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
	g.layout, g.shape, g.pieces = l, a.set.shape(l), g.pieces[:0]
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

// queueUpload queues the upload of array k of record idx, placed before
// this Flush, to its slab; an array in a buffer of its own is uploaded at
// once. Each array is queued at most once a Flush (see flush).
func (a *Allocator) queueUpload(idx uint32, k Kind) error {
	r := &a.recs[idx]
	p := &r.parts[k]
	if p.slab == nil {
		return a.upload(p, r.data[k])
	}
	off, err := p.slab.ar.Offset(p.h)
	if err != nil {
		return fmt.Errorf("mesh: upload %v: %w", p.layout, err)
	}
	a.runs.ups = append(a.runs.ups, slabUpload{slab: p.slab, h: p.h, off: uint64(off) * uint64(p.slab.slotBytes), n: a.bytes(p), p: p, data: r.data[k]})
	return nil
}

// Uploads into slabs are coalesced: the arrays of a frame sit mostly side
// by side (a batch is placed in one reserved region), so they go to the
// device as one write per run of adjacent arrays, up to maxRunBytes,
// copied with their padding into one scratch buffer. On WebGPU a write
// costs a queue call, a validation scope and a staging allocation, so
// 10,000 meshes of a few KiB each upload as a few dozen writes instead of
// 20,000 (BenchmarkFlushUpload measures it).

// maxRunBytes bounds one coalesced write and so the scratch it needs.
const maxRunBytes = 4 << 20

// slabUpload is one array to upload to its place in a slab.
type slabUpload struct {
	slab *slab
	h    arena.Handle
	off  uint64 // bytes from the start of the slab's buffer, once placement is done
	n    uint64 // bytes of its place: a.bytes(p)
	p    *part
	data []byte
}

// runs is the per-Flush scratch of coalesced uploads.
type runs struct {
	ups    []slabUpload // in the order added
	keys   []upKey      // ups by slab and offset
	sorted []slabUpload
	buf    []byte // one run's bytes
	epoch  uint64 // inOrder's calls, to mark slabs (slab.upEpoch)
}

// upKey orders an upload: its slab's seq above its offset.
type upKey struct {
	key uint64
	i   uint32 // index in ups
}

// reset drops the references to the frame's data.
func (r *runs) reset() {
	clear(r.ups)
	clear(r.sorted)
	r.ups, r.sorted = r.ups[:0], r.sorted[:0]
}

// sortedUps returns the uploads sorted by slab (creation order) and
// offset. Uploads in that order already (a frame placed in one reserved
// region of each slab) are returned as they are, after one pass;
// otherwise it sorts 16-byte keys rather than the uploads themselves.
func (r *runs) sortedUps() []slabUpload {
	if r.inOrder() {
		return r.ups
	}
	r.keys = r.keys[:0]
	for i, u := range r.ups {
		if u.slab.seq >= 1<<20 || u.off >= 1<<44 {
			// Beyond the packed key: sort the uploads themselves.
			slices.SortFunc(r.ups, func(x, y slabUpload) int {
				return cmp.Or(cmp.Compare(x.slab.seq, y.slab.seq), cmp.Compare(x.off, y.off))
			})
			return r.ups
		}
		r.keys = append(r.keys, upKey{u.slab.seq<<44 | u.off, uint32(i)})
	}
	slices.SortFunc(r.keys, func(x, y upKey) int { return cmp.Compare(x.key, y.key) })
	r.sorted = r.sorted[:0]
	for _, k := range r.keys {
		r.sorted = append(r.sorted, r.ups[k.i])
	}
	return r.sorted
}

// inOrder reports whether r.ups hold each slab's uploads in one block,
// by increasing offset: all uploadRuns needs (the order of the blocks,
// the order the slabs were placed in, is as deterministic as seq's). It
// marks each slab whose block it has seen with this call's epoch.
func (r *runs) inOrder() bool {
	r.epoch++
	var last *slab
	var end uint64
	for i := range r.ups {
		u := &r.ups[i]
		if u.slab != last {
			if u.slab.upEpoch == r.epoch {
				return false // a second block of the slab
			}
			u.slab.upEpoch = r.epoch
			last = u.slab
		} else if u.off < end {
			return false
		}
		end = u.off + u.n
	}
	return true
}

// uploadRuns writes a.runs.ups, sorted by slab and offset, one write per
// run of adjacent arrays in a slab. An array alone is written as upload
// writes it, without a copy. It allocates only to grow its scratch.
func (a *Allocator) uploadRuns() error {
	ups := a.runs.sortedUps()
	belt := a.set.Belt
	maxRun := uint64(maxRunBytes)
	if belt != nil {
		maxRun = min(maxRun, belt.ChunkBytes())
	}
	// The run being written and the fill that gathers it into the
	// belt's chunk, made once.
	var run []slabUpload
	fill := func(dst []byte) { a.gather(dst, run) }
	for i := 0; i < len(ups); {
		first := ups[i]
		end := first.off + first.n
		j := i + 1
		for j < len(ups) && ups[j].slab == first.slab && ups[j].off == end && end+ups[j].n-first.off <= maxRun {
			end += ups[j].n
			j++
		}
		run = ups[i:j]
		n := end - first.off
		var err error
		switch {
		case belt != nil && n <= maxRun:
			err = belt.UploadFunc(first.slab.ar.Buffer(), first.off, n, fill)
		case j == i+1:
			// Alone, and not through the belt: written from its own bytes.
			if err := a.upload(first.p, first.data); err != nil {
				return err
			}
			i = j
			continue
		default:
			if uint64(cap(a.runs.buf)) < n {
				a.runs.buf = make([]byte, n, max(n, min(2*uint64(cap(a.runs.buf)), maxRunBytes)))
			}
			a.gather(a.runs.buf[:n], run)
			err = a.put(first.slab.ar.Buffer(), first.off, a.runs.buf[:n])
		}
		if err != nil {
			return fmt.Errorf("mesh: upload %d arrays of %v: %w", j-i, first.p.layout, err)
		}
		for _, u := range run {
			a.stats.BytesUploaded += uint64(len(u.data))
		}
		i = j
	}
	return nil
}

// gather writes the arrays of run, adjacent in their slab, into dst (the
// run's bytes, from the first array's offset), each padded with zeros to
// the end of its last slot.
func (a *Allocator) gather(dst []byte, run []slabUpload) {
	base := run[0].off
	for _, u := range run {
		at := u.off - base
		if copied := uint64(copy(dst[at:], u.data)); copied < u.n {
			clear(dst[at+copied : at+u.n])
		}
	}
}

// placeOwn creates p's buffer of its own.
func (a *Allocator) placeOwn(p *part, pc piece) error {
	buf, err := a.dev.CreateBuffer(device.BufferDesc{
		Label: a.set.label("mesh " + p.layout.String()),
		Size:  a.bytes(p),
		Usage: p.layout.usage() | device.CopySrc | device.CopyDst | a.set.Usage,
	})
	if err != nil {
		return fmt.Errorf("mesh: buffer of its own for %d %v: %w", p.elems, p.layout, err)
	}
	p.own = buf
	a.own++
	a.ownBytes += buf.Size()
	a.placed = append(a.placed, pc)     // to give back if the Flush fails
	a.rewrites = append(a.rewrites, pc) // uploaded with the rewrites
	return nil
}

// placeGroup places g's pieces in the slabs of g's layout; see above.
func (a *Allocator) placeGroup(g *group) error {
	l, pieces, sh := g.layout, g.pieces, g.shape
	a.sortPieces(pieces, sh)
	maxCount := int(a.set.MaxMeshesPerSlab) - 2 // a batch's allocations, leaving nodes for the free region after them and one more
	rest := pieces
	for _, s := range a.byLayout[l] {
		if len(rest) == 0 {
			return nil
		}
		var full bool
		var err error
		rest, full, err = a.fill(s, rest)
		if err != nil {
			return err
		}
		if full || len(rest) == 0 {
			continue
		}
		// Reserve counts a margin of its own besides the batch's.
		used := s.ar.Stats().ReservedElems + uint64(sh.margin)
		if used >= uint64(sh.maxSlots) {
			continue
		}
		batch, left, sum := a.take(rest, uint64(sh.maxSlots)-used, maxCount)
		if len(batch) == 0 {
			continue
		}
		if !s.ar.Fits(uint32(sum)) && !s.ar.CanGrowFor(uint32(sum)) {
			// Only a full compaction would make room: at the slab's
			// maximum, that would be every frame. The batch goes on,
			// and Sweep closes the holes within its budget.
			rest = append(left, batch...)
			a.sortPieces(rest, sh)
			continue
		}
		err = s.ar.Reserve(uint32(sum)) // take keeps sum under the slab's maximum
		if errors.Is(err, arena.ErrFull) {
			// At its maximum after all, or the device refused the growth:
			// the batch goes on to the next slab or a new one.
			rest = append(left, batch...)
			a.sortPieces(rest, sh)
			continue
		}
		if err != nil {
			return fmt.Errorf("mesh: make room for %d slots of %v: %w", sum, s.layout, err)
		}
		unplaced, err := a.allocate(s, batch)
		if err != nil {
			return err
		}
		rest = append(left, unplaced...)
	}
	for len(rest) > 0 {
		batch, left, sum := a.take(rest, uint64(sh.maxSlots), maxCount)
		if len(batch) == 0 {
			return fmt.Errorf("mesh: %d slots of %v do not fit a slab of %d: %w", rest[0].slots, l, sh.maxSlots, arena.ErrFull) // flush sends these to buffers of their own
		}
		s, err := a.newSlab(l, max(sh.minSlots, uint32(sum)))
		if err != nil {
			return err
		}
		unplaced, err := a.allocate(s, batch)
		if err != nil {
			return err
		}
		if len(unplaced) == len(batch) {
			return fmt.Errorf("mesh: a new slab of %v took none of %d arrays: %w", l, len(batch), arena.ErrTooManyAllocations) // cannot happen: maxCount
		}
		rest = append(left, unplaced...)
	}
	return nil
}

// sortPieces sorts the pieces of one group, largest first, ties in the
// order given (staging order, for a Flush's first sort). They share their
// layout, and so their Kind, and each is a (slots, record) pair whose
// need follows from its slots and their slabs' shape sh; so it sorts them
// as packed keys, without a comparison function, and by their sizes'
// bytes only.
func (a *Allocator) sortPieces(pieces []piece, sh slabShape) {
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
		slots := ^uint32(k >> 32)
		need, _ := sh.need(slots) // flush found it in range
		pieces[i] = piece{idx: uint32(k), kind: kind, slots: slots, need: need}
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

// fill places, without any growth, the pieces that fit in s's free space
// now: arena.AllocateIfFits serves a piece where a free region holds it
// and refuses the rest (ErrNoFit) without making room. It returns the
// pieces left, kept in rest's storage, and whether s is out of
// allocation nodes.
func (a *Allocator) fill(s *slab, rest []piece) (left []piece, full bool, err error) {
	left = rest[:0]
	for k, pc := range rest {
		h, off, err := s.ar.AllocateIfFits(pc.slots, owner(pc.idx, pc.kind))
		switch {
		case err == nil:
			a.claim(s, pc, h, off)
		case err == arena.ErrNoFit:
			left = append(left, pc)
		case errors.Is(err, arena.ErrTooManyAllocations):
			return append(left, rest[k:]...), true, nil
		default:
			return nil, false, fmt.Errorf("mesh: place %d slots of %v: %w", pc.slots, s.layout, err)
		}
	}
	return left, false, nil
}

// take splits pieces into a batch of at most maxCount whose rounded sizes
// sum to a total whose own bin rounding fits in room, taken first fit in
// order, and the rest, kept in pieces' storage. It returns the batch (in
// a.scratch), the rest, and the batch's summed rounded size.
func (a *Allocator) take(pieces []piece, room uint64, maxCount int) (batch, left []piece, sum uint64) {
	a.scratch = a.scratch[:0]
	left = pieces[:0]
	for _, pc := range pieces {
		total := sum + uint64(pc.need)
		r, ok := arena.RoundUp(uint32(min(total, arena.MaxRoundUp+1)))
		if ok && uint64(r) <= room && len(a.scratch) < maxCount {
			sum = total
			a.scratch = append(a.scratch, pc)
		} else {
			left = append(left, pc)
		}
	}
	return a.scratch, left, sum
}

// allocate places the pieces of batch in s, where Reserve or the slab's
// creation made room for their needs, margins included: each is served
// as the slab is (AllocateIfFits), or, were it refused, where the arena
// makes room again (AllocateOwned). When s runs out of
// allocation nodes it returns the pieces not placed (in a.unplaced).
func (a *Allocator) allocate(s *slab, batch []piece) (unplaced []piece, err error) {
	for k, pc := range batch {
		tag := owner(pc.idx, pc.kind)
		h, off, err := s.ar.AllocateIfFits(pc.slots, tag)
		if err == arena.ErrNoFit {
			if h, err = s.ar.AllocateOwned(pc.slots, tag); err == nil {
				off, err = s.ar.Offset(h)
			}
		}
		if errors.Is(err, arena.ErrTooManyAllocations) {
			a.unplaced = append(a.unplaced[:0], batch[k:]...)
			return a.unplaced, nil
		}
		if err != nil {
			return nil, fmt.Errorf("mesh: place %d slots of %v: %w", pc.slots, s.layout, err)
		}
		a.claim(s, pc, h, off)
	}
	return nil, nil
}

// claim records that pc's array lives at h in s, allocated with pc's
// owner tag and starting at slot off, and queues its upload while its
// record is at hand (flush reads off again if s moves before the upload).
func (a *Allocator) claim(s *slab, pc piece, h arena.Handle, off uint32) {
	r := &a.recs[pc.idx]
	p := &r.parts[pc.kind]
	p.slab, p.h = s, h
	a.placed = append(a.placed, pc)
	a.runs.ups = append(a.runs.ups, slabUpload{slab: s, h: h, off: uint64(off) * uint64(s.slotBytes), n: uint64(pc.slots) * uint64(s.slotBytes), p: p, data: r.data[pc.kind]})
}

// newSlab creates a slab of l with capacity slots.
func (a *Allocator) newSlab(l Layout, capacity uint32) (*slab, error) {
	a.slabSeq++
	s := &slab{layout: l, seq: a.slabSeq, slotBytes: l.SlotBytes()}
	ar, err := arena.New(a.dev, a.set.arenaOptions(l, capacity, func(m arena.Move) { a.onMove(s, m) }))
	if err != nil {
		return nil, fmt.Errorf("mesh: new slab of %v: %w", l, err)
	}
	s.ar = ar
	a.slabs = append(a.slabs, s)
	a.byLayout[l] = append(a.byLayout[l], s)
	a.stats.SlabsCreated++
	return s, nil
}

// upload writes data, p's array, to p's place: its whole words, then the
// rest of its last slot (the array's last bytes and zeros to the slot's
// end), so the padding never keeps what an earlier array left there. It
// allocates only to grow the padding scratch, once per larger slot.
func (a *Allocator) upload(p *part, data []byte) error {
	n := len(data) &^ 3
	if n > 0 {
		if err := a.write(p, 0, data[:n]); err != nil {
			return fmt.Errorf("mesh: upload %v: %w", p.layout, err)
		}
	}
	if rest := int(a.bytes(p)) - n; rest > 0 {
		if cap(a.pad) < rest {
			a.pad = make([]byte, rest)
		}
		pad := a.pad[:rest]
		clear(pad)
		copy(pad, data[n:])
		if err := a.write(p, uint64(n), pad); err != nil {
			return fmt.Errorf("mesh: upload %v: %w", p.layout, err)
		}
	}
	a.stats.BytesUploaded += uint64(len(data))
	return nil
}

func (a *Allocator) write(p *part, off uint64, b []byte) error {
	if p.slab == nil {
		return a.put(p.own, off, b)
	}
	if a.set.Belt == nil {
		return p.slab.ar.Write(p.h, off, b)
	}
	at, err := p.slab.ar.Offset(p.h)
	if err != nil {
		return err
	}
	return a.put(p.slab.ar.Buffer(), uint64(at)*uint64(p.slab.ar.ElemSize())+off, b)
}

// put writes b to buf at off: through the staging belt if there is one,
// else as a queue write.
func (a *Allocator) put(buf device.Buffer, off uint64, b []byte) error {
	if a.set.Belt != nil {
		return a.set.Belt.Upload(buf, off, b)
	}
	return a.dev.WriteBuffer(buf, off, b)
}

// rollback gives back every place the failed Flush made.
func (a *Allocator) rollback() {
	for _, pc := range a.placed {
		a.unplace(pc.idx, &a.recs[pc.idx].parts[pc.kind])
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
