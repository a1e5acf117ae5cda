package meshlet

import (
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device/host"
)

// reserved, which AddBatches trusts to bridge the reserve between two
// batches, never overestimates: it equals the size the arena holds for
// every allocation (Regions), with and without bin rounding and margins.
func TestReservedMatchesArena(t *testing.T) {
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	r := rand.New(rand.NewPCG(1, 2))
	for _, elem := range []uint32{4, 12, 16, 64} {
		for _, guard := range []uint32{0, 4, 20, 100} {
			for _, bins := range []bool{false, true} {
				o := arena.Options{ElemSize: elem, GuardBytes: guard, RoundToBins: bins, InitialElems: 1 << 16}
				a, err := arena.New(dev, o)
				if err != nil {
					t.Fatal(err)
				}
				for range 200 {
					n := 1 + r.Uint32N(300)
					if r.IntN(4) == 0 {
						n = 1 + r.Uint32N(8)
					}
					if _, err := a.Allocate(n); err != nil {
						break
					}
				}
				for reg := range a.Regions() {
					if reg.Used() && reserved(&o, reg.Elems) != reg.Size {
						t.Fatalf("elem %d guard %d bins %v: %d elements hold %d, reserved says %d", elem, guard, bins, reg.Elems, reg.Size, reserved(&o, reg.Elems))
					}
				}
				a.Release()
			}
		}
	}
}
