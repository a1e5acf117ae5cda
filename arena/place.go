package arena

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"unsafe"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/workers"
	"github.com/gpumem/gpumem/offset"
)

// Request asks Place for one allocation and gives its bytes.
type Request struct {
	// Owner is the allocation's tag, as AllocateOwned takes it.
	Owner uint64
	// Elems is how many elements to allocate.
	Elems uint32
	// Data is written from the allocation's first byte, and the rest of
	// its elements with zeros. At most Elems*ElemSize bytes, of any length.
	Data []byte
	// Fill, when not nil, writes the allocation's bytes instead of Data:
	// it gets exactly Elems*ElemSize bytes, must write every one, and must
	// not keep the slice. It runs during Place, after every request is
	// placed, and must not call the arena.
	Fill func(dst []byte)
	// Planes holds the bytes of the arena's planes (Options.Planes), in
	// their order, written as Data is: at most Elems times the plane's
	// element size each; a plane without an entry gets zeros.
	Planes [][]byte
}

// Placement is where Place put a request: its handle and where its
// elements start. A request PlaceSome left has the zero Placement.
type Placement struct {
	Handle Handle
	Offset uint32
}

// Uploader carries Place's writes into the arena's buffer; a
// *staging.Belt is one. Place writes through the device's queue when it is
// given none. Its UploadFunc calls are at most 4 MiB, and at most
// ChunkBytes() when the uploader has that method, as a belt has.
type Uploader interface {
	Upload(dst device.Buffer, off uint64, data []byte) error
	UploadFunc(dst device.Buffer, off, n uint64, fill func(dst []byte)) error
}

// chunked is an Uploader whose UploadFunc takes at most ChunkBytes.
type chunked interface{ ChunkBytes() uint64 }

// maxRunBytes bounds one write of allocations placed end to end, and so
// the scratch it needs. On WebGPU a write costs a queue call, a validation
// scope and a staging allocation, so a frame of 10,000 small arrays goes
// up as a few dozen writes instead of 10,000 (mesh's BenchmarkFlushUpload).
const maxRunBytes = 4 << 20

// Place allocates a batch of requests, writes their bytes through up (or
// as queue writes when up is nil), and appends one Placement per request
// to dst, in the order of reqs. It returns dst and the moves of live
// allocations it made to make room (also given to OnMove); the slice of
// moves is the arena's, valid until its next call. The requests' own
// allocations are never among the moves: Place writes each where it ends.
//
// It places the batch in two steps, so that the arena makes room at most
// once for the whole batch:
//
//  1. Holes: every request that a free region serves as it is gets it,
//     in order, with no growth and no move.
//  2. The rest: when no free region is at least S long, S being the sum
//     of the rest's requests each rounded up to its bin (RoundUp of its
//     elements and margin), the arena makes room for S as Allocate makes
//     room for one request of S (grow when short; when the room is there
//     in pieces, arm a sweep and grow a little, or compact). Then every
//     request of the rest is allocated without a refusal: a region of at
//     least S serves the first (a region at least a bin's size long is
//     filed in that bin or above, and the first's rounded size is at most
//     S), and each allocation takes at most its rounded size from
//     whichever region serves it, so some region keeps at least the sum of
//     the rounded sizes still to place. So the arena grows at most once
//     per batch, and compacts at most as Allocate would once.
//
// The bytes go up in address order, one write (or one UploadFunc) per run
// of allocations that lie end to end, up to 4 MiB a run: each request's
// Data or Fill, zeros to the end of its elements, and with
// Options.GuardBytes its margin, filled with GuardPattern; between two
// allocations of a run, the first's bin rounding is written as zeros (or
// as margin). No byte of another live allocation is written.
//
// All or nothing: on any error (an invalid request, ErrFull when no room
// for S can be made, ErrTooManyAllocations, a device's refusal of a
// growth or of a write) nothing of the batch stays placed, dst comes back
// as given, and every live allocation is intact, though the arena may
// have grown or compacted (the moves are returned and given to OnMove).
// Errors name the request's index. O(len(reqs) + bytes written), plus
// the growth or compaction; it allocates only to grow its scratch.
func (a *Arena) Place(dst []Placement, reqs []Request, up Uploader) ([]Placement, []Move, error) {
	return a.placeBatch(dst, reqs, up, false)
}

