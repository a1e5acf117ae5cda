package mesh

import (
	"fmt"
	"math"
	"strconv"

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
	// ElemBytes is the vertex stride (of the first stream), or the index
	// width.
	ElemBytes uint32
	// More holds the strides of a vertex layout's further streams, in
	// order, the rest 0: a mesh whose attributes live in separate arrays
	// (Mesh.Streams). Each stream is a buffer of its own (a plane of the
	// slab's arena), and a mesh's vertices start at one element in all of
	// them, so one base vertex serves every stream. Slots are the fewest
	// whole elements whose size is a multiple of 4 in every stream. Below
	// 2^16 each (WebGPU's strides are at most 2048).
	More [MaxStreams - 1]uint16
}

// MaxStreams bounds a vertex layout's streams: WebGPU binds at most 8
// vertex buffers.
const MaxStreams = arena.MaxPlanes

// StreamsLayout returns the vertex layout of separate streams of the
// given strides, in order; one stride is VertexLayout's. The strides are
// at most MaxStreams, none 0, those after the first below 2^16 (a Mesh's
// checks say so; here the extra are dropped and the large cut).
func StreamsLayout(strides ...uint32) Layout {
	l := Layout{Kind: Vertices}
	if len(strides) > 0 {
		l.ElemBytes = strides[0]
		for i, s := range strides[1:min(len(strides), MaxStreams)] {
			l.More[i] = uint16(s)
		}
	}
	return l
}

// Streams returns the number of vertex streams: 1 for an index layout
// and an interleaved vertex layout.
func (l Layout) Streams() int {
	n := 1
	for n <= len(l.More) && l.More[n-1] != 0 {
		n++
	}
	return n
}

// Stride returns stream i's element size: ElemBytes for 0.
func (l Layout) Stride(i int) uint32 {
	if i == 0 {
		return l.ElemBytes
	}
	return uint32(l.More[i-1])
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
	sh := strideShift(l.ElemBytes)
	for _, m := range l.More {
		if m == 0 {
			break
		}
		sh = max(sh, strideShift(uint32(m)))
	}
	return sh
}

// strideShift is the slot shift of one stride: a slot of 1<<shift
// elements makes a multiple of 4 bytes.
func strideShift(stride uint32) uint {
	switch {
	case stride%device.CopyAlignment == 0:
		return 0
	case stride%2 == 0:
		return 1
	}
	return 2
}

func (l Layout) String() string {
	if l.Kind == Indices {
		return IndexFormat(l.ElemBytes).String() + " indices"
	}
	if l.More[0] == 0 {
		return fmt.Sprintf("%d-byte vertices", l.ElemBytes)
	}
	s := strconv.FormatUint(uint64(l.ElemBytes), 10)
	for i := 1; i < l.Streams(); i++ {
		s += "+" + strconv.FormatUint(uint64(l.More[i-1]), 10)
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
