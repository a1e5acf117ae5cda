package arena

import "testing"

// TestMaxHeld: a request sized without error is held (Options.Holds) when
// its size is at most maxHeld, which sizeBatch checks instead of Holds.
func TestMaxHeld(t *testing.T) {
	for _, o := range []Options{
		{MaxElems: 1},
		{MaxElems: 100},
		{MaxElems: 100, ElemSize: 4, GuardBytes: 16},
		{MaxElems: 1000, ElemSize: 12, GuardBytes: 5, RoundToBins: true},
		{MaxElems: 4099, ElemSize: 4},
		{MaxElems: MaxRoundUp + 7, ElemSize: 4},
	} {
		a := &Arena{opts: o, guard: o.MarginElems()}
		held := a.maxHeld()
		for elems := o.MaxElems - min(o.MaxElems, 200); elems <= o.MaxElems+2; elems++ {
			size, err := a.size(elems)
			if got := err == nil && size <= held; got != o.Holds(elems) {
				t.Errorf("%+v: %d elements, size %d, maxHeld %d: held %v, Holds %v", o, elems, size, held, got, o.Holds(elems))
			}
		}
	}
}
