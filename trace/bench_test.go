package trace_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/offset"
	"github.com/gpumem/gpumem/trace"
)

// BenchmarkReplay replays each shared trace prefix (or the full traces in
// $GPUMEM_TRACES) per iteration, under each policy. ns/line is the cost of
// one trace line; parsing and the allocator's Reset are outside the timer.
func BenchmarkReplay(b *testing.B) {
	for _, name := range sharedTraces(b) {
		p, err := trace.Load(name)
		if err != nil {
			b.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(name), ".trace.gz")
		for _, policy := range []offset.Policy{offset.Exact, offset.Fit} {
			b.Run(base+"/"+policy.String(), func(b *testing.B) {
				a, err := offset.NewPolicy(p.Capacity, 1<<20, policy)
				if err != nil {
					b.Fatal(err)
				}
				r, err := trace.NewReplayer(p)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				var res trace.Result
				for b.Loop() {
					b.StopTimer()
					a.Reset()
					b.StartTimer()
					if res, err = r.Run(a); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(p.Steps)), "ns/line")
				b.ReportMetric(float64(res.Failures), "failures")
			})
		}
	}
}

// BenchmarkLoad measures parsing a trace into a Program.
func BenchmarkLoad(b *testing.B) {
	names := sharedTraces(b)
	b.ReportAllocs()
	var lines int
	for b.Loop() {
		p, err := trace.Load(names[0])
		if err != nil {
			b.Fatal(err)
		}
		lines = len(p.Steps)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines), "ns/line")
}
