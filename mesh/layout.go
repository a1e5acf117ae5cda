package mesh

import (
	"fmt"
	"math"

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
	Kind      Kind
	ElemBytes uint32
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
func (l Layout) SlotBytes() uint32 {
	b := uint64(l.ElemBytes) * uint64(l.ElemsPerSlot())
	if b > math.MaxUint32 {
		return 0
	}
	return uint32(b)
}

// Slots returns how many slots elems elements take. O(1).
func (l Layout) Slots(elems uint32) uint32 {
	sh := l.slotShift()
	return uint32((uint64(elems) + 1<<sh - 1) >> sh)
}

// slotShift returns log2 of ElemsPerSlot: 0, 1 or 2 (a shift, where a
// division by ElemsPerSlot would cost a Flush a divide per array).
func (l Layout) slotShift() uint {
	switch {
	case l.ElemBytes%device.CopyAlignment == 0:
		return 0
	case l.ElemBytes%2 == 0:
		return 1
	}
	return 2
}

func (l Layout) String() string {
	if l.Kind == Indices {
		return IndexFormat(l.ElemBytes).String() + " indices"
	}
	return fmt.Sprintf("%d-byte vertices", l.ElemBytes)
}

// usage returns the buffer usage a slab or buffer of l needs beyond copies.
func (l Layout) usage() device.Usage {
	if l.Kind == Indices {
		return device.Index
	}
	return device.Vertex
}
