package mesh_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
)

// TestLoaders: 8 goroutines add, modify and remove meshes through their
// Loaders while the owner flushes, sweeps and checks; at the end every
// mesh a loader kept is resident with the bytes it last gave. Run it with
// -race.
func TestLoaders(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		a, err := mesh.New(dev, mesh.Options{MinSlabBytes: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		const loaders, perLoader = 8, 150
		kept := make([]map[mesh.Handle]mesh.Mesh, loaders)
		ls := make([]*mesh.Loader, loaders)
		for i := range ls {
			ls[i] = a.NewLoader()
		}
		var wg sync.WaitGroup
		errs := make(chan error, loaders)
		for g := range loaders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, r := ls[g], rand.New(rand.NewPCG(uint64(g), 5))
				mine := map[mesh.Handle]mesh.Mesh{}
				kept[g] = mine
				for range perLoader {
					set := streamSets[r.IntN(len(streamSets))]
					switch op := r.IntN(10); {
					case op < 6 || len(mine) == 0:
						m := randomStreams(r, set, 1+r.IntN(40))
						h, err := l.Add(m)
						if err != nil {
							errs <- err
							return
						}
						mine[h] = m
					case op < 8:
						for h := range mine {
							m := randomStreams(r, set, 1+r.IntN(40))
							if err := l.Modify(h, m); err != nil {
								errs <- err
								return
							}
							mine[h] = m
							break
						}
					default:
						for h := range mine {
							if err := l.Remove(h); err != nil {
								errs <- err
								return
							}
							delete(mine, h)
							break
						}
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for frames := 0; ; frames++ {
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := a.Sweep(arena.SweepLimits{Moves: 8}); err != nil {
				t.Fatal(err)
			}
			if err := mesh.Check(a); err != nil {
				t.Fatalf("frame %d: %v", frames, err)
			}
			select {
			case <-done:
			default:
				time.Sleep(100 * time.Microsecond)
				continue
			}
			break
		}
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if err := a.Flush(); err != nil {
			t.Fatal(err)
		}
		all := map[mesh.Handle]mesh.Mesh{}
		for _, mine := range kept {
			for h, m := range mine {
				if _, dup := all[h]; dup {
					t.Fatalf("%v issued to two loaders", h)
				}
				all[h] = m
			}
		}
		if a.Len() != len(all) {
			t.Fatalf("%d meshes live, the loaders kept %d", a.Len(), len(all))
		}
		if st := a.Stats(); st.LoaderDropped != 0 || st.LoaderOps != loaders*perLoader {
			t.Fatalf("%d loader calls taken, %d dropped; want %d and 0", st.LoaderOps, st.LoaderDropped, loaders*perLoader)
		}
		checkStreams(t, dev, a, all, -1)
	})
}

// TestLoaderOwnerCalls: the owner's Modify and Remove of a Loader's mesh
// not taken yet take it first; Slices reports it not resident until a
// Flush; a released allocator's Loader refuses calls.
func TestLoaderOwnerCalls(t *testing.T) {
	a, err := mesh.New(testdevice.Host(t, host.Options{}), mesh.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := a.NewLoader()
	m := mesh.Mesh{VertexStride: 4, Vertices: []byte{1, 2, 3, 4}}
	h, err := l.Add(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Slices(h); !errors.Is(err, mesh.ErrNotResident) {
		t.Fatalf("Slices of a loader's mesh before Flush: %v, want ErrNotResident", err)
	}
	if err := a.Modify(h, mesh.Mesh{VertexStride: 4, Vertices: []byte{5, 6, 7, 8}}); err != nil {
		t.Fatalf("owner's Modify of a loader's mesh: %v", err)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if v, _, err := a.Slices(h); err != nil || v.Len() != 1 {
		t.Fatalf("after Flush: %+v %v", v, err)
	}
	h2, _ := l.Add(m)
	if err := a.Remove(h2); err != nil {
		t.Fatalf("owner's Remove of a loader's mesh: %v", err)
	}
	if _, err := l.Add(mesh.Mesh{VertexStride: 3, Vertices: []byte{1}}); !errors.Is(err, mesh.ErrInvalidMesh) {
		t.Fatalf("bad mesh: %v", err)
	}
	if err := mesh.Check(a); err != nil {
		t.Fatal(err)
	}
	a.Release()
	if _, err := l.Add(m); !errors.Is(err, device.ErrReleased) {
		t.Fatalf("Add after Release: %v", err)
	}
	if err := l.Remove(h); !errors.Is(err, device.ErrReleased) {
		t.Fatalf("Remove after Release: %v", err)
	}
}

// BenchmarkLoaders stages 20,000 meshes of 24 vertices and 36 indices
// from 1 and from 8 goroutines, each with its Loader, then places them
// with one Flush: meshes staged a second (the staging alone), and the
// Flush's time.
func BenchmarkLoaders(b *testing.B) {
	const total = 20_000
	r := rand.New(rand.NewPCG(1, 2))
	ms := make([]mesh.Mesh, 64)
	for i := range ms {
		ms[i] = randomStreams(r, []uint32{12, 12, 8}, 24)
	}
	for _, g := range []int{1, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			dev := testdevice.Host(b, host.Options{})
			var stage, flush time.Duration
			for range b.N {
				a, err := mesh.New(dev, mesh.Options{})
				if err != nil {
					b.Fatal(err)
				}
				ls := make([]*mesh.Loader, g)
				for i := range ls {
					ls[i] = a.NewLoader()
				}
				var wg sync.WaitGroup
				t0 := time.Now()
				for i := range g {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for k := i; k < total; k += g {
							if _, err := ls[i].Add(ms[k%len(ms)]); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				t1 := time.Now()
				if err := a.Flush(); err != nil {
					b.Fatal(err)
				}
				stage += t1.Sub(t0)
				flush += time.Since(t1)
				a.Release()
			}
			b.ReportMetric(float64(total*b.N)/stage.Seconds(), "meshes/s-staged")
			b.ReportMetric(flush.Seconds()*1e3/float64(b.N), "flush-ms")
		})
	}
}

// A loader goroutine stages meshes while the owner's frame loop flushes.
func ExampleLoader() {
	dev, _ := host.New(host.Options{})
	a, _ := mesh.New(dev, mesh.Options{})
	defer a.Release()
	l := a.NewLoader() // one per loading goroutine, made by the owner
	loaded := make(chan mesh.Handle)
	go func() {
		h, err := l.Add(mesh.Mesh{VertexStride: 12, Vertices: make([]byte, 3*12)})
		if err != nil {
			panic(err)
		}
		loaded <- h // the handle is usable at once: wire it into the scene
	}()
	h := <-loaded
	fmt.Println("resident before the Flush:", a.Resident(h))
	_ = a.Flush() // the frame's Flush takes what loaders staged
	v, _, _ := a.Slices(h)
	fmt.Println("resident after:", a.Resident(h), "vertices", v.Len())
	// Output:
	// resident before the Flush: false
	// resident after: true vertices 3
}
