//go:build cgo || js

package webgpu

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// Running a plan (see plan.go). The compute path turns each step of each
// pass (the gather, then every level) into dispatches of the copy kernels
// (kernels.go) over a table of chunks of at most chunkBytes; the copy path
// turns each pass into copyBufferToBuffer calls through the scratch
// buffer. The batch's table is encoded straight into a mapped staging
// buffer the device recycles (tablestage.go) and copied into the device's
// table buffer ahead of the batch's dispatches (a queue write in the
// browser); each dispatch binds its segment at a dynamic offset. A table
// larger than the largest table buffer holds (past 8 M entries at
// WebGPU's default limits) is cut into runs of dispatches, in order, a
// compute pass and an upload each (see moveCompute): the run boundaries
// fall between dispatches, which run in order anyway, so the plan's
// passes and levels, and the batch's result, stay as they are.
//
// A storage binding sees at most maxStorageBufferBindingSize bytes of a
// buffer (128 MiB by default). A larger buffer is bound through windows of
// 2H bytes starting at multiples of H (H about half the binding limit): a
// chunk, far shorter than H, that starts in [kH, (k+1)H) lies inside window
// k. Chunks are grouped by kernel and by the windows of their source and
// destination; each group is one dispatch.

// Move applies moves to buf as if one by one, in order.
func (d *Device) Move(db device.Buffer, moves []device.Move) error {
	return d.move(db, moves, d.MovePath())
}

// MoveVia is Move through the given path: MoveCopy or MoveCompute (MoveAuto
// is the device's own choice). Benchmarks use it to compare the two.
func (d *Device) MoveVia(path MovePath, db device.Buffer, moves []device.Move) error {
	if path == MoveAuto {
		path = d.MovePath()
	}
	return d.move(db, moves, path)
}

func (d *Device) move(db device.Buffer, moves []device.Move, path MovePath) error {
	b, err := d.buffer(db, "move", device.CopySrc|device.CopyDst)
	if err != nil {
		return err
	}
	if !movesInBounds(b.desc.Size, moves) {
		if err := device.CheckMoves(b.desc.Size, moves); err != nil {
			return fmt.Errorf("webgpu: move in buffer %q: %w", b.desc.Label, err)
		}
	}
	if path == MoveCompute && !computeMoves {
		return fmt.Errorf("webgpu: move in buffer %q: MoveCompute: the move kernels bind a buffer twice as writable storage, which this platform refuses: %w", b.desc.Label, device.ErrInvalidUsage)
	}
	p := &d.planner
	p.plan(moves, d.scratchCap(), path == MoveCopy)
	if len(p.moves) == 0 {
		return nil
	}
	if err := d.ensureScratch(p); err != nil {
		return err
	}
	if path == MoveCopy {
		return d.moveCopies(b, p)
	}
	k, err := d.kernelsOrErr(moveKernels)
	if err != nil {
		if d.opts.Moves == MoveCompute || d.lost {
			return err
		}
		// No compute on this adapter: copies from now on.
		d.noCompute = true
		p.plan(moves, d.scratchCap(), true)
		if err := d.ensureScratch(p); err != nil {
			return err
		}
		return d.moveCopies(b, p)
	}
	return d.moveCompute(k, b, p)
}

// movesInBounds reports whether every move of the batch passes
// device.CheckMoves for a buffer of size bytes: aligned, and inside. One
// loop without calls; false sends the batch to CheckMoves, which names
// the first move at fault (and is the rule: a batch it accepts is moved).
func movesInBounds(size uint64, moves []device.Move) bool {
	var bits uint64
	ok := true
	for _, m := range moves {
		bits |= m.Src | m.Dst | m.Size
		ok = ok && m.Size <= size && m.Src <= size-m.Size && m.Dst <= size-m.Size
	}
	return ok && bits%device.CopyAlignment == 0
}

// scratchCap is the most bytes one pass gathers: what one storage binding
// sees, at most 256 MiB, a multiple of 256.
func (d *Device) scratchCap() uint64 {
	c := min(d.limits.MaxStorageBufferBindingSize, d.limits.MaxBufferSize, 256<<20)
	return c &^ 255
}

