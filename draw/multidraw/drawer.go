//go:build cgo || js

package multidraw

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/draw"
	"github.com/gpumem/gpumem/mesh"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// Mode is how a Drawer issues its draws; see the package doc.
type Mode uint8

const (
	// Direct issues one DrawIndexed per draw, from the CPU.
	Direct Mode = iota
	// Indirect issues one DrawIndexedIndirect per draw.
	Indirect
	// MultiDraw issues one MultiDrawIndexedIndirect per span.
	MultiDraw
	// MultiDrawCount is MultiDraw, but each span is drawn with
	// MultiDrawIndexedIndirectCount: over its visible draws only in a
	// culled frame, over all of them in the others.
	MultiDrawCount
)

func (m Mode) String() string {
	switch m {
	case Direct:
		return "direct"
	case Indirect:
		return "indirect"
	case MultiDraw:
		return "multidraw"
	case MultiDrawCount:
		return "multidraw-count"
	}
	return fmt.Sprintf("Mode(%d)", m)
}

// maxDraws bounds a list: one dispatch of 64-wide workgroups, 65,535 of
// them.
const maxDraws = 64 * 65535

// The entries buffer a Prepare uploads, in 32-bit words: a header of
// entryHeader bytes (the draw count n, the span count, two zero words),
// then three words a draw (record slot, instance count, object), then the
// first draw of each span, then, in MultiDrawCount mode, the draw count of
// each span, which an unculled frame's counted multi-draws read. The
// kernels in native.go read the rest so.
const entryHeader = 16

// nativeLE is whether memory is little-endian, as the entries are; a
// Draw must then be its entry's 12 bytes (the array's length fails to
// compile otherwise).
var nativeLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

var _ [12]byte = [unsafe.Sizeof(draw.Draw{})]byte{}

// Drawer draws the packed lists of one draw.Table in a render pass. It is
// not safe for concurrent use.
type Drawer struct {
	dev  *webgpu.Device
	t    *draw.Table
	mode Mode
	k    *kernels // nil in Direct mode

	// entries and args hold capDraws draws: the uploaded draws and the
	// expanded arguments; counts holds capSpans visible-draw counts (made
	// by the first culled Prepare in MultiDrawCount mode); frustum holds
	// the normalized planes sentFrustum, which is zero (never normalized)
	// when what it holds is unknown.
	entries, args   device.Buffer
	counts, frustum device.Buffer
	capDraws        uint32
	capSpans        uint32
	sentFrustum     Frustum

	// sent is what entries holds (nil when unknown: a new buffer, a failed
	// write); next is where Prepare encodes the frame's entries. A frame
	// whose entries equal sent skips the upload.
	sent, next []byte
	// from and fromVersion are the list and its Version that sent was
	// encoded from (from nil: none), maxObject the largest object of its
	// draws: a Prepare of the same list at the same version encodes and
	// uploads nothing. The expansion (or culling) pass is recorded every
	// time: it runs only if the caller submits the encoder, which the
	// drawer cannot see.
	from        *draw.List
	fromVersion uint64
	maxObject   uint32
	// n is the number of draws of the last Prepare, whose span counts
	// follow their entries.
	n uint32
	// encodes, held and uploads count what Prepares did, for tests.
	encodes, held, uploads int

	list   *draw.List // the list of the last Prepare
	spans  []draw.Span
	culled bool // the last Prepare culled
	gone   bool
}

// Best returns the best mode wd can draw in: MultiDrawCount where the
// device has indirect first instance and multi-draw indirect count,
// MultiDraw where it has the first only, Direct otherwise (and always in
// the browser).
func Best(wd *wgpu.Device) Mode { return best(wd) }

