package mesh_test

import (
	"testing"
	"time"

	"github.com/gpumem/gpumem/mesh"
)

// BenchmarkFlushBacklog measures a Flush bounded by Options.MaxFlushBytes
// while a backlog of staged meshes waits, as when a zone streams in
// faster than a frame's upload bound: 20,000 meshes staged, each Flush
// takes about 1 MiB of them, and as many new ones are staged, so the
// backlog stays. On the host device with its bytes going nowhere
// (sinkDevice): the allocator's own cost. Metrics: ns/flush (the Flush
// alone) and meshes/flush.
func BenchmarkFlushBacklog(b *testing.B) {
	const n = 20_000
	ms := benchMeshes(n, 3)
	dev := &sinkDevice{Device: benchDevice(b)}
	a, err := mesh.New(dev, mesh.Options{MaxFlushBytes: 1 << 20, MinSlabBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Release()
	var live []mesh.Handle
	next := 0
	stage := func(k int) {
		for range k {
			h, err := a.Add(ms[next%n])
			if err != nil {
				b.Fatal(err)
			}
			live = append(live, h)
			next++
		}
	}
	stage(n)
	// Untimed first: the slabs are made once.
	flush := func() int {
		before := a.Stats().Pending
		if err := a.Flush(); err != nil {
			b.Fatal(err)
		}
		return before - a.Stats().Pending
	}
	stage(flush())
	var taken int
	b.ResetTimer()
	for range b.N {
		k := flush()
		b.StopTimer()
		taken += k
		// Keep the slabs from filling: remove as many resident meshes
		// as were taken, then stage as many new ones.
		for range k {
			if err := a.Remove(live[0]); err != nil {
				b.Fatal(err)
			}
			live = live[1:]
		}
		stage(k)
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/flush")
	b.ReportMetric(float64(taken)/float64(b.N), "meshes/flush")
}

// BenchmarkRemoveZone measures what unloading a zone costs: 7,000 meshes
// added together (a zone's) removed at once from an allocator holding
// 35,000, with the CPU's caches evicted first (64 MiB of other memory
// written, untimed), as a frame's other work leaves them; the zone is
// added and flushed again, untimed, between runs. On the host device with
// its bytes going nowhere (sinkDevice): the allocator's own cost.
// Metric: ns/remove.
func BenchmarkRemoveZone(b *testing.B) {
	const n, zone, first = 35_000, 7_000, 10_000
	ms := benchMeshes(n, 3)
	dev := &sinkDevice{Device: benchDevice(b)}
	a, err := mesh.New(dev, mesh.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Release()
	hs := make([]mesh.Handle, n)
	add := func(from, to int) {
		for i := from; i < to; i++ {
			if hs[i], err = a.Add(ms[i]); err != nil {
				b.Fatal(err)
			}
		}
		if err := a.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < n; i += zone {
		add(i, min(i+zone, n))
	}
	evict := make([]byte, 64<<20)
	var spent time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for i := 0; i < len(evict); i += 64 {
			evict[i]++
		}
		b.StartTimer()
		t0 := time.Now()
		for _, h := range hs[first : first+zone] {
			if err := a.Remove(h); err != nil {
				b.Fatal(err)
			}
		}
		spent += time.Since(t0)
		b.StopTimer()
		add(first, first+zone)
		b.StartTimer()
	}
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N*zone), "ns/remove")
}
