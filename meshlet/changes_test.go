package meshlet_test

import (
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/meshlet"
)

// TestChanges: the arenas' growth is one Replaced each, a compaction a
// Moved per batch part moved (its handle, part and byte offsets, as
// Lookup says), Release a Released per buffer, and unread moves stop at
// the bound as one Overflowed.
func TestChanges(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		opts := meshlet.Options{RowWords: 4, Data: arena.Options{InitialElems: 64}, Rows: arena.Options{InitialElems: 16}}
		m, err := meshlet.New(dev, opts)
		if err != nil {
			t.Fatal(err)
		}
		add := func() meshlet.BatchHandle {
			h, err := m.Add(make([]uint32, 8), make([]uint32, 4*2))
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		var hs []meshlet.BatchHandle
		for range 40 {
			hs = append(hs, add())
		}
		cs := m.Changes(nil)
		if len(cs) != 2 || cs[0].Kind != memory.Replaced || cs[1].Kind != memory.Replaced {
			t.Fatalf("after growth: %+v, want a Replaced per arena", cs)
		}
		for i := 0; i < len(hs)-1; i += 2 {
			if err := m.Remove(hs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Compact(); err != nil {
			t.Fatal(err)
		}
		cs = m.Changes(cs[:0])
		if len(cs) == 0 {
			t.Fatal("a compaction after removing every other batch moved nothing")
		}
		for _, c := range cs {
			p, err := m.Lookup(meshlet.HandleOf(c))
			want := uint64(p.DataOffset) * 4
			if c.Part == meshlet.PartRows {
				want = uint64(p.RowOffset) * 16
			}
			if err != nil || c.Kind != memory.Moved || c.ToBytes != want || c.FromBytes <= c.ToBytes {
				t.Errorf("change %+v: placement %+v (%v)", c, p, err)
			}
		}
		m.Release()
		if cs := m.Changes(cs[:0]); len(cs) != 2 || cs[0].Kind != memory.Released || cs[1].Kind != memory.Released {
			t.Errorf("after Release: %+v, want a Released per arena", cs)
		}
	})
	dev := testdevice.Host(t, host.Options{})
	m, err := meshlet.New(dev, meshlet.Options{RowWords: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	n := memory.MaxPendingChanges
	hs := make([]meshlet.BatchHandle, 2*n)
	for i := range hs {
		if hs[i], err = m.Add(make([]uint32, 4), make([]uint32, 4)); err != nil {
			t.Fatal(err)
		}
	}
	m.Changes(nil)
	for i := 0; i < len(hs); i += 2 {
		_ = m.Remove(hs[i])
	}
	if err := m.Compact(); err != nil {
		t.Fatal(err)
	}
	if cs := m.Changes(nil); len(cs) != 1 || cs[0].Kind != memory.Overflowed {
		t.Fatalf("%d moves unread: %d changes, want one Overflowed", 2*n, len(cs))
	}
}
