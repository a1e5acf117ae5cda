package handle

import "testing"

// TestSlotTableRuns writes runs of indices at even and odd starts, across
// the boundary between chunks 0 and 1 (position 2,048), and reads every
// position back; the position just before a run keeps its index.
func TestSlotTableRuns(t *testing.T) {
	for _, start := range []uint32{0, 1, 2, 2040, 2041, 2047, 2048, 2049} {
		for _, n := range []int{0, 1, 2, 3, 8, 9, 17} {
			var tab slotTable
			if start > 0 {
				tab.store(start-1, 77)
			}
			hs := make([]Handle, n)
			for j := range hs {
				hs[j] = Pack(uint32(1000+j), uint32(j)) // generations are not stored
			}
			tab.storeRun(start, hs)
			if start > 0 && tab.load(start-1) != 77 {
				t.Fatalf("start %d, %d: position %d = %d, want 77", start, n, start-1, tab.load(start-1))
			}
			for j, h := range hs {
				if got := tab.load(start + uint32(j)); got != h.Index() {
					t.Fatalf("start %d, %d: position %d = %d, want %d", start, n, start+uint32(j), got, h.Index())
				}
			}
			// store keeps the other half of the word.
			if n >= 2 {
				tab.store(start, 5)
				if tab.load(start) != 5 || tab.load(start+1) != hs[1].Index() {
					t.Fatalf("start %d: store disturbed its neighbour", start)
				}
			}
		}
	}
}