// New returns a drawer of t's lists on dev, t's device, in mode. Errors:
// ErrUnsupported for a mode dev's device lacks (Best), and the device's
// for the expansion pipeline.
func New(dev *webgpu.Device, t *draw.Table, mode Mode) (*Drawer, error) {
	if dev == nil || t == nil || mode > MultiDrawCount {
		return nil, fmt.Errorf("multidraw: new drawer in mode %v: %w", mode, draw.ErrInvalidOptions)
	}
	wd, _ := dev.Raw()
	if mode > best(wd) {
		return nil, fmt.Errorf("multidraw: %v on a device that has %v at best: %w", mode, best(wd), ErrUnsupported)
	}
	d := &Drawer{dev: dev, t: t, mode: mode}
	if mode != Direct {
		k, err := newKernels(wd)
		if err != nil {
			return nil, err
		}
		d.k = k
	}
	return d, nil
}

// Mode returns the mode the drawer draws in.
func (d *Drawer) Mode() Mode { return d.mode }

// Prepare packs l (draw.List.Pack) and, in the indirect modes, uploads its
// draws and records in enc the compute pass that expands them into
// arguments. It returns the spans Draw will draw. Call it after the
// table's Apply, with enc the encoder of the render pass that Draw records
// into, before that pass begins. Errors: those of Pack, ErrNotApplied,
// draw.ErrFull past 4,194,240 draws, and the device's. O(draws); the
// encoding and the upload are skipped when the packed draws and spans are
// those the entries buffer holds, and the CPU's work is O(spans) for the
// list prepared last at the same draw.List.Version (the compute pass is
// recorded all the same).
func (d *Drawer) Prepare(enc *wgpu.CommandEncoder, l *draw.List) ([]draw.Span, error) {
	return d.prepare(enc, l, nil, nil)
}

// PrepareCulled is Prepare with culling: the compute pass tests each
// draw's object against f, through its sphere in bounds (a Storage buffer
// of dev's holding one Sphere per object index, as Sphere.Append writes
// them), and keeps the draws whose sphere is not wholly outside a plane.
// Draw then draws only those, each span's in no particular order in
// MultiDrawCount mode, in list order (the others with no instances) in
// Indirect and MultiDraw. A draw of several instances is culled by its
// object's sphere alone: it must bound them all. Errors: those of Prepare,
// ErrUnsupported in Direct mode, ErrNoBounds, draw.ErrInvalidOptions for a
// plane without a direction or with a non-finite word, device.ErrInvalidUsage
// for bounds without Storage. O(draws), as Prepare.
func (d *Drawer) PrepareCulled(enc *wgpu.CommandEncoder, l *draw.List, bounds device.Buffer, f Frustum) ([]draw.Span, error) {
	if d.gone {
		return nil, fmt.Errorf("multidraw: prepare: %w", device.ErrReleased)
	}
	if d.mode == Direct {
		return nil, fmt.Errorf("multidraw: cull in %v mode: %w", d.mode, ErrUnsupported)
	}
	if bounds == nil {
		return nil, fmt.Errorf("multidraw: cull without bounds: %w", draw.ErrInvalidOptions)
	}
	if !bounds.Desc().Usage.Has(device.Storage) {
		return nil, fmt.Errorf("multidraw: cull: bounds %q without Storage: %w", bounds.Desc().Label, device.ErrInvalidUsage)
	}
	planes, err := f.normalized()
	if err != nil {
		return nil, err
	}
	return d.prepare(enc, l, bounds, &planes)
}

