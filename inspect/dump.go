package inspect

import (
	"encoding/json"
	"fmt"
	"io"
)

// Version is the dump schema version this package writes and reads.
const Version = 1

// Limits on what a dump may hold, so that a hostile or broken file cannot
// make a reader or a renderer use unbounded memory or time.
const (
	MaxBuffers = 4096    // buffers in one dump
	MaxRegions = 1 << 22 // regions in one dump, all buffers together
)

// Dump is the whole picture at one moment: every buffer, every region,
// and their totals. See the package documentation for its JSON schema.
type Dump struct {
	Version int      `json:"version"`
	Device  string   `json:"device"`
	Label   string   `json:"label,omitempty"`
	Buffers []Buffer `json:"buffers"`
	Totals  Stats    `json:"totals"`
}

// New returns a dump of buffers, with its version set and totals summed.
// It keeps buffers (the slice, not a copy). O(len(buffers)).
func New(device, label string, buffers ...Buffer) Dump {
	if buffers == nil {
		buffers = []Buffer{}
	}
	return Dump{Version: Version, Device: device, Label: label, Buffers: buffers, Totals: Totals(buffers)}
}

// Buffer is one device buffer: its regions tile [0, CapacityBytes) in
// address order.
type Buffer struct {
	Name          string `json:"name"`
	Kind          string `json:"kind"`
	ElemBytes     uint32 `json:"elem_bytes,omitempty"`
	CapacityBytes uint64 `json:"capacity_bytes"`
	// Usage is the device buffer's usage flags in words
	// ("Vertex|CopySrc|CopyDst"; device.Usage's String), when known.
	Usage string `json:"usage,omitempty"`
	// Layers, when set, says the buffer is a texture array of Layers
	// layers of ElemBytes bytes each (CapacityBytes = Layers*ElemBytes):
	// the maps draw it as a grid of layers, not as a bar.
	Layers  uint32   `json:"layers,omitempty"`
	Regions []Region `json:"regions"`
	Stats   Stats    `json:"stats"`
}

// Region is a stretch of a buffer, in bytes: an allocation or a free
// region. Size-Used of an allocation is bin-rounding slack.
type Region struct {
	Offset uint64 `json:"offset"`
	Size   uint64 `json:"size"`
	Used   uint64 `json:"used,omitempty"`
	State  State  `json:"state"`
	Kind   string `json:"kind,omitempty"`
	Name   string `json:"name,omitempty"`
}

// Live reports whether the region is an allocation (used or moving).
func (r Region) Live() bool { return r.State == StateUsed || r.State == StateMoving }

// State is a region's state.
type State string

// The states of a region.
const (
	StateUsed   State = "used"   // a live allocation
	StateMoving State = "moving" // a live allocation whose bytes are being moved
	StateFree   State = "free"   // free space
)

// Stats is a snapshot of one buffer's use, or of many added up. Bytes are
// bytes. See the package documentation for the JSON keys.
type Stats struct {
	Buffers          int     `json:"buffers"`
	CapacityBytes    uint64  `json:"capacity_bytes"`
	ReservedBytes    uint64  `json:"reserved_bytes"`
	OccupiedBytes    uint64  `json:"occupied_bytes"`
	SlackBytes       uint64  `json:"slack_bytes"`
	FreeBytes        uint64  `json:"free_bytes"`
	LargestFreeBytes uint64  `json:"largest_free_bytes"`
	Allocations      int     `json:"allocations"`
	Moving           int     `json:"moving"`
	FreeRegions      int     `json:"free_regions"`
	Fragmentation    float64 `json:"fragmentation"`

	// The dump's frame, from managers that count it: the moves recorded
	// during the frame the dump is of and the bytes they moved. Every
	// allocation moved during the frame is "moving" (Moving counts them);
	// one moved twice counts twice in FrameMoves.
	FrameMoves      uint64 `json:"frame_moves,omitempty"`
	FrameBytesMoved uint64 `json:"frame_bytes_moved,omitempty"`

	// History since the manager started, from managers that count it
	// (History says so: a zero then means none, not unknown).
	History         bool   `json:"history,omitempty"`
	Growths         uint64 `json:"growths,omitempty"`
	Moves           uint64 `json:"moves,omitempty"`
	BytesMoved      uint64 `json:"bytes_moved,omitempty"`
	BytesCopied     uint64 `json:"bytes_copied,omitempty"`
	SweepsCompleted uint64 `json:"sweeps_completed,omitempty"`
	FullCompactions uint64 `json:"full_compactions,omitempty"`
}

// Totals adds up the buffers' stats. Its LargestFreeBytes is the largest
// of the buffers'; its Fragmentation is 1 - (the sum of the buffers'
// largest free regions) / FreeBytes. O(len(buffers)).
func Totals(buffers []Buffer) Stats {
	var t Stats
	var largest uint64
	for i := range buffers {
		s := &buffers[i].Stats
		t.Buffers++
		t.CapacityBytes += s.CapacityBytes
		t.ReservedBytes += s.ReservedBytes
		t.OccupiedBytes += s.OccupiedBytes
		t.SlackBytes += s.SlackBytes
		t.FreeBytes += s.FreeBytes
		t.LargestFreeBytes = max(t.LargestFreeBytes, s.LargestFreeBytes)
		largest += s.LargestFreeBytes
		t.Allocations += s.Allocations
		t.Moving += s.Moving
		t.FreeRegions += s.FreeRegions
		t.FrameMoves += s.FrameMoves
		t.FrameBytesMoved += s.FrameBytesMoved
		t.History = t.History || s.History
		t.Growths += s.Growths
		t.Moves += s.Moves
		t.BytesMoved += s.BytesMoved
		t.BytesCopied += s.BytesCopied
		t.SweepsCompleted += s.SweepsCompleted
		t.FullCompactions += s.FullCompactions
	}
	t.Fragmentation = fragmentation(largest, t.FreeBytes)
	return t
}

