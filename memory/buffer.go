package memory

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/invariant"
)

// A Holder holds device memory and shows it. Every gpumem manager is one.
type Holder interface {
	// Memory returns a snapshot of every buffer the holder holds, in an
	// order that is the same for the same state. It changes nothing.
	Memory() []Buffer
}

// Buffer is one device buffer (or texture array) at one moment: its
// regions tile [0, CapacityBytes) in address order. The JSON keys are
// package inspect's dump schema.
type Buffer struct {
	// Name is the buffer's label, unique among a holder's buffers.
	Name string `json:"name"`
	// Kind is what the buffer is and which manager holds it.
	Kind          Kind   `json:"kind"`
	ElemBytes     uint32 `json:"elem_bytes,omitempty"`
	CapacityBytes uint64 `json:"capacity_bytes"`
	// Usage is a device buffer's usage flags, when known; TextureUsage a
	// texture array's. The JSON has the one that applies in words under
	// "usage" ("Vertex|CopySrc|CopyDst").
	Usage        device.Usage        `json:"-"`
	TextureUsage device.TextureUsage `json:"-"`
	// Layers, when set, says the buffer is a texture array of Layers
	// layers of ElemBytes bytes each (CapacityBytes = Layers*ElemBytes).
	Layers  uint32   `json:"layers,omitempty"`
	Regions []Region `json:"regions"`
	Stats   Stats    `json:"stats"`
}

// Region is a stretch of a buffer, in bytes: an allocation or a free
// region. Size-Used of an allocation is rounding slack.
type Region struct {
	Offset uint64 `json:"offset"`
	Size   uint64 `json:"size"`
	Used   uint64 `json:"used,omitempty"`
	State  State  `json:"state"`
	// Kind is what an allocation's bytes are ("vertex", "index",
	// "meshlet-data", "meshlet-rows", "texture", "ring", "pool", ...);
	// Name is who holds them. Both are empty for a free region.
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
}

// Live reports whether the region is an allocation (used or moving).
func (r Region) Live() bool { return r.State == StateUsed || r.State == StateMoving }

// State is a region's state.
type State string

// The states of a region.
const (
	StateUsed   State = "used"   // a live allocation
	StateMoving State = "moving" // a live allocation moved recently (see inspect's Dump.MarkMoved)
	StateFree   State = "free"   // free space
)

// Stats is a snapshot of one buffer's use, or of many added up. Bytes are
// bytes.
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

	// The snapshot's frame, where counted: the moves recorded during the
	// frame the snapshot is of and the bytes they moved. Every
	// allocation moved during the frame is "moving" (Moving counts them);
	// one moved twice counts twice in FrameMoves.
	FrameMoves      uint64 `json:"frame_moves,omitempty"`
	FrameBytesMoved uint64 `json:"frame_bytes_moved,omitempty"`

	// History since the holder made the buffer, from holders that count
	// it (History says so: a zero then means none, not unknown).
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
	t.Fragmentation = Fragmentation(largest, t.FreeBytes)
	return t
}

// Fragmentation returns 1 - largest/free: the share of free bytes outside
// the largest free region; 0 when nothing is free. O(1).
func Fragmentation(largest, free uint64) float64 {
	if free == 0 || largest >= free {
		return 0
	}
	return 1 - float64(largest)/float64(free)
}

// Measure sets the stats b's regions determine (capacity, reserved,
// occupied, slack, free, largest free, allocations, moving, free
// regions, fragmentation), keeping the frame and history counters.
// O(len(b.Regions)).
func (b *Buffer) Measure() {
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
	s.Fragmentation = Fragmentation(s.LargestFreeBytes, s.FreeBytes)
	b.Stats = s
}

