package draw_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/draw"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
)

// TestGrowth tracks more meshes than the table's first buffer holds, a
// few hundred a frame as a streaming renderer does, with the slabs
// growing and sweeping under them and meshes tracked before the Apply
// that reports their slab's growth.
func TestGrowth(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		meshes, tab := newTable(t, dev, mesh.Options{MinSlabBytes: 4 << 10}, "growth")
		r := rand.New(rand.NewPCG(1, 2))
		var ids []draw.ID
		var hs []mesh.Handle
		var cs []memory.Change
		for frame := range 12 {
			for range 300 {
				h, err := meshes.Add(drawable(r, 1+r.IntN(8)))
				if err != nil {
					t.Fatal(err)
				}
				hs = append(hs, h)
			}
			// Remove a tenth: holes for the sweep.
			for k := 0; k < len(ids); k += 10 {
				if ids[k] == (draw.ID{}) {
					continue
				}
				if err := errors.Join(tab.Remove(ids[k]), meshes.Remove(hs[k])); err != nil {
					t.Fatal(err)
				}
				ids[k] = draw.ID{}
			}
			if err := meshes.Flush(); err != nil {
				t.Fatal(err)
			}
			for _, h := range hs[len(ids):] {
				id, err := tab.Track(h, mesh.Uint16)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			if err := meshes.Sweep(arena.SweepLimits{Moves: 100}); err != nil {
				t.Fatal(err)
			}
			if frame%3 == 1 {
				if err := meshes.Compact(); err != nil {
					t.Fatal(err)
				}
			}
			cs = meshes.Changes(cs[:0])
			if err := tab.Apply(cs); err != nil {
				t.Fatal(err)
			}
			if err := tab.Check(); err != nil {
				t.Fatalf("frame %d: %v", frame, err)
			}
		}
		st := tab.Stats()
		t.Logf("%+v", st)
		if st.Growths == 0 || st.Patched == 0 {
			t.Fatalf("the table did not grow and patch: %+v", st)
		}
	})
}

