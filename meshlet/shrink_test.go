package meshlet_test

import (
	"errors"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/budget"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/meshlet"
)

// TestShrinkAfterUnload loads 420 batches, removes 6 in 7 and sweeps a
// frame at a time with ShrinkBelow: within 400 frames both arenas have
// moved into smaller buffers and hold at most 1.15x the bytes the
// batches occupy (from several times that), every batch reads back word
// for word with its address words right, and the manager takes new
// batches after. Shrink then packs and shrinks again at once.
func TestShrinkAfterUnload(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		opts := meshlet.Options{RowWords: 4, AddressWord: 1,
			Data: arena.Options{InitialElems: 1 << 10}, Rows: arena.Options{InitialElems: 64},
			ShrinkBelow: 0.5, ShrinkAfter: 30}
		md := newModel(t, dev, opts, 19)
		md.light = true
		for range 420 {
			if _, err := md.add(uint32(16+md.r.IntN(400)), uint32(1+md.r.IntN(12))); err != nil {
				t.Fatal(err)
			}
		}
		md.verify("loaded")
		loaded := md.m.Stats()
		for i := len(md.live) - 1; i >= 0; i-- {
			if i%7 != 0 {
				md.remove(i)
			}
		}
		unloaded := md.m.Stats()
		if float64(unloaded.CapacityBytes) < 4*float64(unloaded.OccupiedBytes) {
			t.Fatalf("after the unload the arenas hold %d bytes for %d occupied: the test needs more slack", unloaded.CapacityBytes, unloaded.OccupiedBytes)
		}
		frames := 0
		for ; frames < 400; frames++ {
			md.sweep(arena.SweepLimits{})
			if st := md.m.Stats(); st.Data.Shrinks > 0 && st.Rows.Shrinks > 0 && float64(st.CapacityBytes) <= 1.15*float64(st.OccupiedBytes) {
				break
			}
		}
		st := md.m.Stats()
		t.Logf("loaded: %d capacity bytes for %d occupied; after unloading 6/7 (%d occupied) and %d frames: %d for %d (%.3fx), %d shrinks",
			loaded.CapacityBytes, loaded.OccupiedBytes, unloaded.OccupiedBytes, frames, st.CapacityBytes, st.OccupiedBytes,
			float64(st.CapacityBytes)/float64(st.OccupiedBytes), st.Shrinks)
		if frames == 400 {
			t.Fatalf("after 400 frames the arenas hold %d bytes for %d occupied (%+v)", st.CapacityBytes, st.OccupiedBytes, st)
		}
		if st.Shrinks != st.Data.Shrinks+st.Rows.Shrinks {
			t.Fatalf("Shrinks %d, the arenas' %d and %d", st.Shrinks, st.Data.Shrinks, st.Rows.Shrinks)
		}
		md.verify("shrunk")
		for range 20 {
			if _, err := md.add(uint32(16+md.r.IntN(400)), uint32(1+md.r.IntN(12))); err != nil {
				t.Fatal(err)
			}
		}
		md.verify("added after the shrink")
		// Shrink now: every batch removed but a few, packed and shrunk at
		// once, moved batches reported.
		for i := len(md.live) - 1; i >= 4; i-- {
			md.remove(i)
		}
		before := md.m.Stats().Shrinks
		md.start()
		freed, err := md.m.Shrink()
		if err != nil || freed == 0 {
			t.Fatalf("Shrink: %d bytes given back, %v", freed, err)
		}
		md.finish("shrink")
		if md.m.Stats().Shrinks == before {
			t.Fatalf("Shrink shrank nothing: %+v", md.m.Stats())
		}
		md.verify("Shrink")
	})
}

// TestShrinkReclaims: a manager that unloaded most of its batches gives
// its arenas' memory back through its budget reclaimer (Shrink) when
// another account's buffer would not fit; every batch stays intact.
func TestShrinkReclaims(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		b, err := budget.New(dev, budget.Options{Bytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		ma, err := b.Account("meshlets")
		if err != nil {
			t.Fatal(err)
		}
		own, err := b.Account("own")
		if err != nil {
			t.Fatal(err)
		}
		opts := meshlet.Options{RowWords: 4, Data: arena.Options{InitialElems: 1 << 10}, Rows: arena.Options{InitialElems: 64}}
		md := newModel(t, ma, opts, 20)
		md.dev = dev
		ma.SetReclaimer(md.m.Shrink)
		for range 300 {
			if _, err := md.add(uint32(64+md.r.IntN(400)), uint32(1+md.r.IntN(8))); err != nil {
				t.Fatal(err)
			}
		}
		for i := len(md.live) - 1; i >= 0; i-- {
			if i%8 != 0 {
				md.remove(i)
			}
		}
		before := b.Usage()
		room := before.Limit - before.Bytes
		buf, err := own.CreateBuffer(device.BufferDesc{Label: "big", Size: room + before.Bytes/2, Usage: device.Vertex | device.CopyDst})
		if err != nil {
			t.Fatalf("the buffer did not fit after the meshlet arenas shrank: %v (usage before %+v, stats %+v)", err, before, md.m.Stats())
		}
		defer buf.Release()
		u := b.Usage()
		if u.Reclaims != 1 || md.m.Stats().Shrinks == 0 {
			t.Fatalf("no reclaim: %+v, stats %+v", u, md.m.Stats())
		}
		t.Logf("meshlets %d -> %d bytes; %d reclaimed", before.Accounts[0].Bytes, u.Accounts[0].Bytes, u.Reclaimed)
		md.verify("reclaimed")
		if _, err := own.CreateBuffer(device.BufferDesc{Label: "more", Size: u.Limit, Usage: device.Vertex | device.CopyDst}); !errors.Is(err, budget.ErrOverBudget) {
			t.Fatalf("a request nothing makes room for: %v", err)
		}
		md.verify("refused")
	})
}
