package pool_test

import (
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/pool"
)

// TestMemory checks the pool's memory view against Stats as leases come
// and go: a buffer per buffer held, the leased ones whole regions, the
// idle ones free, names unique.
func TestMemory(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		p := newPool(t, dev, pool.Options{Label: "rb"})
		var leases []pool.Lease
		for i := range 20 {
			l, err := p.Acquire(uint64(256<<(i%5)), 4, device.MapRead|device.CopyDst)
			if err != nil {
				t.Fatal(err)
			}
			leases = append(leases, l)
			if i%3 == 2 {
				if err := p.Put(leases[0]); err != nil {
					t.Fatal(err)
				}
				leases = leases[1:]
			}
			st := p.Stats()
			bufs := p.Memory()
			names := map[string]bool{}
			var held, leased uint64
			n := 0
			for _, b := range bufs {
				if err := b.Check(); err != nil {
					t.Fatal(err)
				}
				if names[b.Name] || b.Kind != memory.PoolBuffer {
					t.Fatalf("buffer %q of kind %v twice or of another kind", b.Name, b.Kind)
				}
				names[b.Name] = true
				held += b.CapacityBytes
				leased += b.Stats.ReservedBytes
				n += b.Stats.Allocations
			}
			if len(bufs) != st.Buffers || held != st.BytesHeld || leased != st.BytesLeased || n != st.Leased {
				t.Fatalf("step %d: memory shows %d buffers, %d bytes, %d leased in %d; Stats %+v", i, len(bufs), held, leased, n, st)
			}
		}
	})
}
