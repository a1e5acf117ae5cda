package draw

import "github.com/gpumem/gpumem/mesh"

// TrackedIDs returns the ID of every tracked mesh, in slot order.
func TrackedIDs(t *Table) []ID {
	var ids []ID
	for slot, r := range t.recs {
		if r.h != (mesh.Handle{}) {
			ids = append(ids, ID{slot: uint32(slot), gen: r.gen})
		}
	}
	return ids
}

// Rewrite makes Apply write moved records instead of patching them: one
// write a run of adjacent records (span false) or one over their span.
func Rewrite(t *Table, span bool) {
	t.rewrite = rewriteRuns
	if span {
		t.rewrite = rewriteSpan
	}
}
