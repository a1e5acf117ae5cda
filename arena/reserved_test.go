package arena_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device/host"
)

// TestReserved: Reserved equals the span the arena holds for every
// allocation (Regions), with and without bin rounding and margins, so a
// caller that writes allocations placed end to end as one range (meshlet's
// AddBatches) bridges exactly their reserve; and it refuses what Allocate
// refuses as a size.
func TestReserved(t *testing.T) {
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	r := rand.New(rand.NewPCG(1, 2))
	for _, elem := range []uint32{4, 12, 16, 64} {
		for _, guard := range []uint32{0, 4, 20, 100} {
			for _, bins := range []bool{false, true} {
				a, err := arena.New(dev, arena.Options{ElemSize: elem, GuardBytes: guard, RoundToBins: bins, InitialElems: 1 << 16, MaxElems: 1 << 20})
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
					if !reg.Used() {
						continue
					}
					if got, err := a.Reserved(reg.Elems); err != nil || got != reg.Size {
						t.Fatalf("elem %d guard %d bins %v: %d elements hold %d, Reserved says %d, %v", elem, guard, bins, reg.Elems, reg.Size, got, err)
					}
				}
				for _, n := range []uint32{0, 1<<20 + 1} {
					if _, err := a.Reserved(n); !errors.Is(err, arena.ErrInvalidSize) {
						t.Errorf("Reserved(%d) = %v, want ErrInvalidSize", n, err)
					}
				}
				a.Release()
			}
		}
	}
}
