package arena_test

import (
	"testing"

	"github.com/gpumem/gpumem/arena"
)

func TestRegions(t *testing.T) {
	a, err := arena.New(openHost(t), arena.Options{InitialElems: 100, RoundToBins: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	var hs []arena.Handle
	for _, n := range []uint32{10, 17, 5} {
		h, err := a.Allocate(n)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if err := a.Free(hs[1]); err != nil {
		t.Fatal(err)
	}
	var end, used uint32
	var got []arena.Region
	for r := range a.Regions() {
		if r.Offset != end {
			t.Fatalf("region at %d, want %d", r.Offset, end)
		}
		end += r.Size
		if r.Used() {
			used++
			off, _ := a.Offset(r.Handle)
			elems, _ := a.Elems(r.Handle)
			if off != r.Offset || elems != r.Elems || r.Size < r.Elems {
				t.Errorf("region %+v: handle at %d with %d elements", r, off, elems)
			}
		}
		got = append(got, r)
	}
	if st := a.Stats(); end != st.CapacityElems || used != uint32(st.Allocations) {
		t.Errorf("regions end at %d with %d allocations, stats %+v; %+v", end, used, st, got)
	}
	if len(got) != 4 || got[1].Used() || !got[2].Used() {
		t.Errorf("regions %+v, want used, free, used, free", got)
	}
}