// ensureScratch makes the scratch buffer large enough for the plan.
func (d *Device) ensureScratch(p *planner) error {
	need := uint64(0)
	for i := range p.numPasses() {
		moves, direct, _, _ := p.pass(i)
		n := uint64(0)
		for j, m := range moves {
			if !direct[j] {
				n += gatherCost(m.Size)
			}
		}
		need = max(need, n)
	}
	if need <= d.scratchSize {
		return nil
	}
	size := min(alignUp(max(need, 2*d.scratchSize, 1<<20), 256), d.scratchCap())
	var s *wgpu.Buffer
	oom, err := d.withOOMScope(func() (err error) {
		s, err = d.dev.TryCreateBuffer(&wgpu.BufferDescriptor{
			Label: "gpumem scratch",
			Size:  size,
			Usage: wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst,
		})
		return err
	})
	if err != nil {
		return d.fail("create scratch buffer", err)
	}
	if oom {
		s.Destroy()
		s.Release()
		return fmt.Errorf("webgpu: create scratch buffer of %d bytes: %w", size, device.ErrOutOfMemory)
	}
	if d.scratch != nil {
		d.retire(d.scratch)
	}
	d.scratch, d.scratchSize = s, size
	if d.kernels != nil {
		d.kernels.table.dropBindGroups() // they bind the old scratch
	}
	return nil
}

func alignUp(v, a uint64) uint64 { return (v + a - 1) / a * a }

// scratchOffset returns where, at or after off, to put a gathered move's
// bytes in scratch: at the same offset modulo 16 as its source, so the
// gather runs on vec4s when the source is 16-byte aligned.
func scratchOffset(off uint64, m device.Move) uint64 {
	return alignUp(off, 16) + m.Src%16
}

// moveCopies runs the plan as copies through scratch.
func (d *Device) moveCopies(b *Buffer, p *planner) error {
	enc, err := d.encoder()
	if err != nil {
		return err
	}
	d.encUsed = true
	for i := range p.numPasses() {
		moves, _, _, _ := p.pass(i)
		off := uint64(0)
		for _, m := range moves {
			if err := enc.TryCopyBufferToBuffer(b.buf, m.Src, d.scratch, off, m.Size); err != nil {
				return d.fail("move: copy to scratch", err)
			}
			off += alignUp(m.Size, 16)
		}
		off = 0
		for _, m := range moves {
			if err := enc.TryCopyBufferToBuffer(d.scratch, off, b.buf, m.Dst, m.Size); err != nil {
				return d.fail("move: copy from scratch", err)
			}
			off += alignUp(m.Size, 16)
		}
	}
	return nil
}

// binding says what a dispatch binds as source or destination.
type binding struct {
	scratch bool   // the scratch buffer, whole; else the moved buffer
	window  uint64 // index of the buffer's window
}

// windowStep returns H, the window step for moves in a buffer of size
// bytes (0: the buffer fits one binding and is bound whole): the largest
// multiple of the storage offset alignment align at most half of
// maxBinding, so that a window of 2H bytes fits a binding. Where
// maxBinding is a power of two (WebGPU's default, 128 MiB, and 2 GiB on
// some Vulkan drivers) so is H, and a window's index is a shift; other
// limits (2 GiB - 1 on others) keep the largest step, with a division
// per run of chunks, rather than halve it and double the windows.
func windowStep(size, maxBinding, align uint64) uint64 {
	if size <= maxBinding {
		return 0
	}
	return max((maxBinding/2)/align*align, align)
}

// Copy kernels a chunk can run on.
const (
	kernelWord  = iota // copyWordWGSL: any alignment, word units
	kernelVec4         // copyVec4WGSL: source and destination 16-byte aligned
	kernelShift        // copyShiftWGSL: destination 16-byte aligned, source word aligned
)

// group is the table entries of one dispatch.
type group struct {
	kernel   int
	src, dst binding
	entries  []uint32 // 4 words an entry: src, dst, count, 0
}

// tableBuilder collects the chunks of one phase into groups. Its first n
// groups are in use; those past them keep their entries' memory for the
// next batch.
type tableBuilder struct {
	half  uint64 // H, the window step in bytes; 0: one window, the whole buffer
	shift uint   // log2(H) when H is a power of two, else 0
	// maxEntries is the most entries of a group: its segment must fit
	// one storage binding.
	maxEntries int
	// chunk is the most bytes of an entry: chunkBytes, or moveTables.chunk.
	chunk  uint64
	groups []group
	n      int
}

