package mesh

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortKeys checks sortKeys against a stable sort by the high half
// (slices.SortStableFunc) on keys that vary in few bytes (as a Flush's
// do), in all bytes, in the low half only, and none, around the size
// where it leaves small inputs to an insertion sort: ties must keep their
// input order, whatever their low halves.
func TestSortKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{0, 1, 2, 63, 64, 65, 255, 256, 257, 1000, 20000} {
		for _, gen := range []func() uint64{
			func() uint64 { return uint64(^uint32(1+r.IntN(500)))<<32 | uint64(r.IntN(30000)) },
			func() uint64 { return uint64(^uint32(1+r.IntN(3)))<<32 | uint64(r.IntN(30000)) },
			r.Uint64,
			func() uint64 { return uint64(r.Uint32()) },
			func() uint64 { return 42 },
		} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = gen()
			}
			want := slices.Clone(keys)
			slices.SortStableFunc(want, func(x, y uint64) int { return cmp.Compare(x>>32, y>>32) })
			sortKeys(keys, make([]uint64, n))
			if !slices.Equal(keys, want) {
				t.Fatalf("n %d: sortKeys differs from a stable sort by the high half", n)
			}
		}
	}
}

func BenchmarkSortKeys(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	keys := make([]uint64, 10000)
	for i := range keys {
		keys[i] = uint64(^uint32(1+r.IntN(500)))<<32 | uint64(i)
	}
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	work, buf := make([]uint64, len(keys)), make([]uint64, len(keys))
	for _, c := range []struct {
		name string
		sort func([]uint64)
	}{{"radix", func(k []uint64) { sortKeys(k, buf) }}, {"pdq", slices.Sort[[]uint64]}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				copy(work, keys)
				c.sort(work)
			}
		})
	}
}
