package arena

import (
	"fmt"
	"math"
	"runtime"
	"slices"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/workers"
	"github.com/gpumem/gpumem/offset"
)

// Options configure an Arena. The zero value of each field means its
// default; New validates the result against the device's limits.
type Options struct {
	// Label names the arena's buffers (for debuggers and dumps).
	Label string
	// ElemSize is the size of one element in bytes: a multiple of 4, so
	// every allocation starts and ends on a 4-byte boundary as device
	// copies need. Default 4. (Group smaller elements into 4-byte slots
	// before asking, as the mesh package does.)
	ElemSize uint32
	// Usage is added to the CopySrc|CopyDst|Storage the arena needs for
	// growth, moves and patches: Vertex, Index, Uniform, ...
	Usage device.Usage
	// InitialElems is the starting capacity in elements. Default 64 Ki
	// elements, or MaxElems if smaller.
	InitialElems uint32
	// MaxElems caps the capacity, in elements. Default, and never more
	// than: the device's MaxBufferSize / ElemSize.
	MaxElems uint32
	// GrowthFactor multiplies the capacity when the arena is short of
	// room. A growth when the room is there in pieces (the sweep will
	// gather it) adds an eighth of that: 1.125 for the default 2. A growth
	// is never smaller than what the refused request needs. Default 2;
	// must be above 1. The factor bounds the peak: capacity stays within
	// about GrowthFactor times the most ever used, whatever shrinking
	// gives back later. For memory held tight, 1.1 kept the project's
	// three packing traces at 1.10x their peak use or less, for 2.3 times
	// the growths of 1.25 (BenchmarkTracePackingShrink).
	GrowthFactor float64
	// RoundToBins rounds every request up with RoundUp, so a freed
	// range is reused whole by the next request of its bin and leaves no
	// splinter, at a cost of up to 12.5% of each request.
	RoundToBins bool
	// Policy is the offset allocator's placement policy. Default
	// offset.Exact.
	Policy offset.Policy
	// MaxAllocs bounds the allocations and free regions the arena tracks
	// at once (its allocator's node limit). Default 65,536; at most
	// MaxAllocsLimit.
	MaxAllocs uint32
	// SweepLimits bounds one Sweep call. Zero fields take
	// DefaultSweepLimits's.
	SweepLimits SweepLimits
	// Fragmented is what a refusal does when the room is there in pieces.
	// Default SweepThenCompact.
	Fragmented Strategy
	// ShrinkBelow, when above 0, lets Sweep give memory back: an arena
	// whose reserved elements stay at or below this fraction of its
	// capacity for ShrinkAfter Sweep calls in a row moves into a smaller
	// buffer (see Shrink and shrink.go's notes). Below 1; 0.5 is a good
	// value. Off (0) by default.
	ShrinkBelow float64
	// ShrinkAfter is how many Sweep calls in a row occupancy must stay low
	// before a shrink. Default DefaultShrinkAfter.
	ShrinkAfter int
	// MinElems is the smallest capacity a shrink moves to. Default
	// InitialElems; at most MaxElems.
	MinElems uint32
	// GrowAhead, when above 0, creates the buffers of the next growth
	// ahead of need: once free elements fall below this fraction of the
	// capacity, off the caller's goroutine on a device that can (see
	// ahead.go). Below 1; 0.25 leaves the creation a quarter of the
	// capacity's worth of allocations to finish in. Off (0) by default:
	// the buffers hold their memory from then on.
	GrowAhead float64
	// GuardBytes, when not zero, gives every allocation a margin of at
	// least that many bytes after its elements, filled with GuardPattern
	// and checked by CheckGuards: a debugging aid that catches writes past
	// an allocation's end. The margins take capacity, and Place writes
	// them with the batch. At most 1 MiB, and a margin
	// below MaxElems. Off by default, and free when off.
	GuardBytes uint32
	// Planes, when not empty, gives the arena a buffer more per entry,
	// each with elements of that many bytes (a multiple of 4), allocated
	// in lockstep with the first: an allocation's elements start at the
	// same element offset in every plane, and growth, moves and shrinks
	// act on every plane alike. Vertex attributes in separate arrays that
	// share one base vertex are planes. At most MaxPlanes-1 entries. Guard
	// margins (GuardBytes) take elements in every plane and hold the
	// pattern in the first only.
	Planes []uint32
	// OnMove, if set, is called for every allocation a sweep or a
	// compaction moves, in the order the moves happen, once the bytes'
	// move is recorded on the device, instead of Changes. It is the hook
	// of the managers built on the arena (see "Two shapes for moves" in
	// the package doc); a consumer reads Changes. It must not call back
	// into the arena.
	OnMove func(Move)
	// Workers bounds the goroutines that gather one write of Place's
	// bytes: a run of allocations written together (see Place) of at
	// least 1 MiB is split, at allocation bounds, into up to Workers
	// parts of at least 512 KiB gathered at once (on goroutines kept for
	// such copies, at most 16, which live as long as the process:
	// internal/workers). One core writes a
	// GPU's mapped staging memory well below the speed of memory, so a
	// frame that streams megabytes gathers them sooner on several
	// (BenchmarkPlaceWorkers). A run holding a request's Fill is gathered
	// on the caller's goroutine alone: a Fill is never called beside
	// another. 0 means min(4, GOMAXPROCS); 1 gathers on the caller's
	// goroutine; above 16 counts as 16; negative is refused.
	Workers int
	// TimeMoves brackets every batch of moves with GPU timestamps, where
	// the device has a Timer (device.TimerOf): Stats.MoveGPUTime and
	// MoveTime report the GPU's time for them (see timing.go). It adds
	// two timestamp writes a batch. Off by default.
	TimeMoves bool
}