// PlaceSome is Place for a caller that has other arenas to try: it takes
// the requests it can and leaves the rest, their Placement zero, rather
// than failing. After the holes (Place's step 1) it takes the rest first
// fit, in order, while their rounded sum stays within what MaxElems
// leaves and allocation nodes (MaxAllocs) remain; then it makes room once
// for them, as Place does, unless only a full compaction could make it
// (the arena near MaxElems: the holes are left to Sweep) or the device
// refuses the growth, and then it leaves them all. A request no arena of
// these options can hold (Options.Holds) is always left. Its errors are
// Place's but ErrFull and ErrTooManyAllocations, and on error it places
// nothing, as Place.
func (a *Arena) PlaceSome(dst []Placement, reqs []Request, up Uploader) ([]Placement, []Move, error) {
	return a.placeBatch(dst, reqs, up, true)
}

// placeBatch is Place, and PlaceSome when some is set.
func (a *Arena) placeBatch(dst []Placement, reqs []Request, up Uploader, some bool) ([]Placement, []Move, error) {
	a.placeMoves = a.placeMoves[:0]
	if a.released {
		return dst, nil, errReleased
	}
	n0 := len(dst)
	if err := a.sizeBatch(reqs, some); err != nil {
		return dst, nil, err
	}
	dst = slices.Grow(dst, len(reqs))[:n0+len(reqs)]
	out := dst[n0:]
	clear(out)
	err := a.placeAll(out, reqs, some)
	a.report(a.placeMoves)
	if err == nil {
		if err = a.writeBatch(out, reqs, up); err != nil {
			err = fmt.Errorf("arena %q: write %d requests: %w", a.opts.Label, len(reqs), err)
		}
	}
	if err != nil {
		for i := range out {
			if h := out[i].Handle; h != (Handle{}) {
				_ = a.Free(h) // live: it cannot fail
			}
		}
		clear(out)
		return dst[:n0], a.placeMoves, err
	}
	a.prepareAhead()
	return dst, a.placeMoves, nil
}

// placeAll allocates the requests (steps 1 and 2 of Place), recording
// their handles in out.
func (a *Arena) placeAll(out []Placement, reqs []Request, some bool) error {
	rest, nodesOut, err := a.placeHoles(out, reqs, some)
	if err != nil || len(rest) == 0 || nodesOut {
		return err
	}
	return a.placeRest(out, reqs, rest, some)
}

// sizeBatch checks reqs and records what each takes from the allocator in
// a.sizes: 0 for a request PlaceSome must leave (it cannot be held).
func (a *Arena) sizeBatch(reqs []Request, some bool) error {
	a.sizes = slices.Grow(a.sizes[:0], len(reqs))[:len(reqs)]
	es := uint64(a.opts.ElemSize)
	var held uint32
	if some {
		held = a.maxHeld()
	}
	// Without a margin or rounding, a request within MaxElems takes its
	// elements: a.size's answer, without the call.
	plain := a.guard == 0 && !a.opts.RoundToBins
	for i := range reqs {
		r := &reqs[i]
		if r.Elems == 0 || uint64(len(r.Data)) > uint64(r.Elems)*es {
			return fmt.Errorf("arena %q: request %d of %d: %w: %d bytes of data for %d elements of %d bytes",
				a.opts.Label, i, len(reqs), ErrInvalidSize, len(r.Data), r.Elems, es)
		}
		if len(r.Planes) > 0 {
			if err := a.checkPlanes(r.Planes, r.Elems); err != nil {
				return fmt.Errorf("arena %q: request %d of %d: %w", a.opts.Label, i, len(reqs), err)
			}
		}
		size, err := r.Elems, error(nil)
		if !plain || size > a.opts.MaxElems {
			size, err = a.size(r.Elems)
		}
		if some && (err != nil || size > held) {
			size, err = 0, nil // left
		}
		if err != nil {
			return fmt.Errorf("arena %q: request %d of %d: %w", a.opts.Label, i, len(reqs), err)
		}
		a.sizes[i] = size
	}
	return nil
}

