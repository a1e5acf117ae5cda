package meshlet_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/meshlet"
)

// TestRemote: loader goroutines reserve handles while the owner adds,
// removes and sweeps batches of its own; then the owner places a batch
// under every reserved handle. Every handle is distinct, and every batch
// reads back as written, wherever it moved. Run with -race.
func TestRemote(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		m, err := meshlet.New(dev, meshlet.Options{RowWords: 2, Data: arena.Options{InitialElems: 256}})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Release()
		const loaders, each = 4, 200
		reserved := make([][]meshlet.BatchHandle, loaders)
		var wg sync.WaitGroup
		for g := range loaders {
			r := m.Remote()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					h, err := r.Reserve()
					if err != nil {
						t.Error(err)
						return
					}
					reserved[g] = append(reserved[g], h)
				}
			}()
		}
		// The owner works meanwhile: its own batches come and go.
		var own []meshlet.BatchHandle
		for i := range 300 {
			h, err := m.Add(make([]uint32, 8+i%13), []uint32{0, 1, 4, 2})
			if err != nil {
				t.Fatal(err)
			}
			own = append(own, h)
			if i%2 == 1 {
				must(t, m.Remove(own[0]))
				own = own[1:]
			}
			if i%50 == 49 {
				m.Arm()
				if err := m.Sweep(arena.SweepLimits{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		wg.Wait()
		seen := map[meshlet.BatchHandle]bool{}
		for _, h := range own {
			seen[h] = true
		}
		words := map[meshlet.BatchHandle]uint32{}
		for g, hs := range reserved {
			for i, h := range hs {
				if seen[h] {
					t.Fatalf("handle %v handed out twice", h)
				}
				seen[h] = true
				if _, err := m.Lookup(h); !errors.Is(err, meshlet.ErrNotAdded) {
					t.Fatalf("Lookup of a reserved handle: %v, want ErrNotAdded", err)
				}
				data := make([]uint32, 4+(g*each+i)%17)
				for j := range data {
					data[j] = uint32(g<<20 | i<<8 | j)
				}
				must(t, m.AddReserved(h, data, []uint32{0, uint32(len(data))}))
				words[h] = uint32(len(data))
			}
		}
		must(t, meshlet.Check(m))
		m.Arm()
		if err := m.Compact(); err != nil {
			t.Fatal(err)
		}
		for h, n := range words {
			p, err := m.Lookup(h)
			if err != nil || p.DataWords != n || p.Meshlets != 1 {
				t.Fatalf("%v: %+v, %v; want %d words", h, p, err, n)
			}
		}
		must(t, meshlet.Check(m))
	})
}

// TestRemoteErrors: a reserved handle is placed once, ended by Remove
// whether placed or not, and Reserve fails after Release.
func TestRemoteErrors(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	m, err := meshlet.New(dev, meshlet.Options{RowWords: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Remote()
	a, err := r.Reserve()
	must(t, err)
	b, err := r.Reserve()
	must(t, err)
	if _, err := m.Clone(a); !errors.Is(err, meshlet.ErrNotAdded) {
		t.Errorf("Clone of a reserved handle: %v, want ErrNotAdded", err)
	}
	if err := m.AddReserved(a, nil, []uint32{0}); !errors.Is(err, meshlet.ErrInvalidBatch) {
		t.Errorf("AddReserved of no data: %v", err)
	}
	must(t, m.AddReserved(a, []uint32{1, 2}, []uint32{0}))
	if err := m.AddReserved(a, []uint32{1, 2}, []uint32{0}); !errors.Is(err, meshlet.ErrAdded) {
		t.Errorf("second AddReserved: %v, want ErrAdded", err)
	}
	must(t, m.Remove(b)) // a reservation given up
	if err := m.AddReserved(b, []uint32{1}, []uint32{0}); !errors.Is(err, meshlet.ErrInvalidHandle) {
		t.Errorf("AddReserved after Remove: %v, want ErrInvalidHandle", err)
	}
	if err := m.AddReserved(meshlet.BatchHandle{}, []uint32{1}, []uint32{0}); !errors.Is(err, meshlet.ErrInvalidHandle) {
		t.Errorf("AddReserved of the zero handle: %v, want ErrInvalidHandle", err)
	}
	must(t, m.Remove(a))
	must(t, meshlet.Check(m))
	m.Release()
	if _, err := r.Reserve(); !errors.Is(err, device.ErrReleased) {
		t.Errorf("Reserve after Release: %v, want ErrReleased", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