// prepare is Prepare, culled against planes (normalized) through bounds
// where planes is not nil.
func (d *Drawer) prepare(enc *wgpu.CommandEncoder, l *draw.List, bounds device.Buffer, planes *Frustum) ([]draw.Span, error) {
	if d.gone {
		return nil, fmt.Errorf("multidraw: prepare: %w", device.ErrReleased)
	}
	d.list, d.spans, d.culled = nil, nil, false
	spans, err := l.Pack()
	if err != nil {
		return nil, err
	}
	draws := l.Draws()
	if len(draws) > maxDraws {
		return nil, fmt.Errorf("multidraw: prepare %d draws, at most %d: %w", len(draws), maxDraws, draw.ErrFull)
	}
	if d.mode != Direct && len(draws) > 0 {
		rec := d.t.Buffer()
		if rec == nil {
			return nil, fmt.Errorf("multidraw: prepare: %w", ErrNotApplied)
		}
		n := uint32(len(draws))
		if err := d.reserve(n, uint32(len(spans)), planes != nil); err != nil {
			return nil, err
		}
		v := l.Version()
		if d.sent == nil || d.from != l || d.fromVersion != v {
			d.from = nil
			if counted := d.mode == MultiDrawCount; d.holds(draws, spans, counted) {
				d.held++
			} else {
				if err := d.encode(draws, spans, uint32(rec.Size()/draw.ArgsBytes), counted); err != nil {
					return nil, err
				}
				if err := d.upload(n); err != nil {
					return nil, err
				}
				d.encodes++
			}
			d.from, d.fromVersion = l, v
		}
		if planes != nil {
			if capObjects := uint32(min(bounds.Size()/SphereBytes, math.MaxUint32)); d.maxObject >= capObjects {
				return nil, fmt.Errorf("multidraw: cull: object %d, bounds for %d objects: %w", d.maxObject, capObjects, ErrNoBounds)
			}
			err = d.cull(enc, n, uint32(len(spans)), rec, bounds, planes)
		} else {
			err = d.k.expand(d.dev, enc, n, rec, d.entries, d.args)
		}
		if err != nil {
			return nil, err
		}
		d.n = n
	}
	d.list, d.spans, d.culled = l, spans, planes != nil
	return spans, nil
}

// entriesSize returns the bytes of the entries of n draws in spans spans,
// with the spans' counts where counted.
func entriesSize(n, spans int, counted bool) int {
	size := entryHeader + 12*n + 4*spans
	if counted {
		size += 4 * spans
	}
	return size
}

// drawBytes returns draws as their entries' bytes: the memory of draws
// itself, on a little-endian host only.
func drawBytes(draws []draw.Draw) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(draws))), 12*len(draws))
}

// holds reports whether the entries buffer holds what encode would write
// for draws and spans: draws packed again alike (another list's, or
// after a table change that moved none of them) need no encoding, no
// upload, and no new checks (its slots passed them, and the table's
// records only grow). Its cost is a comparison with what was sent; on a
// big-endian host, where the entries are not the draws' memory, it
// answers false, and upload compares.
func (d *Drawer) holds(draws []draw.Draw, spans []draw.Span, counted bool) bool {
	s, le := d.sent, binary.LittleEndian
	if !nativeLE || len(s) != entriesSize(len(draws), len(spans), counted) ||
		le.Uint32(s[0:]) != uint32(len(draws)) || le.Uint32(s[4:]) != uint32(len(spans)) {
		return false
	}
	e := s[entryHeader:]
	if !bytes.Equal(e[:12*len(draws)], drawBytes(draws)) {
		return false
	}
	e = e[12*len(draws):]
	for i, sp := range spans {
		if le.Uint32(e[4*i:]) != sp.First || counted && le.Uint32(e[4*(len(spans)+i):]) != sp.Count {
			return false
		}
	}
	return true
}

// encode writes the entries of draws and spans, with the spans' counts
// where counted, into d.next, checking every draw's slot against
// capRecords, and keeps their largest object in d.maxObject. O(draws).
func (d *Drawer) encode(draws []draw.Draw, spans []draw.Span, capRecords uint32, counted bool) error {
	size := entriesSize(len(draws), len(spans), counted)
	b := slices.Grow(d.next[:0], size)[:size]
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(len(draws)))
	le.PutUint32(b[4:], uint32(len(spans)))
	le.PutUint64(b[8:], 0)
	e := b[entryHeader:]
	var maxSlot, maxObject uint32
	for _, dr := range draws {
		maxSlot, maxObject = max(maxSlot, dr.Slot), max(maxObject, dr.Object)
	}
	if len(draws) > 0 && maxSlot >= capRecords {
		return fmt.Errorf("multidraw: prepare: record %d: %w", maxSlot, ErrNotApplied)
	}
	d.maxObject = maxObject
	if nativeLE {
		// A Draw is its entry's three words in memory.
		copy(e, drawBytes(draws))
	} else {
		for i, dr := range draws {
			w := e[12*i : 12*i+12 : 12*i+12]
			le.PutUint32(w[0:], dr.Slot)
			le.PutUint32(w[4:], dr.Instances)
			le.PutUint32(w[8:], dr.Object)
		}
	}
	e = e[12*len(draws):]
	for i, s := range spans {
		le.PutUint32(e[4*i:], s.First)
		if counted {
			le.PutUint32(e[4*(len(spans)+i):], s.Count)
		}
	}
	d.next = b
	return nil
}