// used returns the groups in use.
func (t *tableBuilder) used() []group { return t.groups[:t.n] }

// moveTables is moveCompute's working memory, kept by the device between
// batches, so that recording one allocates nothing once a batch as large
// has been recorded.
type moveTables struct {
	// chunk, when not 0, replaces chunkBytes (a multiple of 16): for
	// benchmarks that compare entry sizes on one GPU.
	chunk  uint64
	phases []tableBuilder
	words  []uint32 // the table, as words
	bytes  []byte   // the table, on a big-endian host
	// runViews and runEnds are cutRuns' result: a batch whose table is
	// more than one upload takes, in runs.
	runViews []tableBuilder
	runEnds  []int
}

// hostLittleEndian reports whether the host stores a uint32 least
// significant byte first, as WebGPU buffers hold it: then the table's words
// are its bytes as they are, and encode copies whole groups.
var hostLittleEndian = binary.NativeEndian.Uint32([]byte{1, 0, 0, 0}) == 1

// build turns the plan into the compute path's table: one table for the
// batch, a segment a group, each starting at a multiple of segAlign bytes
// with a header entry (its number of entries), in the order the groups
// dispatch: each pass's gather phase, then its levels in order. It returns
// the phases, their groups in that order, and the table (valid until the
// next call).
func (mt *moveTables) build(p *planner, half, segAlign uint64, maxEntries int) ([]tableBuilder, []byte) {
	phases := mt.buildGroups(p, half, maxEntries)
	return phases, mt.encode(phases, segAlign, hostLittleEndian)
}

// buildGroups turns the plan into the groups of the compute path's dispatches,
// by phase: each pass's gather phase, then its levels in order.
func (mt *moveTables) buildGroups(p *planner, half uint64, maxEntries int) []tableBuilder {
	n := 0
	for i := range p.numPasses() {
		_, _, _, levels := p.pass(i)
		n += 1 + levels
	}
	phases := mt.reset(n, half, maxEntries)
	base := 0
	for i := range p.numPasses() {
		moves, direct, level, levels := p.pass(i)
		gather := &phases[base]
		off := uint64(0)
		for j, m := range moves {
			scatter := &phases[base+1+int(level[j])]
			if direct[j] {
				scatter.add(false, m.Src, false, m.Dst, m.Size)
				continue
			}
			so := scratchOffset(off, m)
			gather.add(false, m.Src, true, so, m.Size)
			scatter.add(true, so, false, m.Dst, m.Size)
			off = so + m.Size
		}
		base += 1 + levels
	}
	return phases
}

// reset returns n empty builders with window step half and groups of at
// most maxEntries entries.
func (mt *moveTables) reset(n int, half uint64, maxEntries int) []tableBuilder {
	for len(mt.phases) < n {
		mt.phases = append(mt.phases, tableBuilder{})
	}
	shift := uint(0)
	if half > 1 && half&(half-1) == 0 {
		shift = uint(bits.TrailingZeros64(half))
	}
	ts := mt.phases[:n]
	for i := range ts {
		ts[i].half, ts[i].shift, ts[i].maxEntries, ts[i].n = half, shift, maxEntries, 0
		ts[i].chunk = chunkBytes
		if mt.chunk != 0 {
			ts[i].chunk = mt.chunk
		}
	}
	return ts
}

// tableBytes is the size of the table of phases with segments starting at
// multiples of segAlign bytes (a multiple of 16).
func tableBytes(phases []tableBuilder, segAlign uint64) uint64 {
	total := uint64(0)
	for _, t := range phases {
		for _, g := range t.used() {
			total = alignUp(total+segmentBytes(len(g.entries)), segAlign)
		}
	}
	return total
}

