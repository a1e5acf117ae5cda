package mesh

import (
	"fmt"
	"math"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/staging"
)

// Defaults of Options, the reference mesh allocator's; MaxSlabBytes and
// LargeThresholdBytes are clamped to the device's largest buffer, so on a
// WebGPU device with default limits both are 256 MiB.
const (
	DefaultMinSlabBytes        = 1 << 20   // 1 MiB
	DefaultMaxSlabBytes        = 512 << 20 // 512 MiB
	DefaultLargeThresholdBytes = 256 << 20 // 256 MiB
	DefaultGrowthFactor        = 1.5
	DefaultMaxMeshesPerSlab    = 1 << 14
)

// Options tune an Allocator. The zero value of each field means its
// default; New validates the result and clamps sizes to the device.
type Options struct {
	// Label prefixes the names of the allocator's buffers.
	Label string
	// MinSlabBytes is the size a slab starts at (larger when the first
	// frame's data needs it). Default 1 MiB.
	MinSlabBytes uint64
	// MaxSlabBytes caps a slab's size; a slab at its cap is left for a new
	// one. Default 512 MiB, clamped to the device's MaxBufferSize.
	MaxSlabBytes uint64
	// LargeThresholdBytes: vertex or index data of at least this many
	// bytes gets a buffer of its own instead of a place in a slab. Default
	// 256 MiB; never above MaxSlabBytes.
	LargeThresholdBytes uint64
	// GrowthFactor multiplies a slab's size when a frame's data does not
	// fit in it (or it grows by what the frame needs, if more). Must be
	// above 1. Default 1.5.
	GrowthFactor float64
	// GrowAhead creates a slab's next buffer ahead of its growth, off
	// the caller's goroutine on a device that can, once its free space
	// falls below this fraction (arena.Options.GrowAhead): a growth then
	// costs a Flush a copy, not the creation of a buffer. Off (0) by
	// default.
	GrowAhead float64
	// NoBaseVertex gives every vertex array a buffer of its own, for
	// platforms whose draws cannot offset the first vertex (WebGL 2's
	// missing BASE_VERTEX). Index arrays still share slabs: first index
	// works everywhere.
	NoBaseVertex bool
	// Usage is added to every buffer the allocator creates (Vertex or
	// Index, CopySrc, CopyDst and Storage are there already): Indirect,
	// for example.
	Usage device.Usage
	// MaxMeshesPerSlab bounds the arrays one slab holds (its arena's
	// MaxAllocs; free regions count too); a slab at the bound leaves new
	// arrays to another. A slab's bookkeeping is allocated whole, about
	// 60 bytes per entry. Default 16,384 (1 MiB of bookkeeping).
	MaxMeshesPerSlab uint32
	// Belt, if set, carries Flush's uploads: each run of adjacent arrays
	// is written into the belt's mapped staging chunks and copied on the
	// GPU, instead of being a queue write. On WebGPU that is several
	// times faster for large uploads, since the backend makes no staging
	// buffer of its own for each write (BenchmarkFlushUpload); on the
	// host device queue writes are faster. The belt must be on the
	// allocator's device; the caller ends every frame on it (EndFrame
	// with the fence of the submission that carries the frame), so that
	// its chunks are reused, and releases it after the allocator.
	Belt *staging.Belt
	// ShrinkBelow and ShrinkAfter let slabs give memory back: a slab whose
	// occupancy stays at or below ShrinkBelow of its size for ShrinkAfter
	// Sweep calls in a row moves into a buffer of what it holds plus a
	// sixteenth (arena.Options.ShrinkBelow). Its buffer changes, as at a
	// growth: watch Stats().Shrinks beside Growths. Off (0) by default;
	// 0.5 suits the default GrowthFactor.
	ShrinkBelow float64
	ShrinkAfter int
	// MaxFlushBytes, when not zero, bounds what one Flush places and
	// uploads: it takes the staged meshes (added, or modified, in place or
	// not) in the order they were staged while the bytes it has taken
	// (their arrays' whole slots) are under MaxFlushBytes, so it uploads
	// less than MaxFlushBytes plus the last mesh's bytes, and always
	// takes one mesh at least. The rest stay staged, in order, for the
	// next Flush: a mesh added is not resident until the Flush that takes
	// it, a mesh rewritten in place keeps its old data until then. It
	// spreads a burst of loading (a level's first frames) over frames,
	// so that no frame's Flush uploads much more than the bound.
	// Stats().Pending counts the meshes left. 0, the default: every Flush
	// takes all.
	MaxFlushBytes uint64
	// GuardBytes, when not zero, gives every array in a slab a margin of
	// at least that many bytes, filled with a pattern, so that CheckGuards
	// finds the meshes something wrote past (arena.Options.GuardBytes): a
	// debugging aid, off by default and free when off. At most 1 MiB, and
	// leaving room for a 4-byte slot in a slab of MaxSlabBytes (New checks
	// both, through arena.Options.Validate). The margin counts against
	// a slab's maximum: an array that fits a slab only without it gets a
	// buffer of its own, and arrays in buffers of their own have no
	// margin.
	GuardBytes uint32
	// Workers bounds the goroutines that gather one run of a Flush's
	// arrays into the belt or a queue write (arena.Options.Workers): 0
	// means min(4, GOMAXPROCS), 1 gathers on the caller's goroutine.
	Workers int
}

