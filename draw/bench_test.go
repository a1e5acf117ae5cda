package draw_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/draw"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
)

// BenchmarkApply measures the Apply of a sweep step's changes (300 moves
// over slabs of 10,000 meshes with holes), with the GPU's work (ns/op
// includes the wait), three ways: the moved records patched on the GPU (what Apply
// does), written one queue write a run of adjacent records, or written in
// one write over the span they cover. Metrics: records moved per Apply.
func BenchmarkApply(b *testing.B) {
	for _, be := range testdevice.Backends() {
		for _, way := range []string{"patch", "write", "span"} {
			b.Run(fmt.Sprintf("dev=%s/way=%s", be.Name, way), func(b *testing.B) {
				dev := be.Open(b)
				meshes, tab := newTable(b, dev, mesh.Options{}, "bench")
				switch way {
				case "write":
					draw.Rewrite(tab, false)
				case "span":
					draw.Rewrite(tab, true)
				}
				r := rand.New(rand.NewPCG(1, 1))
				var hs []mesh.Handle
				var cs []memory.Change
				add := func(n int) {
					for range n {
						m := randMesh(r, 1+r.IntN(10))
						m.IndexFormat, m.Indices = mesh.Uint16, make([]byte, 6*(1+r.IntN(10)))
						m.VertexStride, m.Vertices = 8, make([]byte, 8*(1+r.IntN(10)))
						h, err := meshes.Add(m)
						if err != nil {
							b.Fatal(err)
						}
						hs = append(hs, h)
					}
					if err := meshes.Flush(); err != nil {
						b.Fatal(err)
					}
					// Slots in another order than places, as a table
					// that has reused its slots for a while has them.
					fresh := append([]mesh.Handle(nil), hs[len(hs)-n:]...)
					r.Shuffle(len(fresh), func(i, j int) { fresh[i], fresh[j] = fresh[j], fresh[i] })
					for _, h := range fresh {
						if _, err := tab.Track(h, mesh.Uint16); err != nil {
							b.Fatal(err)
						}
					}
				}
				settle := func() {
					cs = meshes.Changes(cs[:0])
					if err := tab.Apply(cs); err != nil {
						b.Fatal(err)
					}
					if err := dev.Wait(); err != nil {
						b.Fatal(err)
					}
				}
				add(10000)
				settle()
				// Holes in an eighth of the slabs, each step a sweep of 300
				// moves; when the sweep is done, holes again.
				fragment := func() {
					for range 1500 {
						k := r.IntN(len(hs))
						id, _ := tab.Lookup(hs[k])
						if err := errors.Join(tab.Remove(id), meshes.Remove(hs[k])); err != nil {
							b.Fatal(err)
						}
						hs[k] = hs[len(hs)-1]
						hs = hs[:len(hs)-1]
					}
					settle()
				}
				fragment()
				moved := uint64(0)
				for b.Loop() {
					b.StopTimer()
					before := tab.Stats().Moved
					if err := meshes.Sweep(arena.SweepLimits{Moves: 300, Bytes: 1 << 30, Steps: 1 << 20}); err != nil {
						b.Fatal(err)
					}
					if err := dev.Wait(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					settle()
					moved += tab.Stats().Moved - before
					if tab.Stats().Moved == before {
						b.StopTimer()
						add(1500)
						fragment()
						b.StartTimer()
					}
				}
				b.ReportMetric(float64(moved)/float64(b.N), "moved/op")
				if err := tab.Check(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkPack packs a list of 10,000 and 100,000 draws, one a tracked
// mesh, added in another order than the records' slots: each time the
// opposite of the last, so that the list is not filled again alike (whose
// Pack is O(1)). Metric: ns/draw.
func BenchmarkPack(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("draws=%d", n), func(b *testing.B) {
			dev := testdevice.Backends()[0].Open(b)
			meshes, tab := newTable(b, dev, mesh.Options{MaxMeshesPerSlab: 16384}, "bench")
			r := rand.New(rand.NewPCG(1, 1))
			var err error
			hs := make([]mesh.Handle, n)
			for k := range hs {
				m := randMesh(r, 1+r.IntN(10))
				m.IndexFormat, m.Indices = mesh.Uint16, make([]byte, 6)
				m.VertexStride, m.Vertices = 8, make([]byte, 24)
				if hs[k], err = meshes.Add(m); err != nil {
					b.Fatal(err)
				}
			}
			if err := meshes.Flush(); err != nil {
				b.Fatal(err)
			}
			ids := make([]draw.ID, n)
			for k, h := range hs {
				if ids[k], err = tab.Track(h, mesh.Uint16); err != nil {
					b.Fatal(err)
				}
			}
			if err := tab.Apply(meshes.Changes(nil)); err != nil {
				b.Fatal(err)
			}
			r.Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			l, err := draw.NewList(tab, n)
			if err != nil {
				b.Fatal(err)
			}
			for k, id := range ids {
				if err := l.Add(id, 1, uint32(k)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			var add time.Duration
			for b.Loop() {
				b.StopTimer()
				slices.Reverse(ids)
				t0 := time.Now()
				l.Reset()
				for k, id := range ids {
					if err := l.Add(id, 1, uint32(k)); err != nil {
						b.Fatal(err)
					}
				}
				add += time.Since(t0)
				b.StartTimer()
				if _, err := l.Pack(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/draw")
			b.ReportMetric(float64(add.Nanoseconds())/float64(b.N)/float64(n), "add-ns/draw")
		})
	}
}