// encode lays the groups of phases out as one table, in order, each
// group's segment starting at a multiple of segAlign bytes (a multiple of
// 16): a header entry whose first word is the number of entries, then the
// entries. It returns the table's bytes, which stay valid until the next
// call.
func (mt *moveTables) encode(phases []tableBuilder, segAlign uint64, littleEndian bool) []byte {
	total := tableBytes(phases, segAlign) / 4 // words
	if uint64(cap(mt.words)) < total {
		mt.words = make([]uint32, total)
	}
	words := mt.words[:total]
	encodeWords(words, phases, segAlign)
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), 4*len(words))
	}
	if uint64(cap(mt.bytes)) < 4*total {
		mt.bytes = make([]byte, 4*total)
	}
	b := mt.bytes[:4*total]
	for i, w := range words {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	return b
}

// encodeInto writes the table of phases (as encode lays it out) into dst,
// tableBytes(phases, segAlign) bytes, writing every byte of dst once and
// reading none: dst may be a mapping, where reads are slow (write-combined
// memory). On a little-endian host with dst 4-byte aligned the words go
// straight into dst; otherwise through encode.
func (mt *moveTables) encodeInto(dst []byte, phases []tableBuilder, segAlign uint64) {
	if hostLittleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(dst)))%4 == 0 {
		encodeWords(unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)/4), phases, segAlign)
		return
	}
	copy(dst, mt.encode(phases, segAlign, hostLittleEndian))
}

// encodeWords writes the table of phases into words, which holds exactly
// its tableBytes/4 words, writing each word once.
func encodeWords(words []uint32, phases []tableBuilder, segAlign uint64) {
	off := uint64(0)
	for _, t := range phases {
		for _, g := range t.used() {
			words[off], words[off+1], words[off+2], words[off+3] = uint32(len(g.entries)/4), 0, 0, 0
			end := off + 4 + uint64(copy(words[off+4:], g.entries))
			off = alignUp(off*4+segmentBytes(len(g.entries)), segAlign) / 4
			clear(words[end:off]) // the padding up to the next segment
		}
	}
}

// segmentBytes is the size of g's segment of the table: its header entry
// and its entries.
func segmentBytes(words int) uint64 { return 16 + uint64(words)*4 }

// window returns the index of the window a chunk starting at off lies in,
// and where that window starts.
func (t *tableBuilder) window(off uint64) (uint64, uint64) {
	if t.half == 0 {
		return 0, 0
	}
	if t.shift != 0 {
		k := off >> t.shift
		return k, k << t.shift
	}
	k := off / t.half
	return k, k * t.half
}

// group returns the group for a chunk of kernel from src to dst: the
// newest of those bindings, or a new one when that one is full.
func (t *tableBuilder) group(kernel int, src, dst binding) *group {
	for i := t.n - 1; i >= 0; i-- { // the newest first: chunks come in runs
		g := &t.groups[i]
		if g.kernel == kernel && g.src == src && g.dst == dst {
			if len(g.entries) < 4*t.maxEntries {
				return g
			}
			break
		}
	}
	if t.n == len(t.groups) {
		t.groups = append(t.groups, group{})
	}
	g := &t.groups[t.n]
	t.n++
	g.kernel, g.src, g.dst, g.entries = kernel, src, dst, g.entries[:0]
	return g
}

// add adds a copy of n bytes from src (in scratch if srcScratch) to dst (in
// scratch if dstScratch), in chunks: words up to the first 16-byte aligned
// destination, then vec4s (from a source aligned alike, or from words), then
// the remaining words.
func (t *tableBuilder) add(srcScratch bool, src uint64, dstScratch bool, dst uint64, n uint64) {
	if (src|dst|n)%16 == 0 && (t.half == 0 || t.half >= t.chunk) {
		t.vec4s(srcScratch, src, dstScratch, dst, n)
		return
	}
	head := min((16-dst%16)%16, n)
	body := (n - head) &^ 15
	kernel := kernelShift
	if src%16 == dst%16 {
		kernel = kernelVec4
	}
	t.chunks(kernelWord, srcScratch, src, dstScratch, dst, head)
	t.chunks(kernel, srcScratch, src+head, dstScratch, dst+head, body)
	t.chunks(kernelWord, srcScratch, src+head+body, dstScratch, dst+head+body, n-head-body)
}

