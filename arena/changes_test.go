package arena_test

import (
	"math/rand/v2"
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

// TestChangesReplay: a consumer that knows each allocation's buffer and
// offset, and learns of changes only through Changes, asked at random
// between random allocations, frees, growths, sweeps and compactions,
// always ends knowing where every allocation is: each Moved starts where
// the consumer last knew the allocation to be, each Replaced names the
// buffer it last knew, and an allocation moves at most once a call.
func TestChangesReplay(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		a, err := arena.New(dev, arena.Options{ElemSize: 8, InitialElems: 64, Fragmented: arena.CompactAlways})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		type place struct {
			buf device.Buffer
			off uint64
		}
		r := rand.New(rand.NewPCG(3, 4))
		live := map[uint64]arena.Handle{} // by owner tag, unique per allocation
		known := map[uint64]place{}       // what the consumer knows
		var owners []uint64
		next := uint64(1)
		var cs []memory.Change
		for op := range 3000 {
			switch k := r.IntN(16); {
			case k < 7:
				h, err := a.AllocateOwned(1+r.Uint32N(12), next)
				if err != nil {
					t.Fatal(err)
				}
				off, err := a.Offset(h)
				if err != nil {
					t.Fatal(err)
				}
				live[next] = h
				known[next] = place{a.Buffer(), uint64(off) * 8} // its lookup
				owners = append(owners, next)
				next++
			case k < 12 && len(owners) > 0:
				i := r.IntN(len(owners))
				o := owners[i]
				owners[i] = owners[len(owners)-1]
				owners = owners[:len(owners)-1]
				if err := a.Free(live[o]); err != nil {
					t.Fatal(err)
				}
				delete(live, o)
				delete(known, o)
			case k < 14:
				if _, err := a.Sweep(arena.SweepLimits{Moves: 1 + r.IntN(4)}); err != nil {
					t.Fatal(err)
				}
			case k < 15:
				if _, err := a.Compact(); err != nil {
					t.Fatal(err)
				}
			default:
				cs = a.Changes(cs[:0])
				seen := map[uint64]bool{}
				for _, c := range cs {
					switch c.Kind {
					case memory.Replaced:
						for o, p := range known {
							if p.buf == c.Old {
								known[o] = place{c.Buffer, p.off}
							}
						}
					case memory.Moved:
						p, ok := known[c.Owner]
						if !ok || seen[c.Owner] || p.buf != c.Old || p.off != c.FromBytes {
							t.Fatalf("op %d: %+v: the consumer knew %+v (live %v, moved twice %v)", op, c, p, ok, seen[c.Owner])
						}
						seen[c.Owner] = true
						known[c.Owner] = place{c.Buffer, c.ToBytes}
					default:
						t.Fatalf("op %d: unexpected %+v", op, c)
					}
				}
				for o, h := range live {
					off, err := a.Offset(h)
					if err != nil {
						t.Fatal(err)
					}
					now := place{a.Buffer(), uint64(off) * 8}
					if p := known[o]; p != now {
						t.Fatalf("op %d: allocation %d is at %+v, the consumer thinks %+v", op, o, now, p)
					}
				}
			}
		}
	})
}