// Check reports whether b is well formed: a nonzero capacity, Layers
// times ElemBytes equal to it for a texture array, regions that tile
// [0, CapacityBytes) in address order with nonzero sizes, known states,
// and no allocation using more than its Size. The error wraps
// ErrInvalidBuffer. O(len(b.Regions)).
func (b *Buffer) Check() error {
	if err := b.check(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidBuffer, err)
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
	switch {
	case b.Kind >= numKinds:
		return fmt.Errorf("unknown kind %v", b.Kind)
	case b.Usage&^device.AllUsage != 0 || b.TextureUsage&^device.AllTextureUsage != 0:
		return fmt.Errorf("unknown usage flags (%v, %v)", b.Usage, b.TextureUsage)
	case b.Layers == 0 && b.TextureUsage != 0:
		return fmt.Errorf("texture usage %v on a buffer that is no texture array", b.TextureUsage)
	case b.Layers != 0 && b.Usage != 0:
		return fmt.Errorf("buffer usage %v on a texture array", b.Usage)
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

// NewBuffer returns a Buffer of capacityBytes bytes from its live regions
// alone, in any order: the gaps between them become free regions. It is
// how a holder that keeps its own records (texture pages, a ring, a pool)
// shows a buffer. A region's State defaults to StateUsed and its Used,
// when 0, to its Size. Errors wrap ErrInvalidRegion: a region that is
// empty, free, passes the capacity or overlaps another.
// O(n log n) for n regions; it does not keep used.
func NewBuffer(name string, kind Kind, capacityBytes uint64, used []Region) (Buffer, error) {
	live := slices.Clone(used)
	slices.SortFunc(live, func(a, b Region) int { return cmp.Compare(a.Offset, b.Offset) })
	b := Buffer{Name: name, Kind: kind, CapacityBytes: capacityBytes, Regions: make([]Region, 0, 2*len(live)+1)}
	var end uint64
	for _, r := range live {
		switch {
		case r.State == "":
			r.State = StateUsed
		case !r.Live():
			return Buffer{}, fmt.Errorf("%w: %s region at %d given as live", ErrInvalidRegion, r.State, r.Offset)
		}
		if r.Used == 0 {
			r.Used = r.Size
		}
		switch {
		case r.Size == 0 || r.Used > r.Size:
			return Buffer{}, fmt.Errorf("%w: region at %d: size %d, used %d", ErrInvalidRegion, r.Offset, r.Size, r.Used)
		case r.Offset < end:
			return Buffer{}, fmt.Errorf("%w: region at %d overlaps the one ending at %d", ErrInvalidRegion, r.Offset, end)
		case r.Offset > capacityBytes || r.Size > capacityBytes-r.Offset:
			return Buffer{}, fmt.Errorf("%w: region [%d, +%d) passes the capacity %d", ErrInvalidRegion, r.Offset, r.Size, capacityBytes)
		}
		if r.Offset > end {
			b.Regions = append(b.Regions, Region{Offset: end, Size: r.Offset - end, State: StateFree})
		}
		b.Regions = append(b.Regions, r)
		end = r.Offset + r.Size
	}
	if capacityBytes > end {
		b.Regions = append(b.Regions, Region{Offset: end, Size: capacityBytes - end, State: StateFree})
	}
	b.Measure()
	return b, nil
}

// Block returns a buffer of capacityBytes bytes whose first used bytes
// are one live region of region's Kind and Name (no region when used is
// 0), with usage: how a holder of whole blocks that it fills from the
// start (a pool's buffers, a ring's frame blocks, a belt's chunks) shows
// one. used above capacityBytes is the holder's bug: Block panics
// (internal/invariant).
func Block(name string, kind Kind, capacityBytes, used uint64, region Region, usage device.Usage) Buffer {
	var regs []Region
	if used > 0 {
		region.Offset, region.Size = 0, used
		regs = []Region{region}
	}
	b, err := NewBuffer(name, kind, capacityBytes, regs)
	if err != nil {
		invariant.Broken("memory", "block %q of %d bytes, %d used: %v", name, capacityBytes, used, err)
	}
	b.Usage = usage
	return b
}

// WithHistory returns b with the history counters of h (growths, moves,
// bytes moved and copied, sweeps completed, full compactions), for a
// holder that counts them, and History set. O(1).
func (b Buffer) WithHistory(h Stats) Buffer {
	s := &b.Stats
	s.History = true
	s.Growths, s.Moves, s.BytesMoved, s.BytesCopied = h.Growths, h.Moves, h.BytesMoved, h.BytesCopied
	s.SweepsCompleted, s.FullCompactions = h.SweepsCompleted, h.FullCompactions
	return b
}
