package mesh

import "testing"

// TestRunsInOrder: uploadRuns may skip its sort when each slab's uploads
// form one block by increasing offset, whatever the order of the blocks;
// a slab met in two blocks, or offsets that go back or overlap, need the
// sort. Every verdict holds call after call (the slabs' marks are per
// call).
func TestRunsInOrder(t *testing.T) {
	s1, s2 := &slab{seq: 1}, &slab{seq: 2}
	up := func(s *slab, off, n uint64) slabUpload { return slabUpload{slab: s, off: off, n: n} }
	for _, c := range []struct {
		name string
		ups  []slabUpload
		want bool
	}{
		{"none", nil, true},
		{"one slab", []slabUpload{up(s1, 0, 8), up(s1, 8, 4), up(s1, 20, 4)}, true},
		{"blocks by seq", []slabUpload{up(s1, 0, 8), up(s1, 8, 4), up(s2, 0, 4)}, true},
		{"blocks against seq", []slabUpload{up(s2, 0, 8), up(s1, 0, 4), up(s1, 4, 4)}, true},
		{"offset back", []slabUpload{up(s1, 8, 8), up(s1, 0, 4)}, false},
		{"overlap", []slabUpload{up(s1, 0, 8), up(s1, 4, 4)}, false},
		{"slab twice", []slabUpload{up(s1, 0, 8), up(s2, 0, 4), up(s1, 8, 4)}, false},
	} {
		var r runs
		r.ups = c.ups
		for call := range 3 {
			if got := r.inOrder(); got != c.want {
				t.Errorf("%s, call %d: inOrder %v, want %v", c.name, call, got, c.want)
			}
		}
		if got := r.sortedUps(); !sortedBySlabOffset(got) || len(got) != len(c.ups) {
			t.Errorf("%s: sortedUps not in slab and offset order: %+v", c.name, got)
		}
	}
}

// sortedBySlabOffset reports whether ups hold each slab's uploads in one
// block by offset, checked the slow way.
func sortedBySlabOffset(ups []slabUpload) bool {
	for i := range ups {
		for j := i + 1; j < len(ups); j++ {
			if ups[i].slab != ups[j].slab {
				continue
			}
			if ups[j].off < ups[i].off {
				return false
			}
			for k := i + 1; k < j; k++ {
				if ups[k].slab != ups[i].slab {
					return false
				}
			}
		}
	}
	return true
}