// Limits of an arena's sizes and counts, the offset allocator's.
const (
	// MaxPlanes bounds an arena's buffers: the first and Options.Planes.
	// WebGPU binds at most 8 vertex buffers.
	MaxPlanes = 8
	// MaxAllocsLimit is the largest Options.MaxAllocs (2^27-258).
	MaxAllocsLimit = offset.MaxNodes
	// MaxRoundUp is the largest request RoundUp rounds (0xF000_0000): a
	// larger one's bin bound does not fit in 32 bits. An arena never grows
	// for a request above it.
	MaxRoundUp = offset.MaxRoundUp
)

// RoundUp returns elems rounded up to its allocator bin's lower bound: a
// free region at least that long always serves a request of elems (see
// Place), and with Options.RoundToBins it is what the request takes. The
// rounding adds less than 12.5%. ok is false above MaxRoundUp; RoundUp(0)
// is 0. O(1).
func RoundUp(elems uint32) (rounded uint32, ok bool) { return offset.RoundUp(elems) }

// Strategy is what an arena does about a refusal when its free space would
// be enough, were it in one piece.
type Strategy uint8

const (
	// SweepThenCompact arms an incremental sweep and grows a little so the
	// request gets through; a second such refusal before the sweep
	// completes compacts fully.
	SweepThenCompact Strategy = iota
	// GrowOnly grows a little and never compacts (but when the device
	// refuses to grow).
	GrowOnly
	// CompactAlways compacts fully at every such refusal.
	CompactAlways
)

func (s Strategy) String() string {
	switch s {
	case SweepThenCompact:
		return "sweep"
	case GrowOnly:
		return "grow"
	case CompactAlways:
		return "compact"
	}
	return fmt.Sprintf("Strategy(%d)", uint8(s))
}

// SweepLimits bounds the work of one Sweep call so a frame's cost is
// bounded. (A byte limit on memory held is package budget's.)
// The call stops at whichever is met first, but makes at least one move
// when one is possible, however large.
type SweepLimits struct {
	// Moves is the most allocations moved.
	Moves int
	// Bytes is the most bytes moved.
	Bytes uint64
	// Steps is the most allocations visited, moved or not.
	Steps int
}

// DefaultSweepLimits is what a zero Options.SweepLimits means: 64 moves,
// 4 MiB and 4,096 steps.
var DefaultSweepLimits = SweepLimits{Moves: 64, Bytes: 4 << 20, Steps: 4096}

// Or returns b with its zero (or negative) fields taken from d: how a
// partly filled SweepLimits falls back to another (Options.SweepLimits,
// DefaultSweepLimits).
func (b SweepLimits) Or(d SweepLimits) SweepLimits {
	if b.Moves <= 0 {
		b.Moves = d.Moves
	}
	if b.Bytes == 0 {
		b.Bytes = d.Bytes
	}
	if b.Steps <= 0 {
		b.Steps = d.Steps
	}
	return b
}

// Validate returns the error New returns for options o on a device with
// limits lim (ErrInvalidOptions, wrapped), or nil when New would accept
// them. A manager that builds arena options for later (a slab at its
// first Flush) checks them here, at its own New, so that the limits of an
// arena's options live in this package alone. O(1); does not allocate
// but for the error.
func (o Options) Validate(lim device.Limits) error {
	_, err := o.resolve(lim)
	return err
}

