package bindless_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
)

// TestPageAhead checks Options.PageAhead on every backend: a bucket whose
// available layers fall below the fraction prepares its next page, once;
// the registration that needs a page takes it, creating none, and every
// texture reads back intact; a full registry (MaxPages) prepares none,
// nor does a sized bucket; Shrink and Release give a prepared page up;
// Stats and Memory show it while it waits; and the invariants hold after
// every call.
func TestPageAhead(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		p := &testdevice.Preparer{Device: dev}
		r := newRegistry(t, p, bindless.Options{Label: "a/", LayersPerPage: 8, MaxPages: 4, PageAhead: 0.25})
		m := newModel(p, r)
		pageBytes := 8 * device.TextureDesc{Format: rgba4.Format, Width: 4, Height: 4}.MipBytes(0)
		step := func(what string, err error) {
			t.Helper()
			must(t, err)
			if err := bindless.Check(r); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		id := 0
		register := func() bindless.Handle {
			t.Helper()
			h, err := m.register(fmt.Sprint("t", id), rgba4, id)
			step(fmt.Sprintf("register t%d", id), err)
			id++
			return h
		}
		// Page 1 fills; with one layer of 8 left (below a quarter) its
		// bucket prepares page 2, and no more.
		for range 7 {
			if p.Prepared != 0 {
				t.Fatalf("prepared with %d layers registered", id)
			}
			register()
		}
		if p.Prepared != 1 {
			t.Fatalf("%d pages prepared with 1 layer of 8 left, want 1", p.Prepared)
		}
		if st := r.Stats(); st.PreparedBytes != pageBytes || st.Pages != 2 {
			t.Fatalf("while prepared: PreparedBytes %d (want %d), %d pages", st.PreparedBytes, pageBytes, st.Pages)
		}
		bufs := r.Memory()
		last := bufs[len(bufs)-1]
		if len(bufs) != 3 || last.Name != bufs[1].Name+" (next page)" || last.Kind != memory.PreparedBuffer ||
			last.Layers != 8 || last.CapacityBytes != pageBytes || len(last.Regions) != 1 || last.Regions[0].Live() {
			t.Fatalf("Memory while prepared: %+v", bufs)
		}
		must(t, last.Check())
		creates := p.Creates
		register() // the last layer of page 1
		h := register()
		if h.Page() != 2 || h.Layer() != 0 || p.Taken != 1 || p.Prepared != 1 || p.Creates != creates {
			t.Fatalf("page 2: handle %v, %d taken, %d prepared, %d created", h, p.Taken, p.Prepared, p.Creates-creates)
		}
		pages := r.Pages()
		if got := pages[2].Desc().Label; !strings.Contains(got, "(made ahead)") {
			t.Fatalf("page 2's texture label %q", got)
		}
		if got := r.Memory()[2].Name; got != "a/bindless page 2 ("+rgba4.Normalized().String()+")" {
			t.Fatalf("page 2 in Memory: %q", got)
		}
		if st := r.Stats(); st.PreparedBytes != 0 {
			t.Fatalf("PreparedBytes %d after the take", st.PreparedBytes)
		}
		must(t, m.verify())

		// Page 2 fills to the fraction: page 3 is prepared; Shrink gives
		// it up with its bytes.
		for p.Prepared < 2 {
			register()
		}
		freed, err := r.Shrink()
		step("Shrink", err)
		if p.Dropped != 1 || freed < pageBytes || r.Stats().PreparedBytes != 0 {
			t.Fatalf("Shrink: %d dropped, %d bytes freed, PreparedBytes %d", p.Dropped, freed, r.Stats().PreparedBytes)
		}
		// The next registration prepares it again; page 3 takes it, and
		// with MaxPages (4) reached none is prepared after it.
		register()
		if p.Prepared != 3 {
			t.Fatalf("%d prepared after the Shrink's gave one up, want 3", p.Prepared)
		}
		for r.Stats().Pages < 4 {
			register()
		}
		if p.Taken != 2 {
			t.Fatalf("page 3: %d taken, want 2", p.Taken)
		}
		for range 7 {
			register()
		}
		if p.Prepared != 3 {
			t.Fatalf("prepared past MaxPages: %d", p.Prepared)
		}
		if _, err := r.Register("one too many", rgba4, pixels(rgba4, 0)); !errors.Is(err, bindless.ErrFull) {
			t.Fatalf("a full registry: %v", err)
		}
		must(t, m.verify())

		// A sized bucket prepares nothing.
		r2 := newRegistry(t, p, bindless.Options{Label: "s/", LayersPerPage: 4, MaxPages: 4, PageAhead: 0.5})
		before := p.Prepared
		for i := range 6 {
			if _, err := r2.RegisterSized(fmt.Sprint("s", i), bindless.Key{Format: device.RGBA8Unorm, Width: 5, Height: 3}, make([]byte, 5*3*4)); err != nil {
				t.Fatal(err)
			}
			must(t, bindless.Check(r2))
		}
		if p.Prepared != before {
			t.Fatalf("a sized bucket prepared %d pages", p.Prepared-before)
		}

		// Release gives a prepared page up.
		r3 := newRegistry(t, p, bindless.Options{Label: "r/", LayersPerPage: 4, MaxPages: 4, PageAhead: 0.5})
		for i := range 3 {
			if _, err := r3.Register(fmt.Sprint("r", i), rgba4, pixels(rgba4, i)); err != nil {
				t.Fatal(err)
			}
		}
		if p.Prepared != before+1 {
			t.Fatalf("%d prepared with 1 of 4 layers left at PageAhead 0.5, want 1", p.Prepared-before)
		}
		dropped := p.Dropped
		r3.Release()
		if p.Dropped != dropped+1 {
			t.Fatal("Release kept the prepared page")
		}
	})
}

// TestPageAheadDevice: over the backend itself, a page is made ahead
// (Stats.PreparedBytes) exactly where the device makes textures ahead
// (webgpu natively, not the host device nor the browser), and the page
// that takes it reads back intact.
func TestPageAheadDevice(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		r := newRegistry(t, dev, bindless.Options{LayersPerPage: 4, MaxPages: 4, PageAhead: 0.5})
		m := newModel(dev, r)
		for i := range 3 {
			_, err := m.register(fmt.Sprint("t", i), rgba4, i)
			must(t, err)
		}
		ahead := testdevice.PreparesTexturesAhead(dev)
		if got := r.Stats().PreparedBytes > 0; got != ahead {
			t.Fatalf("made ahead %v (%d bytes), the device makes textures ahead %v", got, r.Stats().PreparedBytes, ahead)
		}
		for i := 3; i < 6; i++ {
			_, err := m.register(fmt.Sprint("t", i), rgba4, i)
			must(t, err)
		}
		must(t, bindless.Check(r))
		must(t, m.verify())
	})
}

func TestPageAheadOptions(t *testing.T) {
	dev := testdevice.Backends()[0].Open(t)
	for _, f := range []float64{-0.1, 1, 2} {
		if _, err := bindless.New[string](dev, bindless.Options{PageAhead: f}); !errors.Is(err, bindless.ErrInvalidOptions) {
			t.Errorf("PageAhead %v: %v", f, err)
		}
	}
}