func fragmentation(largest, free uint64) float64 {
	if free == 0 || largest >= free {
		return 0
	}
	return 1 - float64(largest)/float64(free)
}

// measure sets the stats b's regions determine, keeping the history
// counters. O(len(b.Regions)).
func (b *Buffer) measure() {
	h := b.Stats
	s := Stats{Buffers: 1, CapacityBytes: b.CapacityBytes,
		FrameMoves: h.FrameMoves, FrameBytesMoved: h.FrameBytesMoved, History: h.History,
		Growths: h.Growths, Moves: h.Moves, BytesMoved: h.BytesMoved, BytesCopied: h.BytesCopied,
		SweepsCompleted: h.SweepsCompleted, FullCompactions: h.FullCompactions}
	for _, r := range b.Regions {
		switch r.State {
		case StateFree:
			s.FreeBytes += r.Size
			s.FreeRegions++
			s.LargestFreeBytes = max(s.LargestFreeBytes, r.Size)
		case StateMoving:
			s.Moving++
			fallthrough
		default:
			s.Allocations++
			s.ReservedBytes += r.Size
			s.OccupiedBytes += r.Used
		}
	}
	s.SlackBytes = s.ReservedBytes - s.OccupiedBytes
	s.Fragmentation = fragmentation(s.LargestFreeBytes, s.FreeBytes)
	b.Stats = s
}

// Check reports whether d is well formed: the version is Version, at most
// MaxBuffers buffers and MaxRegions regions, every buffer's regions tile
// [0, CapacityBytes) in address order with nonzero sizes, states are known
// and an allocation's Used is at most its Size. The error wraps
// ErrVersion or ErrInvalidDump. O(regions).
func (d *Dump) Check() error {
	if d.Version != Version {
		return fmt.Errorf("%w: version %d, this reader knows %d", ErrVersion, d.Version, Version)
	}
	if len(d.Buffers) > MaxBuffers {
		return fmt.Errorf("%w: %d buffers, at most %d", ErrInvalidDump, len(d.Buffers), MaxBuffers)
	}
	n := 0
	for i := range d.Buffers {
		b := &d.Buffers[i]
		if n += len(b.Regions); n > MaxRegions {
			return fmt.Errorf("%w: more than %d regions", ErrInvalidDump, MaxRegions)
		}
		if err := b.check(); err != nil {
			return fmt.Errorf("%w: buffer %d (%q): %v", ErrInvalidDump, i, b.Name, err)
		}
	}
	return nil
}

func (b *Buffer) check() error {
	if b.CapacityBytes == 0 {
		return fmt.Errorf("capacity_bytes is 0")
	}
	if b.Layers != 0 && (b.ElemBytes == 0 || uint64(b.Layers)*uint64(b.ElemBytes) != b.CapacityBytes) {
		return fmt.Errorf("%d layers of %d bytes, capacity %d", b.Layers, b.ElemBytes, b.CapacityBytes)
	}
	var end uint64
	for j, r := range b.Regions {
		switch {
		case r.Offset != end:
			return fmt.Errorf("region %d at offset %d, want %d (regions tile the buffer in order)", j, r.Offset, end)
		case r.Size == 0:
			return fmt.Errorf("region %d has size 0", j)
		case r.Size > b.CapacityBytes-end:
			return fmt.Errorf("region %d ends at %d, past the capacity %d", j, r.Offset+r.Size, b.CapacityBytes)
		case r.State != StateUsed && r.State != StateMoving && r.State != StateFree:
			return fmt.Errorf("region %d: unknown state %q", j, r.State)
		case r.Used > r.Size:
			return fmt.Errorf("region %d uses %d bytes of %d", j, r.Used, r.Size)
		}
		end += r.Size
	}
	if end != b.CapacityBytes {
		return fmt.Errorf("regions end at %d, capacity is %d", end, b.CapacityBytes)
	}
	return nil
}

// WriteJSON writes d as indented JSON. It does not check d.
func (d *Dump) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(d)
}

// ReadJSON reads one dump from r and checks it (see Check). Malformed
// input is an error wrapping ErrInvalidDump or ErrVersion, never a panic.
func ReadJSON(r io.Reader) (Dump, error) {
	var d Dump
	dec := json.NewDecoder(r)
	if err := dec.Decode(&d); err != nil {
		return Dump{}, fmt.Errorf("%w: %v", ErrInvalidDump, err)
	}
	if dec.More() {
		return Dump{}, fmt.Errorf("%w: data after the dump", ErrInvalidDump)
	}
	if err := d.Check(); err != nil {
		return Dump{}, err
	}
	return d, nil
}
