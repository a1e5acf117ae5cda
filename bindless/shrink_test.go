package bindless_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// TestShrink empties a page in the middle and one at the end, releases
// them, and fills the middle one again, on every backend: the bytes
// returned are the two pages', the middle page is vacant at its index
// (nil in Pages, absent from Memory) and recreated there before any page
// is added, the last one is dropped, Version follows Pages, and every
// live texture reads back as written at each step.
func TestShrink(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		r := newRegistry(t, dev, bindless.Options{Label: "t/", LayersPerPage: 4})
		m := newModel(dev, r)
		reg := func(id string, key bindless.Key, want string) {
			t.Helper()
			h, err := m.register(id, key, len(m.want)+1)
			must(t, err)
			if want != "" && h.String() != want {
				t.Fatalf("%s: handle %v, want %v", id, h, want)
			}
		}
		for i := range 12 {
			reg(fmt.Sprint("a", i), rgba8, "") // pages 1, 2, 3
		}
		for i := range 3 {
			reg(fmt.Sprint("x", i), r32x2, "") // page 4, too full to trim
		}
		must(t, m.verify())
		if r.NumPages() != 5 {
			t.Fatalf("%d pages, want 5", r.NumPages())
		}
		pages, version := r.Pages(), r.Version()
		if freed, err := r.Shrink(); err != nil || freed != 0 || r.Version() != version {
			t.Fatalf("Shrink with every page in use: %d bytes, %v, version %d -> %d", freed, err, version, r.Version())
		}
		for i := 4; i < 8; i++ { // page 2
			must(t, m.unregister(fmt.Sprint("a", i)))
		}
		for i := range 3 {
			must(t, m.unregister(fmt.Sprint("x", i)))
		}
		freed, err := r.Shrink()
		must(t, err)
		want := 4*8*8*4 + 4*2*2*4 // four layers of 8x8 RGBA8, four of 2x2 R32Float
		if freed != uint64(want) {
			t.Fatalf("Shrink freed %d bytes, want %d", freed, want)
		}
		now := r.Pages()
		if len(now) != 4 || now[2] != nil || now[1] != pages[1] || now[3] != pages[3] || r.Version() == version {
			t.Fatalf("after Shrink: pages %v (were %v), version %d (was %d)", now, pages, r.Version(), version)
		}
		st := r.Stats()
		if st.Pages != 4 || st.Vacant != 1 || st.PagesReleased != 2 || st.BytesReleased != uint64(want) || st.Layers != 12 || st.FreeLayers != 0 || st.Buckets != 2 {
			t.Fatalf("Stats after Shrink: %+v", st)
		}
		var names []string
		for _, b := range r.Memory() {
			names = append(names, b.Name)
		}
		if got := strings.Join(names, ", "); strings.Contains(got, "page 2") || len(names) != 3 {
			t.Fatalf("Memory after Shrink shows %s", got)
		}
		must(t, m.verify())
		// The vacant page is recreated at its index before any page is
		// added, first refused once (nothing changes), then made.
		version = r.Version()
		if h, ok := dev.(*host.Device); ok {
			h.FailNextCreates(1)
			if _, err := r.Register("b0", rgba8, pixels(rgba8, 50)); !errors.Is(err, bindless.ErrFull) {
				t.Fatalf("Register with the page refused: %v", err)
			}
			h.FailNextCreates(0)
			if r.Version() != version || r.Pages()[2] != nil || r.Stats() != st {
				t.Fatalf("a refused recreation changed the registry: %+v", r.Stats())
			}
		}
		for i := range 4 {
			reg(fmt.Sprint("b", i), rgba8, fmt.Sprint("2:", i))
		}
		if r.Pages()[2] == nil || r.Version() == version || r.Stats().Vacant != 0 {
			t.Fatalf("page 2 not recreated: %+v", r.Stats())
		}
		if d := r.Pages()[2].Desc(); !strings.Contains(d.Label, "page 2 ") {
			t.Fatalf("recreated page 2 is labelled %q", d.Label)
		}
		reg("b4", rgba8, "4:0") // a new page, where the dropped one was
		reg("x3", r32x2, "5:0") // the R32Float bucket's page was dropped
		must(t, m.verify())
		if _, err := r.Shrink(); err != nil {
			t.Fatal(err)
		}
		must(t, m.verify())
		r.Release()
		if _, err := r.Shrink(); !errors.Is(err, device.ErrReleased) {
			t.Fatalf("Shrink after Release: %v", err)
		}
	})
}
