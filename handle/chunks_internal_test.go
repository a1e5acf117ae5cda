package handle

import "testing"

// TestSlotTableRuns writes runs of Handles from several starts, across the
// boundary between chunks 0 and 1 (slot 1,024), and reads every slot back;
// the slot just before a run keeps its Handle.
func TestSlotTableRuns(t *testing.T) {
	for _, start := range []uint32{0, 1, 1016, 1023, 1024, 1025, 3000} {
		for _, n := range []int{0, 1, 2, 9, 17} {
			var tab slotTable
			if start > 0 {
				tab.store(start-1, 77)
			}
			hs := make([]Handle, n)
			for j := range hs {
				hs[j] = Pack(uint32(1000+j), uint32(j))
			}
			tab.storeRun(start, hs)
			if start > 0 && tab.load(start-1) != 77 {
				t.Fatalf("start %d, %d: slot %d = %v, want 77", start, n, start-1, tab.load(start-1))
			}
			for j, h := range hs {
				if got := tab.load(start + uint32(j)); got != h {
					t.Fatalf("start %d, %d: slot %d = %v, want %v", start, n, start+uint32(j), got, h)
				}
			}
		}
	}
}
