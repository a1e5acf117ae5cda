package arena_test

import (
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
)

// TestGrowAhead checks Options.GrowAhead on every backend: an arena that
// fills past the fraction prepares its next growth's buffers (one per
// plane) and no more until it grows; the growth takes them, creating
// none, to their capacity, every live byte intact; a growth that needs
// more than they hold gives them up and creates its own; a shrink and
// Release give them up; and the stats show their bytes while they wait.
func TestGrowAhead(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		if !testdevice.PreparesAhead(dev) {
			// A device that makes buffers at Take (the host device,
			// webgpu in the browser): no memory is held ahead, and
			// growths make the buffers.
			a, err := arena.New(dev, arena.Options{ElemSize: 16, InitialElems: 64, GrowAhead: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			s := newShadow(a, 4)
			for a.Stats().Growths < 2 {
				if _, err := s.alloc(8); err != nil {
					t.Fatal(err)
				}
				if b := a.Stats().PreparedBytes; b != 0 {
					t.Fatalf("%d bytes prepared on a device that makes buffers at Take", b)
				}
				if bufs := a.Holder("a", nil).Memory(); len(bufs) != 1 {
					t.Fatalf("the holder shows %d buffers on a device that makes buffers at Take", len(bufs))
				}
			}
			s.verify(t, "grown without preparing")
			a.Release()
		}
		p := &testdevice.Preparer{Device: dev}
		a, err := arena.New(p, arena.Options{ElemSize: 16, InitialElems: 256, GrowthFactor: 2, GrowAhead: 0.25, Planes: []uint32{4}})
		if err != nil {
			t.Fatal(err)
		}
		s := newShadow(a, 3)
		for a.Stats().FreeElems >= 64 {
			if p.Prepared != 0 {
				t.Fatalf("prepared with %d of %d elements free", a.Stats().FreeElems, a.Stats().CapacityElems)
			}
			if _, err := s.alloc(16); err != nil {
				t.Fatal(err)
			}
		}
		if p.Prepared != 2 {
			t.Fatalf("%d buffers prepared with %d of 256 elements free, want 2 (one per plane)", p.Prepared, a.Stats().FreeElems)
		}
		if st := a.Stats(); st.PreparedBytes != 512*(16+4) {
			t.Fatalf("PreparedBytes %d, want %d", st.PreparedBytes, 512*(16+4))
		}
		// The holder shows them: the arena's buffer, then the first
		// plane's prepared one, all free.
		bufs := a.Holder("a", nil).Memory()
		if len(bufs) != 2 || bufs[1].Name != "a (next growth)" || bufs[1].Kind != memory.PreparedBuffer ||
			bufs[1].CapacityBytes != 512*16 || bufs[1].ElemBytes != 16 || len(bufs[1].Regions) != 1 || bufs[1].Regions[0].Live() {
			t.Fatalf("holder while prepared: %+v", bufs)
		}
		if err := bufs[1].Check(); err != nil {
			t.Fatal(err)
		}
		if b, ok := a.PreparedPlane(1, "p"); !ok || b.CapacityBytes != 512*4 || b.ElemBytes != 4 {
			t.Fatalf("plane 1 prepared: %+v, %v", b, ok)
		}
		if _, ok := a.PreparedPlane(2, "p"); ok {
			t.Fatal("a third plane prepared")
		}
		creates := p.Creates
		for a.Stats().Growths == 0 {
			if _, err := s.alloc(16); err != nil {
				t.Fatal(err)
			}
		}
		st := a.Stats()
		if p.Taken != 2 || p.Creates != creates || st.CapacityElems != 512 || p.Prepared != 2 {
			t.Fatalf("growth: %d taken, %d created, capacity %d, %d prepared", p.Taken, p.Creates-creates, st.CapacityElems, p.Prepared)
		}
		s.verify(t, "grown into the prepared buffers")
		if bufs := a.Holder("a", nil).Memory(); len(bufs) != 1 {
			t.Fatalf("the holder shows %d buffers after the growth took the prepared ones", len(bufs))
		}

		// Fill to the fraction again, then ask for more than the
		// prepared buffers hold.
		for a.Stats().FreeElems >= 128 {
			if _, err := s.alloc(32); err != nil {
				t.Fatal(err)
			}
		}
		if p.Prepared != 4 {
			t.Fatalf("%d prepared, want 4", p.Prepared)
		}
		creates = p.Creates
		if _, err := s.alloc(1500); err != nil {
			t.Fatal(err)
		}
		if st := a.Stats(); p.Dropped != 2 || p.Creates != creates+2 || st.CapacityElems < 1500 {
			t.Fatalf("outgrown: %d dropped, %d created, capacity %d", p.Dropped, p.Creates-creates, st.CapacityElems)
		}
		s.verify(t, "grown past the prepared buffers")
		for a.Stats().PreparedBytes == 0 {
			if _, err := s.alloc(64); err != nil {
				t.Fatal(fmt.Errorf("filling to prepare: %w", err))
			}
		}
		dropped := p.Dropped
		a.Release()
		if p.Dropped != dropped+2 {
			t.Fatalf("Release gave up %d prepared buffers, want 2", p.Dropped-dropped)
		}
	})
}

// TestGrowAheadRejected checks GrowAhead's range.
func TestGrowAheadRejected(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		for _, f := range []float64{-0.1, 1, 2} {
			if _, err := arena.New(dev, arena.Options{GrowAhead: f}); err == nil {
				t.Errorf("GrowAhead %v accepted", f)
			}
		}
	})
}
