//go:build cgo

package webgpu

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// Running a plan (see plan.go). The compute path turns each phase of each
// pass into dispatches of the copy kernels (kernels.go) over a table of
// chunks of at most chunkBytes; the copy path turns it into
// copyBufferToBuffer calls through the scratch buffer.
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
	if err := device.CheckMoves(b.desc.Size, moves); err != nil {
		return fmt.Errorf("webgpu: move in buffer %q: %w", b.desc.Label, err)
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
		moves, direct := p.pass(i)
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
		d.graveBuffers = append(d.graveBuffers, d.scratch)
	}
	d.scratch, d.scratchSize = s, size
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
		moves, _ := p.pass(i)
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
	half   uint64 // H, the window step in bytes; 0: one window, the whole buffer
	groups []group
	n      int
}

// used returns the groups in use.
func (t *tableBuilder) used() []group { return t.groups[:t.n] }

// moveTables is moveCompute's working memory, kept by the device between
// batches, so that recording one allocates nothing once a batch as large
// has been recorded.
type moveTables struct {
	phases []tableBuilder
	words  []uint32 // the table, as words
	bytes  []byte   // the table, on a big-endian host
}

// hostLittleEndian reports whether the host stores a uint32 least
// significant byte first, as WebGPU buffers hold it: then the table's words
// are its bytes as they are, and encode copies whole groups.
var hostLittleEndian = binary.NativeEndian.Uint32([]byte{1, 0, 0, 0}) == 1

// build turns the plan into the compute path's table: one table buffer for
// the batch, a segment a group, each starting at a multiple of segAlign
// bytes, in the order the groups dispatch: each pass's gather phase, then
// its scatter phase. It returns the phases, their groups in that order,
// and the table.
func (mt *moveTables) build(p *planner, half, segAlign uint64) ([]tableBuilder, []byte) {
	phases := mt.reset(2*p.numPasses(), half)
	for i := range p.numPasses() {
		moves, direct := p.pass(i)
		gather, scatter := &phases[2*i], &phases[2*i+1]
		off := uint64(0)
		for j, m := range moves {
			if direct[j] {
				scatter.add(false, m.Src, false, m.Dst, m.Size)
				continue
			}
			so := scratchOffset(off, m)
			gather.add(false, m.Src, true, so, m.Size)
			scatter.add(true, so, false, m.Dst, m.Size)
			off = so + m.Size
		}
	}
	return phases, mt.encode(phases, segAlign, hostLittleEndian)
}

// reset returns n empty builders with window step half.
func (mt *moveTables) reset(n int, half uint64) []tableBuilder {
	for len(mt.phases) < n {
		mt.phases = append(mt.phases, tableBuilder{})
	}
	ts := mt.phases[:n]
	for i := range ts {
		ts[i].half, ts[i].n = half, 0
	}
	return ts
}

// encode lays the groups of phases out as one table, in order, each
// group's entries starting at a multiple of segAlign bytes (a multiple of
// 4), and returns its bytes, which stay valid until the next call.
func (mt *moveTables) encode(phases []tableBuilder, segAlign uint64, littleEndian bool) []byte {
	total := uint64(0) // words
	for _, t := range phases {
		for _, g := range t.used() {
			total = alignUp(total*4+uint64(len(g.entries))*4, segAlign) / 4
		}
	}
	if uint64(cap(mt.words)) < total {
		mt.words = make([]uint32, total)
	}
	words := mt.words[:total]
	off := uint64(0)
	for _, t := range phases {
		for _, g := range t.used() {
			copy(words[off:], g.entries)
			off = alignUp(off*4+uint64(len(g.entries))*4, segAlign) / 4
		}
	}
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

func (t *tableBuilder) window(off uint64) (uint64, uint64) {
	if t.half == 0 {
		return 0, 0
	}
	k := off / t.half
	return k, k * t.half
}

func (t *tableBuilder) group(kernel int, src, dst binding) *group {
	for i := t.n - 1; i >= 0; i-- { // the newest first: chunks come in runs
		g := &t.groups[i]
		if g.kernel == kernel && g.src == src && g.dst == dst {
			return g
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

func (t *tableBuilder) chunks(kernel int, srcScratch bool, src uint64, dstScratch bool, dst uint64, n uint64) {
	srcShift, dstShift := 2, 2 // log2 of the kernel's units: words, vec4s
	switch kernel {
	case kernelVec4:
		srcShift, dstShift = 4, 4
	case kernelShift:
		dstShift = 4
	}
	limit := uint64(chunkBytes)
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

// moveCompute runs the plan in compute dispatches.
func (d *Device) moveCompute(k *kernels, b *Buffer, p *planner) error {
	half := uint64(0)
	if b.desc.Size > d.limits.MaxStorageBufferBindingSize {
		align := uint64(max(d.limits.StorageOffsetAlignment, 256))
		half = (d.limits.MaxStorageBufferBindingSize / 2) / align * align
	}
	segAlign := uint64(max(d.limits.StorageOffsetAlignment, 16))
	phases, table := d.tables.build(p, half, segAlign)
	tb, pass, err := d.tablePass("move", table)
	if err != nil {
		return err
	}
	off := uint64(0) // of the group's table segment, bytes
	for _, t := range phases {
		for _, g := range t.used() {
			kk := &k.copyWord
			switch g.kernel {
			case kernelVec4:
				kk = &k.copyVec4
			case kernelShift:
				kk = &k.copyShift
			}
			bg, err := d.dev.TryCreateBindGroup(&wgpu.BindGroupDescriptor{
				Layout: kk.layout,
				Entries: []wgpu.BindGroupEntry{
					{Binding: 0, Buffer: tb, Offset: off, Size: uint64(len(g.entries)) * 4},
					d.bindingEntry(1, b, g.src, half),
					d.bindingEntry(2, b, g.dst, half),
				},
			})
			if err != nil {
				_ = pass.TryEnd()
				pass.Release()
				return d.fail("move: bind group", err)
			}
			pass.SetPipeline(kk.pipeline)
			pass.SetBindGroup(0, bg, nil)
			pass.DispatchWorkgroups(uint32(min(len(g.entries)/4, maxWorkgroups)), 1, 1)
			bg.Release()
			off = alignUp(off+uint64(len(g.entries))*4, segAlign)
		}
	}
	err = pass.TryEnd()
	pass.Release()
	if err != nil {
		return d.fail("move: end compute pass", err)
	}
	return nil
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
