package mesh

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gpumem/gpumem/arena"

	"github.com/gpumem/gpumem/device"
)

// Kind says whether a Layout is of vertices or of indices. Vertex and
// index data never share a slab.
type Kind uint8

const (
	// Vertices: elements of a vertex array, of the mesh's stride.
	Vertices Kind = iota
	// Indices: elements of an index array, 2 or 4 bytes.
	Indices
)

func (k Kind) String() string {
	if k == Indices {
		return "index"
	}
	return "vertex"
}

// IndexFormat is the width of one index in bytes.
type IndexFormat uint8

const (
	// Uint16 indices take 2 bytes each.
	Uint16 IndexFormat = 2
	// Uint32 indices take 4 bytes each.
	Uint32 IndexFormat = 4
)

func (f IndexFormat) String() string {
	switch f {
	case Uint16:
		return "uint16"
	case Uint32:
		return "uint32"
	}
	if f == 0 {
		return "unset"
	}
	return fmt.Sprintf("IndexFormat(%d)", uint8(f))
}

// Layout is the shape of one element: a vertex of ElemBytes bytes, or an
// index of 2 or 4. Meshes share a slab only when their layouts are equal.
// Layouts are comparable, and small enough to pass by value.
//
// # Slots
//
// Slabs are allocated in slots, not elements, because device copies (a
// slab's growth, a sweep's moves) need offsets and sizes that are
// multiples of 4 bytes. A slot is the fewest whole elements whose size is
// a multiple of 4: one element when ElemBytes is, two when ElemBytes is
// even (a 6-byte half-precision position: slots of 12 bytes; a uint16
// index: slots of 4 bytes), four when it is odd. An allocation of n
// elements takes ceil(n/ElemsPerSlot) slots, so it starts on an element
// boundary that is also a 4-byte boundary, and up to ElemsPerSlot-1
// elements of its last slot are padding. Ranges are reported in elements:
// slot s starts at element s*ElemsPerSlot.
type Layout struct {
	Kind Kind
	// set names the strides of a vertex layout of separate streams
	// (Mesh.Streams, StreamsLayout): an index into streamSets, 0 for one
	// stream. Each stream is a buffer of its own (a plane of the slab's
	// arena), and a mesh's vertices start at one element in all of them,
	// so one base vertex serves every stream. Slots are the fewest whole
	// elements whose size is a multiple of 4 in every stream. (Beside
	// Kind, so that a Layout is 8 bytes.)
	set uint16
	// ElemBytes is the vertex stride (of the first stream), or the index
	// width.
	ElemBytes uint32
}

// MaxStreams bounds a vertex layout's streams: WebGPU binds at most 8
// vertex buffers.
const MaxStreams = arena.MaxPlanes

// streams is the strides of one set of separate streams, 0 past the
// last.
type streams [MaxStreams]uint32

// streamSet is an interned set of strides and the slot shift of its
// further streams (all but the first, whose stride is ElemBytes).
type streamSet struct {
	strides streams
	shift   uint8
}

// streamSets interns the stride sets of the layouts of separate streams,
// so that a Layout stays small and comparable: list[k-1] is set k's. The
// list only grows; readers load it without a lock.
var streamSets struct {
	mu    sync.Mutex
	byKey map[streams]uint16
	list  atomic.Pointer[[]streamSet]
}

// errTooManySets: a process uses at most 65535 different stride sets.
var errTooManySets = errors.New("more than 65535 different sets of vertex streams")

// internStreams returns the set index of ss (two strides or more).
func internStreams(ss streams) (uint16, error) {
	streamSets.mu.Lock()
	defer streamSets.mu.Unlock()
	if k, ok := streamSets.byKey[ss]; ok {
		return k, nil
	}
	var list []streamSet
	if p := streamSets.list.Load(); p != nil {
		list = *p
	}
	if len(list) >= math.MaxUint16 {
		return 0, errTooManySets
	}
	shift := uint8(0)
	for _, st := range ss[1:] {
		if st != 0 {
			shift = max(shift, uint8(strideShift(st)))
		}
	}
	list = append(slices.Clip(list), streamSet{ss, shift})
	streamSets.list.Store(&list)
	if streamSets.byKey == nil {
		streamSets.byKey = map[streams]uint16{}
	}
	streamSets.byKey[ss] = uint16(len(list))
	return uint16(len(list)), nil
}

