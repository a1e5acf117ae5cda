package inspect_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
)

// bigArena returns an arena of n allocations with every third freed.
func bigArena(b *testing.B, n int) *arena.Arena {
	a, err := arena.New(testdevice.Host(b, host.Options{}), arena.Options{ElemSize: 16, RoundToBins: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.Release)
	var hs []arena.Handle
	for i := range n {
		h, err := a.Allocate(uint32(8 + i%97))
		if err != nil {
			b.Fatal(err)
		}
		hs = append(hs, h)
	}
	for i := 0; i < n; i += 3 {
		a.Free(hs[i])
	}
	return a
}

func BenchmarkFromArena(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			a := bigArena(b, n)
			owner := func(arena.Region) memory.Owner { return memory.Owner{Kind: "vertex"} }
			b.ReportAllocs()
			for b.Loop() {
				a.Snapshot("a", owner)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/allocation")
		})
	}
}

func BenchmarkRender(b *testing.B) {
	a := bigArena(b, 10000)
	d := inspect.New("host", "bench", a.Snapshot("a", nil))
	for _, f := range []struct {
		name  string
		write func(io.Writer, *inspect.Dump) error
	}{{"svg", inspect.WriteSVG}, {"png", inspect.WritePNG}} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := f.write(io.Discard, &d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