// vec4s is add's fast path, for a copy whose source, destination and size
// are multiples of 16, with windows (if any) no shorter than a chunk:
// vec4 chunks only, each in the group of the windows it starts in (a chunk
// no longer than H that starts in [kH, (k+1)H) lies inside window k).
func (t *tableBuilder) vec4s(srcScratch bool, src uint64, dstScratch bool, dst uint64, n uint64) {
	sb, db := binding{scratch: srcScratch}, binding{scratch: dstScratch}
	var sBase, dBase uint64
	sEnd, dEnd := ^uint64(0), ^uint64(0) // where the next window starts
	if t.half > 0 {
		if !srcScratch {
			sb.window, sBase = t.window(src)
			sEnd = sBase + t.half
		}
		if !dstScratch {
			db.window, dBase = t.window(dst)
			dEnd = dBase + t.half
		}
	}
	g := t.group(kernelVec4, sb, db)
	for n > 0 {
		if src >= sEnd || dst >= dEnd || len(g.entries) >= 4*t.maxEntries {
			for src >= sEnd {
				sb.window, sBase, sEnd = sb.window+1, sEnd, sEnd+t.half
			}
			for dst >= dEnd {
				db.window, dBase, dEnd = db.window+1, dEnd, dEnd+t.half
			}
			g = t.group(kernelVec4, sb, db)
		}
		c := min(n, t.chunk)
		g.entries = append(g.entries, uint32((src-sBase)>>4), uint32((dst-dBase)>>4), uint32(c>>4), 0)
		src, dst, n = src+c, dst+c, n-c
	}
}

func (t *tableBuilder) chunks(kernel int, srcScratch bool, src uint64, dstScratch bool, dst uint64, n uint64) {
	srcShift, dstShift := 2, 2 // log2 of the kernel's units: words, vec4s
	switch kernel {
	case kernelVec4:
		srcShift, dstShift = 4, 4
	case kernelShift:
		dstShift = 4
	}
	limit := t.chunk
	if t.half > 0 {
		limit = min(limit, t.half) // a chunk must fit the window it starts in
	}
	if n == 0 {
		return
	}
	var sb, db binding
	var sBase, dBase uint64
	if srcScratch {
		sb.scratch = true
	} else {
		sb.window, sBase = t.window(src)
	}
	if dstScratch {
		db.scratch = true
	} else {
		db.window, dBase = t.window(dst)
	}
	g := t.group(kernel, sb, db)
	for n > 0 {
		c := min(n, limit)
		if len(g.entries) >= 4*t.maxEntries {
			g = t.group(kernel, sb, db)
		}
		g.entries = append(g.entries, uint32((src-sBase)>>srcShift), uint32((dst-dBase)>>dstShift), uint32(c>>dstShift), 0)
		src, dst, n = src+c, dst+c, n-c
		// A chunk is at most H long, so the next starts in the same
		// window or the next one, and changes group only then.
		if t.half > 0 && n > 0 && (!srcScratch && src >= sBase+t.half || !dstScratch && dst >= dBase+t.half) {
			if !srcScratch && src >= sBase+t.half {
				sb.window, sBase = sb.window+1, sBase+t.half
			}
			if !dstScratch && dst >= dBase+t.half {
				db.window, dBase = db.window+1, dBase+t.half
			}
			g = t.group(kernel, sb, db)
		}
	}
}

// moveCompute runs the plan in compute dispatches: the table goes into
// the device's table buffer (uploadTable), and each group is one
// dispatch of its kernel with the bind group of its bindings (made once
// and kept while the buffer, the table buffer and scratch stay the same)
// at its segment's offset. A table larger than one upload takes
// (tableLimits) is cut into runs of groups, in dispatch order, each
// uploaded and dispatched in a compute pass of its own after the
// previous run's: the dispatches keep their order, so the batch keeps
// its result.
func (d *Device) moveCompute(k *kernels, b *Buffer, p *planner) error {
	segAlign := uint64(max(d.limits.StorageOffsetAlignment, 256))
	half := windowStep(b.desc.Size, d.limits.MaxStorageBufferBindingSize, segAlign)
	segMax, runMax := d.tableLimits(segAlign)
	maxEntries := int((segMax - 16) / 16)
	phases := d.tables.buildGroups(p, half, maxEntries)
	enc, err := d.encoder()
	if err != nil {
		return err
	}
	if tableBytes(phases, segAlign) <= runMax {
		return d.dispatchRun(k, enc, b, phases, half, segAlign)
	}
	runs, ends := d.tables.cutRuns(phases, segAlign, runMax)
	from := 0
	for _, end := range ends {
		if err := d.dispatchRun(k, enc, b, runs[from:end], half, segAlign); err != nil {
			return err
		}
		from = end
	}
	return nil
}