// StreamsLayout returns the vertex layout of separate streams of the
// given strides, in order; one stride is VertexLayout's. Errors: none or
// more than MaxStreams strides, a zero stride (ErrInvalidMesh).
func StreamsLayout(strides ...uint32) (Layout, error) {
	if len(strides) == 0 || len(strides) > MaxStreams || slices.Contains(strides, 0) {
		return Layout{}, fmt.Errorf("%w: vertex streams of strides %v (1 to %d, none 0)", ErrInvalidMesh, strides, MaxStreams)
	}
	l := Layout{Kind: Vertices, ElemBytes: strides[0]}
	if len(strides) == 1 {
		return l, nil
	}
	var ss streams
	copy(ss[:], strides)
	k, err := internStreams(ss)
	if err != nil {
		return Layout{}, fmt.Errorf("%w: %w", ErrInvalidMesh, err)
	}
	l.set = k
	return l, nil
}

// streamSet returns l's interned set; l.set is not 0.
func (l Layout) streamSet() *streamSet { return &(*streamSets.list.Load())[l.set-1] }

// strides returns l's set of streams; l.set is not 0.
func (l Layout) strides() *streams { return &l.streamSet().strides }

// Streams returns the number of vertex streams: 1 for an index layout
// and an interleaved vertex layout.
func (l Layout) Streams() int {
	if l.set == 0 {
		return 1
	}
	ss := l.strides()
	n := 1
	for n < len(ss) && ss[n] != 0 {
		n++
	}
	return n
}

// Stride returns stream i's element size: ElemBytes for 0; 0 past the
// last stream.
func (l Layout) Stride(i int) uint32 {
	switch {
	case i == 0:
		return l.ElemBytes
	case l.set == 0 || i < 0 || i >= MaxStreams:
		return 0
	}
	return l.strides()[i]
}

// StreamSlotBytes returns the bytes of one slot in stream i (SlotBytes
// for 0), 0 when that passes 2^32.
func (l Layout) StreamSlotBytes(i int) uint32 {
	b := uint64(l.Stride(i)) * uint64(l.ElemsPerSlot())
	if b > math.MaxUint32 {
		return 0
	}
	return uint32(b)
}

// VertexLayout returns the layout of vertices of stride bytes.
func VertexLayout(stride uint32) Layout { return Layout{Kind: Vertices, ElemBytes: stride} }

// IndexLayout returns the layout of indices of format f.
func IndexLayout(f IndexFormat) Layout { return Layout{Kind: Indices, ElemBytes: uint32(f)} }

// ElemsPerSlot returns how many elements make one slot: 1, 2 or 4. O(1).
func (l Layout) ElemsPerSlot() uint32 { return 1 << l.slotShift() }

// SlotBytes returns the size of one slot in bytes, a multiple of 4, or 0
// when it does not fit in 32 bits (ElemBytes above 2^30 and not a
// multiple of 4): no slab can hold such a layout, and Add refuses it with
// ErrInvalidMesh. O(1).
func (l Layout) SlotBytes() uint32 { return l.StreamSlotBytes(0) }

// Slots returns how many slots elems elements take. O(1).
func (l Layout) Slots(elems uint32) uint32 {
	sh := l.slotShift()
	return uint32((uint64(elems) + 1<<sh - 1) >> sh)
}

// slotShift returns log2 of ElemsPerSlot: 0, 1 or 2 (a shift, where a
// division by ElemsPerSlot would cost a Flush a divide per array).
func (l Layout) slotShift() uint {
	if l.set == 0 {
		return strideShift(l.ElemBytes) // one stream: the usual layout
	}
	return max(strideShift(l.ElemBytes), uint(l.streamSet().shift))
}

// strideShift is the slot shift of one stride: a slot of 1<<shift
// elements makes a multiple of 4 bytes (device.CopyAlignment): 2 for an
// odd stride, 1 for an even one, 0 for a multiple of 4.
func strideShift(stride uint32) uint {
	return 2 - uint(bits.TrailingZeros32(stride|device.CopyAlignment))
}

func (l Layout) String() string {
	if l.Kind == Indices {
		return IndexFormat(l.ElemBytes).String() + " indices"
	}
	if l.set == 0 {
		return fmt.Sprintf("%d-byte vertices", l.ElemBytes)
	}
	s := strconv.FormatUint(uint64(l.ElemBytes), 10)
	for i := 1; i < l.Streams(); i++ {
		s += "+" + strconv.FormatUint(uint64(l.Stride(i)), 10)
	}
	return s + "-byte vertex streams"
}

// planes returns the arena plane element sizes of l's further streams.
func (l Layout) planes() []uint32 {
	n := l.Streams()
	if n == 1 {
		return nil
	}
	ps := make([]uint32, n-1)
	for i := range ps {
		ps[i] = l.StreamSlotBytes(i + 1)
	}
	return ps
}

// usage returns the buffer usage a slab or buffer of l needs beyond copies.
func (l Layout) usage() device.Usage {
	if l.Kind == Indices {
		return device.Index
	}
	return device.Vertex
}
