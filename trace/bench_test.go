package trace_test

import (
	"testing"

	"github.com/gpumem/gpumem/trace"
)

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