// tableLimits returns the most bytes of one group's segment of a move
// table, which one binding of the table buffer sees whole (16 MiB at
// most: a million entries, so a dispatch's second dimension stays far
// below maxWorkgroups), and the most bytes of the tables one upload
// takes: what the largest table buffer holds below its last binding's
// window (see moveTableBuffer), which is at least one segment. Both are
// multiples of segAlign.
func (d *Device) tableLimits(segAlign uint64) (segMax, runMax uint64) {
	c := d.limits.MaxBufferSize &^ (segAlign - 1)
	segMax = min(d.limits.MaxStorageBufferBindingSize, c/2, 16<<20) &^ (segAlign - 1)
	runMax = (c - tableWindow(c, d.limits.MaxStorageBufferBindingSize)) &^ (segAlign - 1)
	return segMax, runMax
}

// tableWindow is the bytes a binding of a table buffer of size bytes
// sees from its dynamic offset: half the buffer, at most a binding.
func tableWindow(size, maxBinding uint64) uint64 { return min(size/2, maxBinding&^255) }

// cutRuns cuts the groups of phases, in dispatch order, into runs whose
// tables take at most limit bytes each (limit holds any one segment). It
// returns views of phases, the runs' one after another (each view a
// phase's groups of one run), and where each run's views end; both are
// valid until the next call.
func (mt *moveTables) cutRuns(phases []tableBuilder, segAlign, limit uint64) ([]tableBuilder, []int) {
	views, ends := mt.runViews[:0], mt.runEnds[:0]
	used := uint64(0) // bytes of the current run's table
	for _, t := range phases {
		gs := t.used()
		from := 0
		for i, g := range gs {
			next := alignUp(used+segmentBytes(len(g.entries)), segAlign)
			if next <= limit || used == 0 {
				used = next
				continue
			}
			if i > from {
				v := t
				v.groups, v.n = gs[from:i], i-from
				views = append(views, v)
			}
			ends = append(ends, len(views))
			from, used = i, alignUp(segmentBytes(len(g.entries)), segAlign)
		}
		if len(gs) > from {
			v := t
			v.groups, v.n = gs[from:], len(gs)-from
			views = append(views, v)
		}
	}
	ends = append(ends, len(views))
	mt.runViews, mt.runEnds = views, ends
	return views, ends
}

// dispatchRun uploads the table of phases and records their groups'
// dispatches in a compute pass of their own on enc, in order.
func (d *Device) dispatchRun(k *kernels, enc *wgpu.CommandEncoder, b *Buffer, phases []tableBuilder, half, segAlign uint64) error {
	base, err := d.uploadTable(k, enc, phases, segAlign)
	if err != nil {
		return err
	}
	d.encUsed = true
	bb := k.table.boundFor(b) // after the upload, which may drop the bind groups
	pass := enc.BeginComputePass(nil)
	off := base // of the group's segment in the table buffer, bytes
	var last *kernel
	for _, t := range phases {
		for _, g := range t.used() {
			kk := &k.copyWord
			switch g.kernel {
			case kernelVec4:
				kk = &k.copyVec4
			case kernelShift:
				kk = &k.copyShift
			}
			bg, err := d.moveBindGroup(k, bb, b, g.src, g.dst, half)
			if err != nil {
				_ = pass.TryEnd()
				pass.Release()
				return err
			}
			if kk != last {
				pass.SetPipeline(kk.pipeline)
				last = kk
			}
			d.dynOffset[0] = uint32(off)
			pass.SetBindGroup(0, bg, d.dynOffset[:])
			n := uint32(len(g.entries) / 4) // one workgroup an entry
			x := min(n, maxWorkgroups)
			pass.DispatchWorkgroups(x, (n+x-1)/x, 1)
			off = alignUp(off+segmentBytes(len(g.entries)), segAlign)
		}
	}
	err = pass.TryEnd()
	pass.Release()
	if err != nil {
		return d.fail("move: end compute pass", err)
	}
	return nil
}

