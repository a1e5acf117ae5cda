package mesh

import (
	"math"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
)

// TestShapeFitsSlices: a slab never holds more elements than a Slice's
// 32-bit Start and End can count, however large the device's buffers
// (issue 21: Start was computed in 32 bits for slabs above 4 GiB of
// elements, 2-byte indices in a slab above 8 GiB).
func TestShapeFitsSlices(t *testing.T) {
	lim := device.DefaultLimits()
	lim.MaxBufferSize = 1 << 40
	s, err := Options{MaxSlabBytes: 1 << 40}.resolve(lim)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []Layout{IndexLayout(Uint16), IndexLayout(Uint32), VertexLayout(1), VertexLayout(2), VertexLayout(3), VertexLayout(4), VertexLayout(6), VertexLayout(12)} {
		sh := s.shape(l)
		if elems := uint64(sh.maxSlots) * uint64(l.ElemsPerSlot()); elems > math.MaxUint32 || sh.maxSlots == 0 {
			t.Errorf("%v: slabs of up to %d slots, %d elements: Slice.End would wrap", l, sh.maxSlots, elems)
		}
	}
}

// TestMaxHeld: maxHeld is the bound of Holds, which Flush checks arrays
// against instead of calling Holds for each.
func TestMaxHeld(t *testing.T) {
	for _, o := range []arena.Options{
		{},
		{MaxElems: 1},
		{MaxElems: 100},
		{MaxElems: 100, ElemSize: 4, GuardBytes: 16},
		{MaxElems: 1000, ElemSize: 12, GuardBytes: 5},
		{MaxElems: 1 << 20, ElemSize: 256, GuardBytes: 4},
		{MaxElems: math.MaxUint32, ElemSize: 4},
	} {
		m := maxHeld(o)
		if (m > 0 && !o.Holds(m)) || (m < math.MaxUint32 && o.Holds(m+1)) {
			t.Errorf("%+v: maxHeld %d, Holds there %v, above %v", o, m, o.Holds(m), o.Holds(m+1))
		}
	}
}
