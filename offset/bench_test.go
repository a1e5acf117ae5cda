package offset_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gpumem/gpumem/offset"
	"github.com/gpumem/gpumem/trace"
)

// BenchmarkAllocateFree measures one Free plus one Allocate with n live
// allocations of mixed sizes, freed oldest first: a streaming workload that
// keeps n live. O(1) means ns/op stays flat from 1,000 to 1,000,000 live.
func BenchmarkAllocateFree(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		for _, p := range []offset.Policy{offset.Exact, offset.Fit} {
			b.Run(fmt.Sprintf("live=%d/%v", n, p), func(b *testing.B) {
				benchChurn(b, n, p)
			})
		}
	}
}

func benchChurn(b *testing.B, n int, p offset.Policy) {
	const maxSize = 256
	r := rand.New(rand.NewPCG(1, uint64(n)))
	sizes := make([]uint32, 4096)
	for i := range sizes {
		sizes[i] = 1 + r.Uint32N(maxSize)
	}
	// Room for n allocations at 75% occupancy.
	capacity := uint32(n) * maxSize / 2 * 4 / 3
	a, err := offset.NewPolicy(capacity, uint32(2*n+16), p)
	if err != nil {
		b.Fatal(err)
	}
	live := make([]offset.Allocation, n)
	for i := range live {
		if live[i], err = a.Allocate(sizes[i%len(sizes)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		slot := i % n
		if err := a.Free(live[slot]); err != nil {
			b.Fatal(err)
		}
		h, err := a.Allocate(sizes[i%len(sizes)])
		if err != nil {
			b.Fatal(err)
		}
		live[slot] = h
	}
}

// BenchmarkReplay replays the repository's trace prefixes; ns/line is the
// allocator's cost per trace line, parsing excluded.
func BenchmarkReplay(b *testing.B) {
	for _, name := range traceNames {
		prog, err := trace.Load(filepath.Join("..", "testdata", "traces", name+".trace.gz"))
		if err != nil {
			b.Fatal(err)
		}
		r, err := trace.NewReplayer(prog)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range []offset.Policy{offset.Exact, offset.Fit} {
			b.Run(name+"/"+p.String(), func(b *testing.B) {
				a, err := offset.NewPolicy(prog.Capacity, 1<<20, p)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					a.Reset() // O(node limit): not part of the replay
					b.StartTimer()
					if _, err := r.Run(a); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(prog.Steps)), "ns/line")
			})
		}
	}
}

func TestAllocateFreeDoNotAllocate(t *testing.T) {
	a, _ := offset.New(1<<20, 1024)
	h, _ := a.Allocate(100)
	got := testing.AllocsPerRun(1000, func() {
		a.Free(h)
		h, _ = a.Allocate(100)
	})
	if got != 0 {
		t.Errorf("%v allocations per Allocate+Free", got)
	}
	full, _ := offset.New(16, 16)
	full.Allocate(16)
	if got := testing.AllocsPerRun(1000, func() { full.Allocate(1) }); got != 0 {
		t.Errorf("%v allocations per refused Allocate", got)
	}
}
