package arena_test

import (
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/memory"
)

// TestChanges: growth is one Replaced (coalesced over two growths), a
// compaction one Moved per allocation moved (coalesced over two moves,
// with its owner and its byte offsets), a freed allocation's move is
// dropped, Release is a Released, and the list stays within the bound.
func TestChanges(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		a, err := arena.New(dev, arena.Options{ElemSize: 16, InitialElems: 8, Fragmented: arena.CompactAlways})
		if err != nil {
			t.Fatal(err)
		}
		first := a.Buffer()
		var hs []arena.Handle
		for i := range 40 { // grows more than once
			h, err := a.AllocateOwned(2, uint64(100+i))
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs, h)
		}
		cs := a.Changes(nil)
		if len(cs) != 1 || cs[0].Kind != memory.Replaced || cs[0].Old != first || cs[0].Buffer != a.Buffer() {
			t.Fatalf("after growths: %+v, want one Replaced from the first buffer to the current", cs)
		}
		// Free every other allocation but the last, compact twice: the
		// survivors move once each, and the second compaction moves none.
		for i := 0; i < len(hs)-1; i += 2 {
			if err := a.Free(hs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.Compact(); err != nil {
			t.Fatal(err)
		}
		if err := a.Free(hs[len(hs)-1]); err != nil { // moved, then freed: not reported
			t.Fatal(err)
		}
		if _, err := a.Compact(); err != nil {
			t.Fatal(err)
		}
		cs = a.Changes(cs[:0])
		if len(cs) != len(hs)/2-1 {
			t.Fatalf("after compactions: %d changes, want %d moves", len(cs), len(hs)/2-1)
		}
		for _, c := range cs {
			h := hs[c.Owner-100]
			off, err := a.Offset(h)
			if err != nil || c.Kind != memory.Moved || c.Buffer != a.Buffer() || c.ToBytes != uint64(off)*16 ||
				c.SizeBytes != 32 || c.FromBytes != uint64(c.Owner-100)*32 {
				t.Errorf("move %+v: offset %d (%v)", c, off, err)
			}
		}
		if cs := a.Changes(cs[:0]); len(cs) != 0 {
			t.Errorf("nothing changed, yet %+v", cs)
		}
		buf := a.Buffer()
		a.Release()
		if cs := a.Changes(cs[:0]); len(cs) != 1 || cs[0].Kind != memory.Released || cs[0].Old != buf {
			t.Errorf("after Release: %+v", cs)
		}
	})
}

// TestChangesBound: an arena whose changes nobody reads holds at most
// memory.MaxPendingChanges of them, then reports one Overflowed.
func TestChangesBound(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		n := memory.MaxPendingChanges + 100
		a, err := arena.New(dev, arena.Options{ElemSize: 4, InitialElems: uint32(2 * n), MaxAllocs: uint32(2*n + 8)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Release)
		hs := make([]arena.Handle, 2*n)
		for i := range hs {
			if hs[i], err = a.Allocate(1); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < len(hs); i += 2 {
			_ = a.Free(hs[i])
		}
		if _, err := a.Compact(); err != nil {
			t.Fatal(err)
		}
		cs := a.Changes(nil)
		if len(cs) != 1 || cs[0].Kind != memory.Overflowed {
			t.Fatalf("%d moves unread: %d changes (first %+v), want one Overflowed", n, len(cs), cs[0])
		}
	})
}