// resolve fills in defaults and checks o against the device's limits.
func (o Options) resolve(lim device.Limits) (Options, error) {
	if o.ElemSize == 0 {
		o.ElemSize = 4
	}
	if o.ElemSize%device.CopyAlignment != 0 {
		return o, fmt.Errorf("%w: element size %d is not a multiple of %d", ErrInvalidOptions, o.ElemSize, device.CopyAlignment)
	}
	deviceMax := min(lim.MaxBufferSize/uint64(o.ElemSize), math.MaxUint32)
	if deviceMax == 0 {
		return o, fmt.Errorf("%w: element size %d exceeds the device's max buffer size %d", ErrInvalidOptions, o.ElemSize, lim.MaxBufferSize)
	}
	if o.MaxElems == 0 || uint64(o.MaxElems) > deviceMax {
		o.MaxElems = uint32(deviceMax)
	}
	if o.InitialElems == 0 {
		o.InitialElems = min(64<<10, o.MaxElems)
	}
	if o.InitialElems > o.MaxElems {
		return o, fmt.Errorf("%w: initial capacity %d above maximum %d elements", ErrInvalidOptions, o.InitialElems, o.MaxElems)
	}
	if o.GrowthFactor == 0 {
		o.GrowthFactor = 2
	}
	if !(o.GrowthFactor > 1) || math.IsInf(o.GrowthFactor, 0) {
		return o, fmt.Errorf("%w: growth factor %v, want above 1", ErrInvalidOptions, o.GrowthFactor)
	}
	if o.MaxAllocs == 0 {
		o.MaxAllocs = 1 << 16
	}
	if o.MaxAllocs < 2 || o.MaxAllocs > MaxAllocsLimit {
		return o, fmt.Errorf("%w: MaxAllocs %d, want 2 to %d", ErrInvalidOptions, o.MaxAllocs, MaxAllocsLimit)
	}
	if o.Fragmented > CompactAlways {
		return o, fmt.Errorf("%w: unknown strategy %v", ErrInvalidOptions, o.Fragmented)
	}
	if o.Policy > offset.Fit {
		return o, fmt.Errorf("%w: unknown policy %v", ErrInvalidOptions, o.Policy)
	}
	if !(o.GrowAhead >= 0 && o.GrowAhead < 1) {
		return o, fmt.Errorf("%w: GrowAhead %v (want 0 to below 1)", ErrInvalidOptions, o.GrowAhead)
	}
	if !(o.ShrinkBelow >= 0 && o.ShrinkBelow < 1) || o.ShrinkAfter < 0 {
		return o, fmt.Errorf("%w: ShrinkBelow %v (want 0 to below 1), ShrinkAfter %d", ErrInvalidOptions, o.ShrinkBelow, o.ShrinkAfter)
	}
	if o.ShrinkAfter == 0 {
		o.ShrinkAfter = DefaultShrinkAfter
	}
	if o.MinElems == 0 {
		o.MinElems = o.InitialElems
	}
	if o.MinElems > o.MaxElems {
		return o, fmt.Errorf("%w: MinElems %d above maximum %d elements", ErrInvalidOptions, o.MinElems, o.MaxElems)
	}
	if o.Workers < 0 {
		return o, fmt.Errorf("%w: Workers %d, want 0 or more", ErrInvalidOptions, o.Workers)
	}
	if o.Workers == 0 {
		o.Workers = min(4, runtime.GOMAXPROCS(0))
	}
	o.Workers = min(o.Workers, workers.MaxWorkers)
	if o.GuardBytes > 1<<20 {
		return o, fmt.Errorf("%w: GuardBytes %d, at most 1 MiB", ErrInvalidOptions, o.GuardBytes)
	}
	if g := o.MarginElems(); g >= o.MaxElems {
		return o, fmt.Errorf("%w: GuardBytes %d: a margin of %d elements leaves no room in %d", ErrInvalidOptions, o.GuardBytes, g, o.MaxElems)
	}
	if len(o.Planes) > MaxPlanes-1 {
		return o, fmt.Errorf("%w: %d planes, at most %d", ErrInvalidOptions, len(o.Planes)+1, MaxPlanes)
	}
	for i, pe := range o.Planes {
		if pe == 0 || pe%device.CopyAlignment != 0 {
			return o, fmt.Errorf("%w: plane %d: element size %d is not a positive multiple of %d", ErrInvalidOptions, i+1, pe, device.CopyAlignment)
		}
		if m := lim.MaxBufferSize / uint64(pe); m < uint64(o.MaxElems) {
			if m < uint64(o.InitialElems) || m < uint64(o.MinElems) {
				return o, fmt.Errorf("%w: plane %d: %d elements of %d bytes exceed the device's max buffer size %d",
					ErrInvalidOptions, i+1, o.InitialElems, pe, lim.MaxBufferSize)
			}
			o.MaxElems = uint32(m)
		}
	}
	o.Planes = slices.Clone(o.Planes) // the caller's slice may change
	o.SweepLimits = o.SweepLimits.Or(DefaultSweepLimits)
	o.Usage |= device.CopySrc | device.CopyDst | device.Storage
	if err := o.Usage.Validate(); err != nil {
		return o, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return o, nil
}
