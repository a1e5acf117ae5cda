//go:build cgo || js

package multidraw

import (
	"encoding/binary"
	"errors"
	"fmt"

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
)

func (m Mode) String() string {
	switch m {
	case Direct:
		return "direct"
	case Indirect:
		return "indirect"
	case MultiDraw:
		return "multidraw"
	}
	return fmt.Sprintf("Mode(%d)", m)
}

// ErrUnsupported is returned by New for a mode the device cannot draw in
// (see Best).
var ErrUnsupported = errors.New("multidraw: mode not supported by the device")

// ErrNotApplied is returned by Prepare for a draw whose record is not on
// the device yet: a mesh tracked since the table's last Apply.
var ErrNotApplied = errors.New("multidraw: table not applied")

// maxDraws bounds a list: one dispatch of 64-wide workgroups, 65,535 of
// them.
const maxDraws = 64 * 65535

// entryHeader is the bytes before the draws in the entries buffer: the
// draw count, padded to 16.
const entryHeader = 16

// Drawer draws the packed lists of one draw.Table in a render pass. It is
// not safe for concurrent use.
type Drawer struct {
	dev  *webgpu.Device
	t    *draw.Table
	mode Mode
	x    *expander // nil in Direct mode

	// entries and args hold capDraws draws: the uploaded draws and the
	// expanded arguments.
	entries, args device.Buffer
	capDraws      uint32
	bytes         []byte

	list  *draw.List // the list of the last Prepare
	spans []draw.Span
	gone  bool
}

// Best returns the best mode wd can draw in: MultiDraw where the device
// has indirect first instance, Direct otherwise (and always in the
// browser).
func Best(wd *wgpu.Device) Mode { return best(wd) }

// New returns a drawer of t's lists on dev, t's device, in mode. Errors:
// ErrUnsupported for a mode dev's device lacks (Best), and the device's
// for the expansion pipeline.
func New(dev *webgpu.Device, t *draw.Table, mode Mode) (*Drawer, error) {
	if dev == nil || t == nil || mode > MultiDraw {
		return nil, fmt.Errorf("multidraw: new drawer in mode %v: %w", mode, draw.ErrInvalidOptions)
	}
	wd, _ := dev.Raw()
	if mode > best(wd) {
		return nil, fmt.Errorf("multidraw: %v on a device that has %v at best: %w", mode, best(wd), ErrUnsupported)
	}
	d := &Drawer{dev: dev, t: t, mode: mode}
	if mode != Direct {
		x, err := newExpander(wd)
		if err != nil {
			return nil, err
		}
		d.x = x
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
// draw.ErrFull past 4,194,240 draws, and the device's. O(draws).
func (d *Drawer) Prepare(enc *wgpu.CommandEncoder, l *draw.List) ([]draw.Span, error) {
	if d.gone {
		return nil, fmt.Errorf("multidraw: prepare: %w", device.ErrReleased)
	}
	d.list, d.spans = nil, nil
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
		capRecords := uint32(rec.Size() / draw.ArgsBytes)
		n := uint32(len(draws))
		b := binary.LittleEndian.AppendUint32(d.bytes[:0], n)
		b = append(b, make([]byte, entryHeader-4)...)
		for _, dr := range draws {
			if dr.Slot >= capRecords {
				return nil, fmt.Errorf("multidraw: prepare: record %d: %w", dr.Slot, ErrNotApplied)
			}
			b = binary.LittleEndian.AppendUint32(b, dr.Slot)
			b = binary.LittleEndian.AppendUint32(b, dr.Instances)
			b = binary.LittleEndian.AppendUint32(b, dr.Object)
		}
		d.bytes = b
		if err := d.reserve(n); err != nil {
			return nil, err
		}
		if err := d.dev.WriteBuffer(d.entries, 0, b); err != nil {
			return nil, fmt.Errorf("multidraw: upload %d draws: %w", n, err)
		}
		if err := d.x.expand(d.dev, enc, rec, d.entries, d.args, n); err != nil {
			return nil, err
		}
	}
	d.list, d.spans = l, spans
	return spans, nil
}

// reserve makes the entries and args buffers hold n draws.
func (d *Drawer) reserve(n uint32) error {
	if n <= d.capDraws {
		return nil
	}
	c := max(d.capDraws, 1024)
	for c < n {
		c = min(2*c, maxDraws)
	}
	entries, err := d.dev.CreateBuffer(device.BufferDesc{Label: "multidraw draws", Size: entryHeader + 12*uint64(c), Usage: device.Storage | device.CopyDst})
	if err != nil {
		return fmt.Errorf("multidraw: %d draws: %w", c, err)
	}
	args, err := d.dev.CreateBuffer(device.BufferDesc{Label: "multidraw arguments", Size: draw.ArgsBytes * uint64(c), Usage: device.Storage | device.Indirect})
	if err != nil {
		entries.Release()
		return fmt.Errorf("multidraw: %d draws: %w", c, err)
	}
	d.releaseBuffers()
	d.entries, d.args, d.capDraws = entries, args, c
	return nil
}

// Draw records the draws of the last Prepare into pass: per span, the
// group's vertex buffer at slot 0 and its index buffer, then the span's
// draws as the mode issues them. It returns the draw calls it issued.
// The pass's pipeline and bind groups are the caller's. O(spans) in
// MultiDraw mode, O(draws) in the others.
func (d *Drawer) Draw(pass *wgpu.RenderPassEncoder) (calls int, err error) {
	if d.gone {
		return 0, fmt.Errorf("multidraw: draw: %w", device.ErrReleased)
	}
	var argsRaw *wgpu.Buffer
	if d.mode != Direct && len(d.spans) > 0 {
		if argsRaw, err = d.dev.RawBuffer(d.args); err != nil {
			return 0, err
		}
	}
	var vb, ib device.Buffer
	for _, s := range d.spans {
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
		switch d.mode {
		case MultiDraw:
			multiDraw(pass, argsRaw, uint64(s.First)*draw.ArgsBytes, s.Count)
			calls++
		case Indirect:
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

func (d *Drawer) releaseBuffers() {
	if d.entries != nil {
		d.entries.Release()
		d.args.Release()
		d.entries, d.args = nil, nil
	}
}

// Release releases the drawer's buffers (once the device is done with
// them) and pipeline. Idempotent and nil-safe.
func (d *Drawer) Release() {
	if d == nil || d.gone {
		return
	}
	d.gone = true
	d.releaseBuffers()
	d.x.release()
}