// TestErrors: bad input is an error, never a panic.
func TestErrors(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	meshes, err := mesh.New(dev, mesh.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer meshes.Release()
	if _, err := draw.NewTable(nil, meshes, ""); !errors.Is(err, draw.ErrInvalidOptions) {
		t.Errorf("NewTable without a device: %v", err)
	}
	if _, err := draw.NewTable(dev, nil, ""); !errors.Is(err, draw.ErrInvalidOptions) {
		t.Errorf("NewTable without meshes: %v", err)
	}
	tab, err := draw.NewTable(dev, meshes, "errors")
	if err != nil {
		t.Fatal(err)
	}
	other, err := draw.NewTable(dev, meshes, "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := draw.NewList(tab, 0); !errors.Is(err, draw.ErrInvalidOptions) {
		t.Errorf("NewList of 0: %v", err)
	}
	list, err := draw.NewList(tab, 2)
	if err != nil {
		t.Fatal(err)
	}
	staged, _ := meshes.Add(mesh.Mesh{VertexStride: 4, Vertices: make([]byte, 12), IndexFormat: mesh.Uint16, Indices: make([]byte, 6)})
	if _, err := tab.Track(staged, mesh.Uint16); !errors.Is(err, mesh.ErrNotResident) {
		t.Errorf("track of a staged mesh: %v", err)
	}
	if err := meshes.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Track(staged, 3); !errors.Is(err, draw.ErrInvalidFormat) {
		t.Errorf("track with format 3: %v", err)
	}
	if _, err := tab.Track(mesh.Handle{}, mesh.Uint16); !errors.Is(err, mesh.ErrInvalidHandle) {
		t.Errorf("track of the zero handle: %v", err)
	}
	id, err := tab.Track(staged, mesh.Uint16)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []draw.ID{{}, draw.TrackedIDs(tab)[0]} {
		if bad != (draw.ID{}) {
			if _, _, err := other.Record(bad); !errors.Is(err, draw.ErrInvalidID) {
				t.Errorf("record of another table's id: %v", err)
			}
			continue
		}
		if err := list.Add(bad, 1, 0); !errors.Is(err, draw.ErrInvalidID) {
			t.Errorf("add of the zero id: %v", err)
		}
		if err := tab.Remove(bad); !errors.Is(err, draw.ErrInvalidID) {
			t.Errorf("remove of the zero id: %v", err)
		}
	}
	for range 2 {
		if err := list.Add(id, 1, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := list.Add(id, 1, 0); !errors.Is(err, draw.ErrFull) {
		t.Errorf("add past the list's bound: %v", err)
	}
	// A mesh removed from the allocator but not the table is stale.
	if err := meshes.Remove(staged); err != nil {
		t.Fatal(err)
	}
	if err := tab.Apply([]memory.Change{{Kind: memory.Overflowed}}); !errors.Is(err, draw.ErrStale) {
		t.Errorf("apply over a removed mesh: %v", err)
	}
	// A removed id is refused by Pack too, packed before or not.
	if _, err := list.Pack(); err != nil {
		t.Fatalf("pack: %v", err)
	}
	if err := tab.Remove(id); err != nil {
		t.Fatal(err)
	}
	if _, err := list.Pack(); !errors.Is(err, draw.ErrInvalidID) {
		t.Errorf("pack of a removed id: %v", err)
	}
	tab.Release()
	tab.Release()
	if err := tab.Apply(nil); !errors.Is(err, device.ErrReleased) {
		t.Errorf("apply after release: %v", err)
	}
	other.Release()
}

// TestListVersion: a list's Version moves with every change that can
// alter what Pack returns, and only then; a Pack at the same version
// returns the spans it returned, and one after a slab's growth (its
// buffer replaced under the group) returns the groups' new buffers.
func TestListVersion(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		meshes, tab := newTable(t, dev, mesh.Options{MinSlabBytes: 4 << 10}, "version")
		r := rand.New(rand.NewPCG(3, 4))
		var cs []memory.Change
		replaced := false
		// add places n meshes, tracks them where track is set, and
		// applies the changes.
		add := func(n int, track bool) []draw.ID {
			t.Helper()
			var hs []mesh.Handle
			for range n {
				h, err := meshes.Add(drawable(r, 1+r.IntN(4)))
				if err != nil {
					t.Fatal(err)
				}
				hs = append(hs, h)
			}
			if err := meshes.Flush(); err != nil {
				t.Fatal(err)
			}
			var ids []draw.ID
			for _, h := range hs {
				if !track {
					continue
				}
				id, err := tab.Track(h, mesh.Uint16)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			cs = meshes.Changes(cs[:0])
			for _, c := range cs {
				replaced = replaced || c.Kind == memory.Replaced
			}
			if err := tab.Apply(cs); err != nil {
				t.Fatal(err)
			}
			return ids
		}
		ids := add(40, true)
		bySlot := map[uint32]draw.ID{}
		for _, id := range ids {
			bySlot[id.Slot()] = id
		}
		list, err := draw.NewList(tab, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for k, id := range ids {
			if err := list.Add(id, 1, uint32(k)); err != nil {
				t.Fatal(err)
			}
		}
		// check packs the list and compares every span's group with the
		// records of its draws.
		check := func(what string) []draw.Span {
			t.Helper()
			spans, err := list.Pack()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			draws := list.Draws()
			for _, s := range spans {
				for _, d := range draws[s.First : s.First+s.Count] {
					_, g, err := tab.Record(bySlot[d.Slot])
					if err != nil {
						t.Fatal(err)
					}
					if g != s.Group {
						t.Fatalf("%s: a draw of slot %d in span %v, its record in %v", what, d.Slot, s.Group, g)
					}
				}
			}
			return spans
		}
		v := list.Version()
		check("first")
		if list.Version() != v {
			t.Fatal("Pack changed the version")
		}
		if err := tab.Apply(nil); err != nil {
			t.Fatal(err)
		}
		if list.Version() != v {
			t.Fatal("an Apply with nothing to do changed the version")
		}
		// Growth, of untracked meshes: the slabs' buffers are replaced
		// under the groups, and only Apply tells.
		replaced = false
		add(400, false)
		if !replaced {
			t.Fatal("no slab grew")
		}
		if list.Version() == v {
			t.Fatal("an Apply of growth left the version")
		}
		check("after growth")
		more := add(1, true)
		v = list.Version()
		if err := tab.Remove(more[0]); err != nil {
			t.Fatal(err)
		}
		if list.Version() == v {
			t.Fatal("Remove left the version")
		}
		v = list.Version()
		list.Reset()
		if list.Version() == v {
			t.Fatal("Reset left the version")
		}
		v = list.Version()
		if err := list.Add(ids[0], 1, 0); err != nil {
			t.Fatal(err)
		}
		if list.Version() == v {
			t.Fatal("Add left the version")
		}
		// A list filled across table changes: draws added before a Track
		// and after it pack by their records' groups at the Pack, and
		// one whose mesh was removed after its Add is refused.
		for _, id := range ids[1:20] {
			if err := list.Add(id, 1, 0); err != nil {
				t.Fatal(err)
			}
		}
		late := add(30, true)
		for _, id := range append(ids[20:], late...) {
			bySlot[id.Slot()] = id
			if err := list.Add(id, 1, 0); err != nil {
				t.Fatal(err)
			}
		}
		check("added across a Track")
		if err := tab.Remove(late[3]); err != nil {
			t.Fatal(err)
		}
		if _, err := list.Pack(); !errors.Is(err, draw.ErrInvalidID) {
			t.Fatalf("Pack of a removed mesh's draw: %v", err)
		}
		list.Reset()
		for _, id := range ids {
			if err := list.Add(id, 1, 0); err != nil {
				t.Fatal(err)
			}
		}
		check("filled again")
		// Filled again alike, the list keeps its version; filled with a
		// draw changed, left out or added, it does not.
		v = list.Version()
		refill := func(what string, n int, instances uint32, same bool) {
			t.Helper()
			list.Reset()
			for k := range n {
				if err := list.Add(ids[k%len(ids)], instances, 0); err != nil {
					t.Fatal(err)
				}
			}
			if now := list.Version(); (now == v) != same {
				t.Fatalf("%s: version %d after %d, want it kept %v", what, now, v, same)
			}
			v = list.Version()
		}
		refill("alike", len(ids), 1, true)
		refill("another instance count", len(ids), 2, false)
		refill("alike again", len(ids), 2, true)
		refill("one draw fewer", len(ids)-1, 2, false)
		refill("one draw more", len(ids), 2, false)
		if err := list.Add(draw.ID{}, 1, 0); err == nil {
			t.Fatal("Add of the zero ID: no error")
		}
		if list.Version() != v {
			t.Fatal("a failed Add changed the version")
		}
	})
}

// TestListVersionNamesDraws fills a list at random, drawing from a few
// meshes with a few instance counts so that refills often repeat, and
// checks at every Version that a version returned before names the same
// draws as then, and that refills alike keep it.
func TestListVersionNamesDraws(t *testing.T) {
	dev := testdevice.Backends()[0].Open(t)
	meshes, tab := newTable(t, dev, mesh.Options{}, "names")
	var ids []draw.ID
	for range 3 {
		h, err := meshes.Add(drawable(rand.New(rand.NewPCG(1, 1)), 2))
		if err != nil {
			t.Fatal(err)
		}
		if err := meshes.Flush(); err != nil {
			t.Fatal(err)
		}
		id, err := tab.Track(h, mesh.Uint16)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := tab.Apply(meshes.Changes(nil)); err != nil {
		t.Fatal(err)
	}
	list, err := draw.NewList(tab, 8)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct{ id, instances int }
	var model []entry
	named := map[uint64][]entry{}
	last, reset, kept := uint64(0), false, 0
	r := rand.New(rand.NewPCG(5, 6))
	for op := range 20000 {
		switch r.IntN(6) {
		case 0:
			list.Reset()
			model, reset = model[:0], true
		case 1, 2, 3:
			e := entry{r.IntN(len(ids)), r.IntN(2)}
			err := list.Add(ids[e.id], uint32(e.instances), 0)
			if len(model) == 8 {
				if !errors.Is(err, draw.ErrFull) {
					t.Fatalf("op %d: Add to a full list: %v", op, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			model = append(model, e)
		default:
			v := list.Version()
			if v < last {
				t.Fatalf("op %d: version %d after %d", op, v, last)
			}
			if v == last && reset {
				kept++
			}
			last, reset = v, false
			if was, ok := named[v]; ok && !slices.Equal(was, model) {
				t.Fatalf("op %d: version %d named %v, now %v", op, v, was, model)
			}
			named[v] = slices.Clone(model)
		}
	}
	if kept < 50 {
		t.Fatalf("a version kept across a Reset %d times in 20,000 operations", kept)
	}
}