// upload writes d.next to the entries buffer, and keeps them as sent.
// Prepare calls it only when holds answered false, which on a
// little-endian host means they differ; a big-endian host compares here.
func (d *Drawer) upload(n uint32) error {
	if !nativeLE && d.sent != nil && bytes.Equal(d.next, d.sent) {
		return nil
	}
	d.uploads++
	if err := d.dev.WriteBuffer(d.entries, 0, d.next); err != nil {
		d.sent = nil
		return fmt.Errorf("multidraw: upload %d draws: %w", n, err)
	}
	d.sent, d.next = d.next, d.sent
	return nil
}

// cull writes the frustum where it changed and records the culling pass:
// the compacting kernel after zeroing the counts in MultiDrawCount mode,
// the zero-instance kernel in the others.
func (d *Drawer) cull(enc *wgpu.CommandEncoder, n, nSpans uint32, rec, bounds device.Buffer, planes *Frustum) error {
	if *planes != d.sentFrustum {
		if err := d.dev.WriteBuffer(d.frustum, 0, planes.append(nil)); err != nil {
			d.sentFrustum = Frustum{}
			return fmt.Errorf("multidraw: write frustum: %w", err)
		}
		d.sentFrustum = *planes
	}
	if d.mode != MultiDrawCount {
		return d.k.cull(d.dev, enc, n, rec, d.entries, d.args, bounds, d.frustum)
	}
	if err := clearBuffer(d.dev, enc, d.counts, 4*uint64(nSpans)); err != nil {
		return err
	}
	return d.k.compact(d.dev, enc, n, rec, d.entries, d.args, bounds, d.frustum, d.counts)
}

// reserve makes the entries and args buffers hold n draws and, for a
// culled frame, the frustum and counts buffers exist, counts holding
// nSpans counts. A new entries buffer forgets what was sent.
func (d *Drawer) reserve(n, nSpans uint32, culled bool) error {
	if n > d.capDraws || d.entries == nil {
		c := max(d.capDraws, 1024)
		for c < n {
			c = min(2*c, maxDraws)
		}
		// A span has one draw at least: 20 bytes a draw hold its
		// entry and its span's first and count.
		size := entryHeader + 20*uint64(c)
		entries, err := d.dev.CreateBuffer(device.BufferDesc{Label: "multidraw draws", Size: size, Usage: device.Storage | device.CopyDst | device.Indirect})
		if err != nil {
			return fmt.Errorf("multidraw: %d draws: %w", c, err)
		}
		args, err := d.dev.CreateBuffer(device.BufferDesc{Label: "multidraw arguments", Size: draw.ArgsBytes * uint64(c), Usage: device.Storage | device.Indirect})
		if err != nil {
			entries.Release()
			return fmt.Errorf("multidraw: %d draws: %w", c, err)
		}
		release(d.entries, d.args)
		d.entries, d.args, d.capDraws, d.sent = entries, args, c, nil
	}
	if !culled {
		return nil
	}
	if d.frustum == nil {
		f, err := d.dev.CreateBuffer(device.BufferDesc{Label: "multidraw frustum", Size: FrustumBytes, Usage: device.Uniform | device.CopyDst})
		if err != nil {
			return fmt.Errorf("multidraw: frustum: %w", err)
		}
		d.frustum, d.sentFrustum = f, Frustum{}
	}
	if d.mode == MultiDrawCount && (nSpans > d.capSpans || d.counts == nil) {
		c := max(d.capSpans, 64)
		for c < nSpans {
			c *= 2
		}
		counts, err := d.dev.CreateBuffer(device.BufferDesc{Label: "multidraw counts", Size: 4 * uint64(c), Usage: device.Storage | device.Indirect | device.CopyDst | device.CopySrc})
		if err != nil {
			return fmt.Errorf("multidraw: %d span counts: %w", c, err)
		}
		release(d.counts)
		d.counts, d.capSpans = counts, c
	}
	return nil
}

