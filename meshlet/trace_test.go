package meshlet_test

import (
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/meshlet"
	"github.com/gpumem/gpumem/trace"
)

// traceSteps is how much of each trace the test replays: enough to reach
// a steady churn, little enough to run in a fraction of a second.
const traceSteps = 20000

// The shared traces' size patterns as batches (a trace's size, in 4-byte
// units, divided by 64 as data words; a meshlet per 64 words), with a
// default-budget sweep every 100 steps, armed by hand every 1,000 if no
// refusal armed it. After every growth and compaction, and after the
// sweep of every 1,000th step, both buffers are read back and every batch
// checked; every sweep's changed reports are checked against what moved.
func TestTraceChurn(t *testing.T) {
	for _, name := range []string{"meshlet", "lognormal"} {
		t.Run(name, func(t *testing.T) {
			p, err := trace.Load("../testdata/traces/" + name + ".trace.gz")
			if err != nil {
				t.Fatal(err)
			}
			eachBackend(t, func(t *testing.T, dev device.Device) {
				md := newModel(t, dev, meshlet.Options{RowWords: 4, AddressWord: 0,
					Data: arena.Options{InitialElems: 1 << 14}, Rows: arena.Options{InitialElems: 1 << 10}}, 9)
				md.light = true
				slots := make([]meshlet.BatchHandle, p.Slots)
				for i, s := range p.Steps[:min(traceSteps, len(p.Steps))] {
					if s.IsFree() {
						md.remove(md.pos[slots[s.Slot()]])
						continue
					}
					before := md.m.Stats()
					words := max(1, s.Size()/64)
					h, err := md.add(words, 1+words/64)
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					slots[s.Slot()] = h
					after := md.m.Stats()
					if after.Data.Growths != before.Data.Growths || after.Rows.Growths != before.Rows.Growths ||
						after.Data.FullCompactions != before.Data.FullCompactions || after.Rows.FullCompactions != before.Rows.FullCompactions {
						md.verify(fmt.Sprintf("step %d: growth or compaction", i))
					}
					if i%1000 == 999 {
						md.m.Arm()
					}
					if i%100 == 99 {
						md.sweep(arena.SweepLimits{})
					}
					if i%1000 == 999 {
						md.verify(fmt.Sprintf("step %d: sweep", i))
					}
				}
				md.verify("end")
				st := md.m.Stats()
				t.Logf("%d batches, %d data words in %d (peak capacity), %d growths, %d compactions, %d moves",
					st.Batches, st.DataWords, st.Data.CapacityElems, st.Data.Growths, st.Data.FullCompactions, st.Data.Moves)
			})
		})
	}
}
