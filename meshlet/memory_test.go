package meshlet_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/meshlet"
)

// TestMemory checks the manager's memory view after churn and sweeps:
// both arenas tile, and every live batch is one region in each, at the
// offsets Lookup gives, of its kind, named by its handle.
func TestMemory(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		m, err := meshlet.New(dev, meshlet.Options{Label: "ml", RowWords: 2, Data: arena.Options{InitialElems: 1024}})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Release()
		r := rand.New(rand.NewPCG(1, 2))
		var live []meshlet.BatchHandle
		for step := range 200 {
			if len(live) > 0 && r.IntN(3) == 0 {
				i := r.IntN(len(live))
				if err := m.Remove(live[i]); err != nil {
					t.Fatal(err)
				}
				live = append(live[:i], live[i+1:]...)
			} else {
				n := 1 + r.IntN(8)
				rows := make([]uint32, 2*n)
				h, err := m.Add(make([]uint32, 4*n+r.IntN(40)), rows)
				if err != nil {
					t.Fatal(err)
				}
				live = append(live, h)
			}
			if step%10 == 9 {
				m.Arm()
				if err := m.Sweep(arena.SweepLimits{Moves: 3}); err != nil {
					t.Fatal(err)
				}
			}
		}
		bufs := m.Memory()
		if len(bufs) != 2 || bufs[0].Name != "ml/data" || bufs[1].Name != "ml/rows" {
			t.Fatalf("buffers %q, %q", bufs[0].Name, bufs[1].Name)
		}
		at := map[string]uint64{}
		for k, b := range bufs {
			if err := b.Check(); err != nil {
				t.Fatal(err)
			}
			if b.Stats.Allocations != len(live) || !b.Stats.History {
				t.Fatalf("%s: %d allocations (history %v), %d batches live", b.Name, b.Stats.Allocations, b.Stats.History, len(live))
			}
			for _, rg := range b.Regions {
				if rg.Live() {
					if rg.Kind != [2]string{"meshlet-data", "meshlet-rows"}[k] {
						t.Fatalf("%s: region kind %q", b.Name, rg.Kind)
					}
					at[rg.Kind+" "+rg.Name] = rg.Offset
				}
			}
		}
		for _, h := range live {
			p, err := m.Lookup(h)
			if err != nil {
				t.Fatal(err)
			}
			d, ok1 := at["meshlet-data "+h.String()]
			rw, ok2 := at["meshlet-rows "+h.String()]
			if !ok1 || !ok2 || d != 4*uint64(p.DataOffset) || rw != 8*uint64(p.RowOffset) {
				t.Fatalf("%v: memory shows data at %d (%v), rows at %d (%v); Lookup %+v", h, d, ok1, rw, ok2, p)
			}
		}
	})
}