// Draw records the draws of the last Prepare into pass: per span, the
// group's vertex buffers (Streams, from slot 0) and its index buffer,
// then the span's draws as the mode issues them. It returns the draw
// calls it issued. The pass's pipeline and bind groups are the caller's.
// O(spans) in the multi-draw modes, O(draws) in the others.
func (d *Drawer) Draw(pass *wgpu.RenderPassEncoder) (calls int, err error) {
	if d.gone {
		return 0, fmt.Errorf("multidraw: draw: %w", device.ErrReleased)
	}
	// A counted frame reads span k's count at countsAt+4k: from the
	// culling pass's counts, or from the entries' span counts.
	var argsRaw, countsRaw *wgpu.Buffer
	var countsAt uint64
	count := d.mode == MultiDrawCount
	if d.mode != Direct && len(d.spans) > 0 {
		if argsRaw, err = d.dev.RawBuffer(d.args); err != nil {
			return 0, err
		}
		if count {
			counts := d.counts
			if !d.culled {
				counts = d.entries
				countsAt = entryHeader + 12*uint64(d.n) + 4*uint64(len(d.spans))
			}
			if countsRaw, err = d.dev.RawBuffer(counts); err != nil {
				return 0, err
			}
		}
	}
	var vb, ib device.Buffer
	for k, s := range d.spans {
		if g := s.Group; g.Vertex != vb && g.Vertex != nil {
			for slot, b := range g.Streams() {
				raw, err := d.dev.RawBuffer(b)
				if err != nil {
					return calls, fmt.Errorf("multidraw: vertex buffer: %w", err)
				}
				pass.SetVertexBuffer(uint32(slot), raw, 0, wgpu.WholeSize)
			}
			vb = g.Vertex
		}
		if g := s.Group; g.Index != ib {
			raw, err := d.dev.RawBuffer(g.Index)
			if err != nil {
				return calls, fmt.Errorf("multidraw: index buffer: %w", err)
			}
			format := wgpu.IndexFormatUint16
			if g.Format == mesh.Uint32 {
				format = wgpu.IndexFormatUint32
			}
			pass.SetIndexBuffer(raw, format, 0, wgpu.WholeSize)
			ib = g.Index
		}
		switch {
		case count:
			multiDrawCount(pass, argsRaw, uint64(s.First)*draw.ArgsBytes, countsRaw, countsAt+4*uint64(k), s.Count)
			calls++
		case d.mode >= MultiDraw:
			multiDraw(pass, argsRaw, uint64(s.First)*draw.ArgsBytes, s.Count)
			calls++
		case d.mode == Indirect:
			for i := s.First; i < s.First+s.Count; i++ {
				drawIndirect(pass, argsRaw, uint64(i)*draw.ArgsBytes)
			}
			calls += int(s.Count)
		default:
			for i := s.First; i < s.First+s.Count; i++ {
				a := d.list.Args(int(i))
				pass.DrawIndexed(a.IndexCount, a.InstanceCount, a.FirstIndex, a.BaseVertex, a.FirstInstance)
			}
			calls += int(s.Count)
		}
	}
	return calls, nil
}

// release releases each buffer that is not nil.
func release(bufs ...device.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

// Release releases the drawer's buffers (once the device is done with
// them) and pipelines. Idempotent and nil-safe.
func (d *Drawer) Release() {
	if d == nil || d.gone {
		return
	}
	d.gone = true
	release(d.entries, d.args, d.counts, d.frustum)
	d.entries, d.args, d.counts, d.frustum = nil, nil, nil, nil
	d.k.release()
}