// moveTableBuffer is the storage buffer the move kernels read their tables
// from, and the bind groups made on it. Each batch's table is written at
// the next free offset of the pending encoder's share of the buffer by a
// copy recorded in the encoder ahead of the batch's dispatches (a queue
// write in the browser, which lands before the encoder's commands at its
// submit); with the next encoder the buffer is written from the start
// again (submission order puts those writes after the earlier submit's
// reads), and so is a buffer of the largest size that the encoder's
// tables outgrow (command order puts the copy after the dispatches that
// read what it overwrites). A binding sees size bytes from its dynamic
// offset, and every table starts in the first half: size is half the
// buffer, at most a binding.
//
// The bind groups are kept per moved buffer, for the last maxBoundBuffers
// buffers moved, so that a device whose managers sweep several arenas a
// frame makes none once each has been moved: every one binds buf and the
// current scratch buffer (a change of either drops them all), and the
// three move kernels share their layout, so one serves every kernel of a
// pair of bindings. Those of a released buffer are dropped at the next
// lookup.
type moveTableBuffer struct {
	buf      *wgpu.Buffer
	size     uint64               // bytes a binding sees
	capacity uint64               // bytes of buf
	enc      *wgpu.CommandEncoder // the encoder whose tables fill the buffer
	used     uint64               // bytes of enc's tables
	bound    []boundBuffer        // the moved buffers' bind groups, oldest first
	made     int                  // bind groups made so far (tests count them)
	buffers  int                  // table buffers made so far (tests count them)
}

// maxBoundBuffers is the most moved buffers whose bind groups are kept.
const maxBoundBuffers = 16

// boundBuffer is the bind groups made for moves in one buffer.
type boundBuffer struct {
	b      *Buffer
	groups []cachedBindGroup
}

// cachedBindGroup is the move kernels' bind group for one pair of bindings.
type cachedBindGroup struct {
	src, dst binding
	bg       *wgpu.BindGroup
}

// release releases the table buffer and the bind groups; the GPU must be
// done with them.
func (t *moveTableBuffer) release() {
	t.dropBindGroups()
	if t.buf != nil {
		t.buf.Destroy()
		t.buf.Release()
		t.buf = nil
	}
}

// dropBindGroups releases every cached bind group (wgpu keeps one alive
// while submitted work uses it).
func (t *moveTableBuffer) dropBindGroups() {
	for i := range t.bound {
		t.bound[i].release()
	}
	clear(t.bound)
	t.bound = t.bound[:0]
}

func (bb *boundBuffer) release() {
	for _, c := range bb.groups {
		c.bg.Release()
	}
	clear(bb.groups)
	bb.groups = bb.groups[:0]
}

// boundFor returns the bind groups of b, a new empty set on b's first
// move since the cache last dropped it. It drops the sets of released
// buffers, and the oldest set when maxBoundBuffers are kept.
func (t *moveTableBuffer) boundFor(b *Buffer) *boundBuffer {
	var found *boundBuffer
	n := 0
	for i := range t.bound {
		bb := t.bound[i]
		if bb.b.buf == nil { // released: its bind groups name a dead buffer
			bb.release()
			continue
		}
		t.bound[n] = bb
		if bb.b == b {
			found = &t.bound[n]
		}
		n++
	}
	clear(t.bound[n:])
	t.bound = t.bound[:n]
	if found != nil {
		return found
	}
	if len(t.bound) == maxBoundBuffers {
		t.bound[0].release()
		copy(t.bound, t.bound[1:])
		t.bound = t.bound[:len(t.bound)-1]
	}
	t.bound = append(t.bound, boundBuffer{b: b})
	return &t.bound[len(t.bound)-1]
}