// checkPlanes checks a request's plane data against its elements.
func (a *Arena) checkPlanes(planes [][]byte, elems uint32) error {
	if len(planes) > len(a.opts.Planes) {
		return fmt.Errorf("%w: data for %d planes, the arena has %d", ErrInvalidSize, len(planes), len(a.opts.Planes))
	}
	for i, d := range planes {
		if pe := uint64(a.opts.Planes[i]); uint64(len(d)) > uint64(elems)*pe {
			return fmt.Errorf("%w: plane %d: %d bytes of data for %d elements of %d bytes", ErrInvalidSize, i+1, len(d), elems, pe)
		}
	}
	return nil
}

// maxHeld returns the largest size whose bin's size is within MaxElems,
// 0 if none. For a request a.size sized without error (its elements and
// margin, perhaps rounded to its bin, within MaxElems), Options.Holds is
// that size at most maxHeld. Bin sizes grow with the size, so a binary
// search finds the bound, once a batch: sizeBatch spares a copy of the
// options, a division and a RoundUp per request.
func (a *Arena) maxHeld() uint32 {
	lo, hi := uint32(0), a.opts.MaxElems
	for lo < hi {
		mid := hi - (hi-lo)/2
		if need, ok := offset.RoundUp(mid); ok && need <= a.opts.MaxElems {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// placeHoles is step 1: it allocates every request a free region serves
// as it is, and returns the others (but those PlaceSome leaves), in order.
// nodesOut reports that PlaceSome ran out of allocation nodes.
func (a *Arena) placeHoles(out []Placement, reqs []Request, some bool) (rest []int32, nodesOut bool, err error) {
	rest = a.rest[:0]
	defer func() { a.rest = rest }()
	for i := range reqs {
		size := a.sizes[i]
		if size == 0 {
			continue // left
		}
		if size > a.alloc.Capacity() {
			rest = append(rest, int32(i))
			continue
		}
		al, err := a.alloc.Allocate(size)
		switch {
		case err == nil:
			out[i].Handle = a.record(al, reqs[i].Elems, reqs[i].Owner)
		case err == offset.ErrOutOfSpace:
			rest = append(rest, int32(i))
		case some && errors.Is(err, offset.ErrNodeLimit):
			return rest, true, nil
		default:
			return rest, false, fmt.Errorf("request %d of %d: %w", i, len(reqs), a.refused(reqs[i].Elems, err))
		}
	}
	return rest, false, nil
}

// placeRest is step 2: room for the requests rest names, once, then
// their allocations. PlaceSome first drops those it leaves from rest.
func (a *Arena) placeRest(out []Placement, reqs []Request, rest []int32, some bool) error {
	var sum uint64
	if some {
		rest, sum = a.takeFirstFit(rest)
		if len(rest) == 0 {
			return nil
		}
		if !a.fits(uint32(sum)) && !a.canGrowFor(uint32(sum)) {
			return nil // only a full compaction would make room: left to Sweep
		}
	} else {
		for _, i := range rest {
			need, ok := offset.RoundUp(a.sizes[i])
			if !ok {
				need = a.opts.MaxElems // above MaxRoundUp: refused below
			}
			sum += uint64(need)
		}
		if sum > uint64(a.opts.MaxElems) || sum > offset.MaxRoundUp {
			return fmt.Errorf("%w: %d requests need %d elements, max %d", ErrFull, len(rest), sum, a.opts.MaxElems)
		}
	}
	if !a.fits(uint32(sum)) {
		a.placing, a.fresh = true, out
		err := a.makeRoom(uint32(sum))
		a.placing, a.fresh = false, nil
		if err != nil {
			if some && errors.Is(err, ErrFull) {
				return nil
			}
			return err
		}
	}
	for _, i := range rest {
		al, err := a.alloc.Allocate(a.sizes[i])
		if err != nil {
			if some && errors.Is(err, offset.ErrNodeLimit) {
				return nil
			}
			return fmt.Errorf("request %d of %d: %w", i, len(reqs), a.refused(reqs[i].Elems, err))
		}
		out[i].Handle = a.record(al, reqs[i].Elems, reqs[i].Owner)
	}
	return nil
}

// takeFirstFit keeps of rest, first fit in order, the requests whose
// rounded sizes sum to a total whose own rounding stays within what
// MaxElems leaves, while allocation nodes remain (each allocation may take
// one, and one more is kept for the free region after them). It returns
// them, in rest's storage, and their sum.
func (a *Arena) takeFirstFit(rest []int32) ([]int32, uint64) {
	r := a.alloc.Report()
	reserved := uint64(a.alloc.Capacity() - r.Free)
	if reserved >= uint64(a.opts.MaxElems) {
		return rest[:0], 0
	}
	room := uint64(a.opts.MaxElems) - reserved
	nodes := int(a.opts.MaxAllocs) - int(r.Allocations) - int(r.FreeRegions) - 1
	kept := rest[:0]
	var sum uint64
	for _, i := range rest {
		if len(kept) >= nodes {
			break
		}
		need, _ := offset.RoundUp(a.sizes[i]) // sizeBatch kept it in range
		total := sum + uint64(need)
		if r, ok := offset.RoundUp(uint32(min(total, offset.MaxRoundUp+1))); ok && uint64(r) <= room {
			sum = total
			kept = append(kept, i)
		}
	}
	return kept, sum
}

// canGrowFor reports whether growth alone can make room for size: its
// bin's size after the used range stays within MaxElems.
func (a *Arena) canGrowFor(size uint32) bool {
	need, ok := offset.RoundUp(size)
	return ok && uint64(a.alloc.Capacity()-a.alloc.Tail())+uint64(need) <= uint64(a.opts.MaxElems)
}

// record records the allocator's new allocation al as elems elements for
// owner, without filling its margin, and returns its handle.
func (a *Arena) record(al offset.Allocation, elems uint32, owner uint64) Handle {
	id := al.ID()
	s := &a.slots[id]
	s.gen++
	if s.gen == 0 {
		s.gen = 1
	}
	s.alloc, s.elems, s.owner = al, elems, owner
	a.occupied += uint64(elems)
	return Handle{id: id, gen: s.gen, arena: a.serial}
}

// reportMoves runs for a batch of moves a compaction inside Place made
// (flush): it keeps those of live allocations from before the call in
// a.placeMoves, for Place to return and to give to OnMove, and drops the
// moves of the call's own allocations (a.fresh), written later where they
// end.
func (a *Arena) reportMoves() {
	if len(a.isFresh) < len(a.slots) {
		a.isFresh = make([]bool, len(a.slots))
	}
	for _, p := range a.fresh {
		if p.Handle != (Handle{}) {
			a.isFresh[p.Handle.id] = true
		}
	}
	for _, m := range a.done {
		if !a.isFresh[m.Handle.id] {
			a.placeMoves = append(a.placeMoves, m)
		}
	}
	for _, p := range a.fresh {
		a.isFresh[p.Handle.id] = false
	}
}

// writeBatch writes the placed requests' bytes, in address order, one
// write per run of allocations that lie end to end (see Place), and sets
// their offsets in out.
func (a *Arena) writeBatch(out []Placement, reqs []Request, up Uploader) error {
	ws := a.order[:0]
	sorted := true
	for i := range out {
		if out[i].Handle == (Handle{}) {
			continue
		}
		sl := &a.slots[out[i].Handle.id]
		off := sl.alloc.Offset
		out[i].Offset = off
		if n := len(ws); n > 0 && ws[n-1].off > off {
			sorted = false
		}
		ws = append(ws, written{off: off, size: sl.alloc.Size, elems: sl.elems, req: uint32(i)})
	}
	if !sorted {
		slices.SortFunc(ws, func(x, y written) int { return cmp.Compare(x.off, y.off) })
	}
	a.order = ws
	a.wReqs = reqs
	defer func() { a.wReqs, a.wRun, a.wPlane = nil, nil, 0 }()
	if a.gather == nil {
		a.gather = a.gatherRun
	}
	for p := range a.Planes() {
		a.wPlane = p
		if err := a.writeRuns(ws, up); err != nil {
			return err
		}
	}
	return nil
}

// written is a placed request of the batch being written, as writeRuns
// and gatherRun read it: its slot's place, copied once so that writing a
// run does not go back to the slots.
type written struct {
	off, size uint32 // the slot's alloc.Offset and alloc.Size
	elems     uint32 // the slot's elems
	req       uint32 // its index in the batch
}

// writeRuns writes the runs of ws, placed requests in address order, into
// plane a.wPlane.
func (a *Arena) writeRuns(ws []written, up Uploader) error {
	maxRun := uint64(maxRunBytes)
	if c, ok := up.(chunked); ok {
		maxRun = min(maxRun, c.ChunkBytes())
	}
	p := a.wPlane
	es := uint64(a.opts.planeElemSize(p))
	reqs, buf := a.wReqs, a.PlaneBuffer(p)
	for k := 0; k < len(ws); {
		w := &ws[k]
		start := uint64(w.off) * es
		end := start + a.spanBytes(w)
		next := uint64(w.off+w.size) * es
		j := k + 1
		for ; j < len(ws); j++ {
			t := &ws[j]
			at := uint64(t.off) * es
			e := at + a.spanBytes(t)
			if at != next || e-start > maxRun {
				break
			}
			end, next = e, uint64(t.off+t.size)*es
		}
		a.wRun = ws[k:j]
		n := end - start
		var err error
		switch {
		case up != nil && n <= maxRun:
			err = up.UploadFunc(buf, start, n, a.gather)
			a.stats.Uploads++
		case j == k+1 && (p > 0 || reqs[w.req].Fill == nil):
			err = a.writeAlone(up, p, planeData(&reqs[w.req], p), w, start)
		default:
			err = a.writeGathered(up, p, start, n)
		}
		if err != nil {
			return err
		}
		k = j
	}
	return nil
}

// spanBytes returns the bytes a write of w into plane a.wPlane covers:
// its elements, and in the first plane with guards its margin (its whole
// span, bin rounding included).
func (a *Arena) spanBytes(w *written) uint64 {
	if a.wPlane > 0 {
		return uint64(w.elems) * uint64(a.opts.Planes[a.wPlane-1])
	}
	return a.carried(w.elems, w.size)
}

// planeData returns r's bytes for plane p: Data for the first.
func planeData(r *Request, p int) []byte {
	if p == 0 {
		return r.Data
	}
	if p <= len(r.Planes) {
		return r.Planes[p-1]
	}
	return nil
}

// gatherShare is the least one part of a split gather takes: a run of
// twice that or more is split into up to Options.Workers parts. A part
// must copy for longer than an idle goroutine takes to wake.
const gatherShare = 512 << 10

// gatherRun writes the bytes of the run a.wRun into dst, which starts at
// the run's first allocation and ends where the run ends (see Place). A
// large run without a Fill is split at allocation bounds into parts of
// about equal bytes, gathered at once (internal/workers); they write
// disjoint bytes of dst and only read the batch.
func (a *Arena) gatherRun(dst []byte) {
	run := a.wRun
	k := min(a.opts.Workers, len(dst)/gatherShare)
	if k < 2 || a.wPlane == 0 && slices.ContainsFunc(run, func(w written) bool { return a.wReqs[w.req].Fill != nil }) {
		a.gatherPart(dst, run)
		return
	}
	sp := &a.split
	sp.a, sp.dst, sp.run, sp.n = a, dst, run, 0
	sp.es = uint64(a.opts.planeElemSize(a.wPlane))
	from := 0 // the part's first allocation
	for i := 1; i <= k && from < len(run); i++ {
		to := len(run)
		if i < k {
			cut := uint64(len(dst)) * uint64(i) / uint64(k)
			to = from + sort.Search(len(run)-from, func(j int) bool { return sp.at(from+j) >= cut })
			if to == from {
				continue // one allocation spans the cut: the next part takes it
			}
		}
		sp.parts[sp.n] = [2]int{from, to}
		sp.n++
		from = to
	}
	workers.Run(sp.n, sp)
	sp.dst, sp.run = nil, nil
}

// splitGather is a run's gather in parts: part i is the allocations
// run[parts[i][0]:parts[i][1]] and their bytes of dst.
type splitGather struct {
	a     *Arena
	dst   []byte
	run   []written
	es    uint64 // the plane's element size
	parts [workers.MaxWorkers][2]int
	n     int
}

// at returns the byte of dst where run[i] starts; len(dst) for i past
// the run's end.
func (s *splitGather) at(i int) uint64 {
	if i == len(s.run) {
		return uint64(len(s.dst))
	}
	return uint64(s.run[i].off-s.run[0].off) * s.es
}

// Do gathers part i.
func (s *splitGather) Do(i int) {
	from, to := s.parts[i][0], s.parts[i][1]
	s.a.gatherPart(s.dst[s.at(from):s.at(to)], s.run[from:to])
}

// gatherPart writes the bytes of run, allocations end to end in plane
// a.wPlane, into dst, which starts at run's first allocation and ends at
// the last one's end or at the run's.
func (a *Arena) gatherPart(dst []byte, run []written) {
	p := a.wPlane
	es := uint64(a.opts.planeElemSize(p))
	pad := byte(0)
	if a.opts.GuardBytes > 0 && p == 0 {
		pad = 0xFD // GuardPattern's every byte
	}
	reqs := a.wReqs
	base := uint64(run[0].off) * es
	for i := range run {
		w := &run[i]
		r := &reqs[w.req]
		at := uint64(w.off)*es - base
		n := uint64(w.elems) * es
		if r.Fill != nil && p == 0 {
			r.Fill(dst[at : at+n])
		} else if c := uint64(copy(dst[at:at+n], planeData(r, p))); c < n {
			clear(dst[at+c : at+n])
		}
		// The slack to the next allocation, or to the span's end.
		end := min(uint64(w.off+w.size)*es-base, uint64(len(dst)))
		if gap := dst[at+n : end]; len(gap) > 0 {
			if pad == 0 {
				clear(gap)
			} else {
				for i := range gap {
					gap[i] = pad
				}
			}
		}
	}
}

// writeGathered gathers the run a.wRun, n bytes, into scratch and writes
// it at byte start of plane p. The scratch goes back even if a Fill
// panics.
func (a *Arena) writeGathered(up Uploader, p int, start, n uint64) error {
	b := takeScratch(n)
	defer giveScratch(b)
	a.gatherRun(b)
	return a.put(up, p, start, b)
}

// writeAlone writes a run of one request into plane p from data, its
// bytes for that plane, without a copy: its whole words, then the rest of
// its span (the last bytes, zeros, margin).
func (a *Arena) writeAlone(up Uploader, p int, data []byte, s *written, start uint64) error {
	w := uint64(len(data)) &^ 3
	if w > 0 {
		if err := a.put(up, p, start, data[:w]); err != nil {
			return err
		}
	}
	n := a.spanBytes(s) - w
	if n == 0 {
		return nil
	}
	tail := takeScratch(n)
	defer giveScratch(tail)
	c := uint64(copy(tail, data[w:]))
	elems := uint64(s.elems)*uint64(a.opts.planeElemSize(p)) - w
	clear(tail[c:elems])
	for i := elems; i < n; i++ {
		tail[i] = 0xFD // the margin: GuardPattern's every byte
	}
	return a.put(up, p, start+w, tail)
}

// put writes b at byte off of the buffer, through up or the queue.
func (a *Arena) put(up Uploader, plane int, off uint64, b []byte) error {
	a.stats.Uploads++
	if up != nil {
		return up.Upload(a.PlaneBuffer(plane), off, b)
	}
	return a.dev.WriteBuffer(a.PlaneBuffer(plane), off, b)
}

// Rewrite writes data into h's elements where they are, from their first
// byte, and zeros after it to the end of its elements, as Place writes a
// Request's Data: through up, or as queue writes when up is nil. len(data)
// is at most h's bytes (ErrInvalidSize); h's margin is left as it is.
// O(len(data)).
func (a *Arena) Rewrite(h Handle, data []byte, up Uploader) error {
	return a.RewritePlane(h, 0, data, up)
}

// RewritePlane is Rewrite for plane p's bytes of h (0 is the first
// buffer's; see Options.Planes). ErrInvalidSize for a plane out of range.
func (a *Arena) RewritePlane(h Handle, p int, data []byte, up Uploader) error {
	s, err := a.slot(h)
	if err != nil {
		return err
	}
	if p < 0 || p >= a.Planes() {
		return fmt.Errorf("%w: plane %d of %d", ErrInvalidSize, p, a.Planes())
	}
	es := uint64(a.opts.planeElemSize(p))
	if uint64(len(data)) > uint64(s.elems)*es {
		return fmt.Errorf("%w: %d bytes into %d elements of %d bytes", ErrInvalidSize, len(data), s.elems, es)
	}
	start := uint64(s.alloc.Offset) * es
	w := uint64(len(data)) &^ 3
	if w > 0 {
		if err := a.put(up, p, start, data[:w]); err != nil {
			return fmt.Errorf("arena %q: rewrite: %w", a.opts.Label, err)
		}
	}
	if n := uint64(s.elems)*es - w; n > 0 {
		tail := takeScratch(n)
		defer giveScratch(tail)
		clear(tail[copy(tail, data[w:]):])
		if err := a.put(up, p, start+w, tail); err != nil {
			return fmt.Errorf("arena %q: rewrite: %w", a.opts.Label, err)
		}
	}
	return nil
}

// Holds reports whether an arena of o can hold a request of elems
// elements at all: the request, its margin (GuardBytes) and its bin
// rounding within MaxElems, which must be set (Holds is false when it is
// 0). Place refuses, and PlaceSome leaves, a request that fails it. O(1).
func (o Options) Holds(elems uint32) bool {
	if o.MaxElems == 0 || elems == 0 {
		return false
	}
	size := uint64(elems) + uint64(o.MarginElems())
	if size > uint64(o.MaxElems) {
		return false
	}
	need, ok := offset.RoundUp(uint32(size))
	return ok && need <= o.MaxElems
}

// NewFor creates an arena as New does, whose first buffer is large
// enough that PlaceSome(reqs) places, without growing, every request it
// would take in an empty arena at its largest: first fit, in order, while
// their rounded sum stays within MaxElems. Its capacity is at least
// opts.InitialElems (or its default), at most MaxElems. It places
// nothing. Errors are New's. O(len(reqs)).
func NewFor(dev device.Device, opts Options, reqs []Request) (*Arena, error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: nil device", ErrInvalidOptions)
	}
	o, err := opts.resolve(dev.Limits())
	if err != nil {
		return nil, err
	}
	guard := o.MarginElems()
	var sum uint64
	n := 0
	for _, r := range reqs {
		if n >= int(o.MaxAllocs)-1 {
			break
		}
		size, err := o.size(guard, r.Elems)
		if err != nil {
			continue
		}
		need, ok := offset.RoundUp(size)
		if !ok {
			continue
		}
		total := sum + uint64(need)
		if t, ok := offset.RoundUp(uint32(min(total, offset.MaxRoundUp+1))); ok && t <= o.MaxElems {
			sum = total
			n++
		}
	}
	opts.InitialElems = uint32(max(uint64(o.InitialElems), min(sum, uint64(o.MaxElems))))
	return New(dev, opts)
}

// runScratch is the scratch that queue writes gather runs into, shared by
// every arena: a frame's writes into many slabs reuse one buffer, warm in
// the cache, instead of one per arena. It is kept for the process's life
// once made (at most maxRunBytes), where a sync.Pool's would go at a
// garbage collection and cost the next frame a new one, page faults
// included. One caller holds it at a time; another, on another goroutine,
// or one asking for more than maxRunBytes, gets a scratch of its own.
var runScratch struct {
	mu   sync.Mutex
	b    []byte
	held bool
}

// takeScratch returns a scratch of n bytes, its contents unspecified;
// hand it back with giveScratch. It allocates only to grow the shared
// scratch, or for a caller the shared one cannot serve.
func takeScratch(n uint64) []byte {
	s := &runScratch
	s.mu.Lock()
	if s.held || n == 0 || n > maxRunBytes {
		s.mu.Unlock()
		return make([]byte, n)
	}
	s.held = true
	b := s.b
	s.mu.Unlock()
	if uint64(cap(b)) < n {
		// Grown outside the lock: only the holder writes s.b.
		b = make([]byte, n, max(n, min(2*n, maxRunBytes)))
		s.mu.Lock()
		s.b = b
		s.mu.Unlock()
	}
	return b[:n]
}

// giveScratch hands back a scratch from takeScratch.
func giveScratch(b []byte) {
	s := &runScratch
	s.mu.Lock()
	if s.held && cap(b) > 0 && unsafe.SliceData(b) == unsafe.SliceData(s.b) {
		s.held = false
	}
	s.mu.Unlock()
}
