package draw

// TrackedIDs returns the ID of every tracked mesh, in slot order.
func TrackedIDs(t *Table) []ID {
	var ids []ID
	for slot, k := range t.keys {
		if k.group != noGroup {
			ids = append(ids, ID{slot: uint32(slot), gen: k.gen})
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