// uploadTable puts the table of phases (segments aligned to segAlign, at
// most tableLimits' runMax bytes) in the table buffer for the pending
// encoder enc and returns its offset, a multiple of segAlign: natively
// encoded into a staging buffer's mapping and copied by a command
// recorded in enc ahead of the batch's compute pass (tablestage.go), in
// the browser by a queue write, which lands before enc's commands at its
// submit. It grows the buffer (the old one is destroyed once the GPU is
// done with it) when the encoder's tables outgrow its first half: to
// twice its size at least, so that a run of batches recorded into one
// encoder (several arenas swept in a frame, devbench's back-to-back
// batches) settles, after a few doublings, on one buffer and one set of
// bind groups, instead of a new buffer for every batch past the first.
// A buffer of the largest size is written from its start again instead:
// natively the copy runs after the dispatches recorded before it, which
// have read what it overwrites.
func (d *Device) uploadTable(k *kernels, enc *wgpu.CommandEncoder, phases []tableBuilder, segAlign uint64) (uint64, error) {
	t := &k.table
	if t.enc != d.enc {
		t.enc, t.used = d.enc, 0
	}
	n := tableBytes(phases, segAlign)
	base := alignUp(t.used, segAlign)
	if t.buf == nil || base+n > t.capacity-t.size {
		largest := d.limits.MaxBufferSize &^ 255
		size := min(alignUp(max(2*n, 2*t.capacity, 64<<10), 256), largest)
		switch {
		case n > size-tableWindow(size, d.limits.MaxStorageBufferBindingSize):
			return 0, fmt.Errorf("webgpu: move: a table of %d bytes, more than a buffer holds (%d): %w", n, d.limits.MaxBufferSize, device.ErrInvalidUsage)
		case d.stagesTables() && t.buf != nil && size == t.capacity && n <= t.capacity-t.size:
			base = 0
		default:
			buf, err := d.dev.TryCreateBuffer(&wgpu.BufferDescriptor{
				Label: "gpumem move tables",
				Size:  size,
				Usage: wgpu.BufferUsageStorage | wgpu.BufferUsageCopyDst,
			})
			if err != nil {
				return 0, d.fail("create move table buffer", err)
			}
			if t.buf != nil {
				d.retire(t.buf)
			}
			t.dropBindGroups()
			t.buf, t.capacity, base = buf, size, 0
			t.buffers++
			t.size = tableWindow(size, d.limits.MaxStorageBufferBindingSize)
		}
	}
	if d.stagesTables() {
		if err := d.stageTable(enc, phases, n, segAlign, t.buf, base); err != nil {
			return 0, err
		}
	} else if err := d.writeQueue(t.buf, base, d.tables.encode(phases, segAlign, hostLittleEndian)); err != nil {
		return 0, d.fail("move: write table", err)
	}
	t.used = base + n
	return base, nil
}

// moveBindGroup returns the move kernels' bind group for a dispatch in bb's
// buffer b reading src and writing dst, made on the first use of that pair
// since the table buffer or scratch last changed, or b's bind groups were
// dropped. half is b's window step (fixed by b's size and the limits).
func (d *Device) moveBindGroup(k *kernels, bb *boundBuffer, b *Buffer, src, dst binding, half uint64) (*wgpu.BindGroup, error) {
	t := &k.table
	for _, c := range bb.groups {
		if c.src == src && c.dst == dst {
			return c.bg, nil
		}
	}
	bg, err := d.dev.TryCreateBindGroup(&wgpu.BindGroupDescriptor{
		Layout: k.moveLayout,
		Entries: []wgpu.BindGroupEntry{
			{Binding: 0, Buffer: t.buf, Size: t.size},
			d.bindingEntry(1, b, src, half),
			d.bindingEntry(2, b, dst, half),
		},
	})
	if err != nil {
		return nil, d.fail("move: bind group", err)
	}
	t.made++
	bb.groups = append(bb.groups, cachedBindGroup{src, dst, bg})
	return bg, nil
}

// bindingEntry binds the scratch buffer, or window w of b.
func (d *Device) bindingEntry(slot uint32, b *Buffer, w binding, half uint64) wgpu.BindGroupEntry {
	if w.scratch {
		return wgpu.BindGroupEntry{Binding: slot, Buffer: d.scratch, Size: wgpu.WholeSize}
	}
	if half == 0 {
		return wgpu.BindGroupEntry{Binding: slot, Buffer: b.buf, Size: wgpu.WholeSize}
	}
	base := w.window * half
	return wgpu.BindGroupEntry{Binding: slot, Buffer: b.buf, Offset: base, Size: min(2*half, b.desc.Size-base)}
}