// resolve fills in defaults and checks s against the device's limits.
// The limits of what s passes down to the slabs' arenas (GrowthFactor,
// GrowAhead, MaxMeshesPerSlab, GuardBytes, ShrinkBelow, ShrinkAfter,
// Workers) are arena's:
// resolve checks them through arena.Options.Validate, on the options of a
// slab of 4-byte slots (uint32 indices). Every other slab's options differ
// only in sizes derived from the same MaxSlabBytes, and a slab is made
// only for arrays its arena holds (arena.Options.Holds), so no slab's
// arena.NewFor refuses its options at a Flush.
func (s Options) resolve(lim device.Limits) (Options, error) {
	if s.GrowthFactor == 0 {
		s.GrowthFactor = DefaultGrowthFactor
	}
	if s.MinSlabBytes == 0 {
		s.MinSlabBytes = DefaultMinSlabBytes
	}
	if s.MaxSlabBytes == 0 {
		s.MaxSlabBytes = max(DefaultMaxSlabBytes, s.MinSlabBytes)
	}
	if s.MinSlabBytes > s.MaxSlabBytes {
		return s, fmt.Errorf("%w: minimum slab size %d above maximum %d bytes", ErrInvalidOptions, s.MinSlabBytes, s.MaxSlabBytes)
	}
	if s.MaxSlabBytes < device.CopyAlignment {
		return s, fmt.Errorf("%w: maximum slab size %d bytes, want at least %d", ErrInvalidOptions, s.MaxSlabBytes, device.CopyAlignment)
	}
	if s.LargeThresholdBytes == 0 {
		s.LargeThresholdBytes = DefaultLargeThresholdBytes
	}
	if s.MaxMeshesPerSlab == 0 {
		s.MaxMeshesPerSlab = DefaultMaxMeshesPerSlab
	}
	if s.MaxMeshesPerSlab < 4 { // a batch of 2 and the nodes around it
		return s, fmt.Errorf("%w: MaxMeshesPerSlab %d, want at least 4", ErrInvalidOptions, s.MaxMeshesPerSlab)
	}
	if err := (s.Usage | device.Vertex | device.Index | device.CopySrc | device.CopyDst | device.Storage).Validate(); err != nil {
		return s, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	// Both sizes are clamped to what the device can create.
	s.MaxSlabBytes = min(s.MaxSlabBytes, lim.MaxBufferSize)
	s.MinSlabBytes = min(s.MinSlabBytes, s.MaxSlabBytes)
	s.LargeThresholdBytes = min(s.LargeThresholdBytes, s.MaxSlabBytes)
	l := IndexLayout(Uint32)
	if err := s.arenaOptions(l, s.shape(l).minSlots, nil).Validate(lim); err != nil {
		return s, fmt.Errorf("%w: slabs: %w", ErrInvalidOptions, err)
	}
	return s, nil
}

// slabShape is what one layout's slabs look like, in slots.
type slabShape struct {
	minSlots, maxSlots uint32
}

// shape returns the slab sizes of l in slots: MinSlabBytes rounded up,
// MaxSlabBytes rounded down (0 when a slot is larger than a slab). A slab
// never holds more than 2^32-1 elements, so every Slice's StartElem and
// EndElem fit their 32 bits (a slab of 2-byte indices above 8 GiB would
// not). l has a SlotBytes (parse checked it).
func (s *Options) shape(l Layout) slabShape {
	sb, big := uint64(l.SlotBytes()), uint64(0)
	for i := range l.Streams() {
		big = max(big, uint64(l.StreamSlotBytes(i)))
	}
	maxSlots := min(s.MaxSlabBytes/big, arenaMaxElems, math.MaxUint32/uint64(l.ElemsPerSlot()))
	minSlots := min(max((s.MinSlabBytes+sb-1)/sb, 1), maxSlots)
	return slabShape{minSlots: uint32(minSlots), maxSlots: uint32(maxSlots)}
}

// slabLimits returns what decides whether a slab of l holds an array
// (arena.Options.Holds): its slot size, its largest size, its margin.
func (s *Options) slabLimits(l Layout) arena.Options {
	return arena.Options{ElemSize: l.SlotBytes(), MaxElems: s.shape(l).maxSlots, GuardBytes: s.GuardBytes}
}

// arenaMaxElems keeps slab capacities where arena.RoundUp can round a
// request for all of them.
const arenaMaxElems = arena.MaxRoundUp

// arenaOptions returns the options of a new slab of l with capacity slots.
func (s *Options) arenaOptions(l Layout, capacity uint32, onMove func(arena.Move)) arena.Options {
	sh := s.shape(l)
	return arena.Options{
		Label:        s.label("mesh slab of " + l.String()),
		ElemSize:     l.SlotBytes(),
		Usage:        l.usage() | s.Usage,
		InitialElems: capacity,
		MaxElems:     sh.maxSlots,
		GrowthFactor: s.GrowthFactor,
		GrowAhead:    s.GrowAhead,
		MaxAllocs:    s.MaxMeshesPerSlab,
		GuardBytes:   s.GuardBytes,
		ShrinkBelow:  s.ShrinkBelow,
		ShrinkAfter:  s.ShrinkAfter,
		MinElems:     min(sh.minSlots, capacity),
		OnMove:       onMove,
		Planes:       l.planes(),
		Workers:      s.Workers,
	}
}

// label prefixes name with the allocator's Label.
func (s *Options) label(name string) string {
	if s.Label == "" {
		return name
	}
	return s.Label + ": " + name
}
