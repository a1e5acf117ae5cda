package arena_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
)

// owners checks that every report of an arena names the owner each
// allocation was given: Owner, Regions, and the moves of OnMove, Sweep and
// Compact.
type owners struct {
	t     *testing.T
	a     *arena.Arena
	want  map[arena.Handle]uint64
	moves int // moves OnMove reported
}

// onMove is the arena's Options.OnMove.
func (o *owners) onMove(m arena.Move) {
	o.t.Helper()
	o.moves++
	if w, ok := o.want[m.Handle]; !ok || m.Owner != w {
		o.t.Errorf("OnMove %+v: owner %#x, want %#x (live %v)", m, m.Owner, w, ok)
	}
}

// check checks moves (a Sweep's or Compact's list), Owner and Regions.
func (o *owners) check(when string, moves []arena.Move) {
	o.t.Helper()
	for _, m := range moves {
		if w := o.want[m.Handle]; m.Owner != w {
			o.t.Errorf("%s: move %+v: owner %#x, want %#x", when, m, m.Owner, w)
		}
	}
	for h, w := range o.want {
		if got, err := o.a.Owner(h); err != nil || got != w {
			o.t.Errorf("%s: Owner(%v) = %#x, %v; want %#x", when, h, got, err, w)
		}
	}
	n := 0
	for r := range o.a.Regions() {
		if !r.Used() {
			if r.Owner != 0 {
				o.t.Errorf("%s: free region %+v has an owner", when, r)
			}
			continue
		}
		n++
		if w, ok := o.want[r.Handle]; !ok || r.Owner != w {
			o.t.Errorf("%s: region %+v: owner %#x, want %#x (live %v)", when, r, r.Owner, w, ok)
		}
	}
	if n != len(o.want) || o.a.Len() != len(o.want) {
		o.t.Errorf("%s: %d regions used, Len %d, %d live", when, n, o.a.Len(), len(o.want))
	}
}

// TestOwners: the owner given at AllocateOwned comes back from Owner,
// Regions and every move, through growth, fragmentation refusals (a sweep
// armed, then a full compaction), budgeted sweeps and Compact, including
// owners that are 0, equal for two allocations, and use all 64 bits.
func TestOwners(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		o := &owners{t: t, want: map[arena.Handle]uint64{}}
		a, err := arena.New(dev, arena.Options{InitialElems: 64, MaxAllocs: 4096, GrowthFactor: 1.5, SweepLimits: arena.SweepLimits{Moves: 3}, OnMove: o.onMove})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		o.a = a
		r := rand.New(rand.NewPCG(17, 1))
		var live []arena.Handle
		owner := func(i int) uint64 {
			switch i % 4 {
			case 0:
				return 0
			case 1:
				return 7 // shared by many
			}
			return uint64(i)<<40 | uint64(i)*0x9E37_79B9 | 1<<63
		}
		for i := range 600 {
			if len(live) > 0 && r.IntN(3) == 0 {
				k := r.IntN(len(live))
				if err := a.Free(live[k]); err != nil {
					t.Fatal(err)
				}
				delete(o.want, live[k])
				live = append(live[:k], live[k+1:]...)
			}
			w := owner(i)
			var h arena.Handle
			if w == 0 && i%8 == 0 {
				h, err = a.Allocate(1 + r.Uint32N(40))
			} else {
				h, err = a.AllocateOwned(1+r.Uint32N(40), w)
			}
			if err != nil {
				t.Fatal(err)
			}
			o.want[h] = w
			live = append(live, h)
			if i%37 == 0 {
				moves, err := a.Sweep(arena.SweepLimits{})
				if err != nil {
					t.Fatal(err)
				}
				o.check(fmt.Sprintf("sweep %d", i), moves)
			}
			if i%150 == 149 {
				moves, err := a.Compact()
				if err != nil {
					t.Fatal(err)
				}
				o.check(fmt.Sprintf("compact %d", i), moves)
			}
		}
		o.check("end", nil)
		// Room in pieces: pack, fill the tail, free every other
		// allocation; requests larger than any hole are fragmentation
		// refusals (a sweep armed, then a full compaction).
		moves, err := a.Compact()
		if err != nil {
			t.Fatal(err)
		}
		o.check("pack", moves)
		var filler []arena.Handle
		before := a.Stats()
		for a.Stats().LargestFreeElems >= 16 { // 16 is its own bin: served as it is
			h, err := a.AllocateOwned(16, 99)
			if err != nil {
				t.Fatal(err)
			}
			o.want[h] = 99
			filler = append(filler, h)
		}
		if st := a.Stats(); st.Refusals != before.Refusals {
			t.Errorf("allocations a free region served were refused: %+v", st)
		}
		kept := live[:0]
		for i, h := range live {
			if i%2 == 0 {
				kept = append(kept, h)
				continue
			}
			must(t, a.Free(h))
			delete(o.want, h)
		}
		live = append(kept, filler...)
		for i := 0; i < 20 && a.Stats().FullCompactions < 6; i++ {
			h, err := a.AllocateOwned(120, uint64(1000+i))
			if err != nil {
				t.Fatal(err)
			}
			o.want[h] = uint64(1000 + i)
			live = append(live, h)
			o.check(fmt.Sprintf("refusal %d", i), nil)
		}
		st := a.Stats()
		if st.Growths == 0 || st.FragmentedRefusals == 0 || st.SweepsArmed == 0 || st.FullCompactions < 6 || o.moves == 0 || st.Moves != uint64(o.moves) {
			t.Errorf("stats %+v, %d moves reported: want growth, sweeps, compactions and moves all exercised", st, o.moves)
		}
		for _, h := range live[:len(live)/2] {
			if err := a.Free(h); err != nil {
				t.Fatal(err)
			}
			delete(o.want, h)
			if _, err := a.Owner(h); !errors.Is(err, arena.ErrInvalidHandle) {
				t.Errorf("Owner of a freed handle: %v, want ErrInvalidHandle", err)
			}
		}
		o.check("after frees", nil)
		if _, err := a.Owner(arena.Handle{}); !errors.Is(err, arena.ErrInvalidHandle) {
			t.Errorf("Owner of the zero handle: %v", err)
		}
		a.Release()
		if _, err := a.Owner(live[len(live)-1]); !errors.Is(err, device.ErrReleased) {
			t.Errorf("Owner after Release: %v", err)
		}
		if _, err := a.AllocateOwned(1, 1); !errors.Is(err, device.ErrReleased) {
			t.Errorf("AllocateOwned after Release: %v", err)
		}
		if n := a.Len(); n != 0 {
			t.Errorf("Len after Release: %d", n)
		}
	})
}

// TestRoundUp: RoundUp is the bin bound Place rounds requests to.
func TestRoundUp(t *testing.T) {
	for _, tc := range []struct {
		in, want uint32
		ok       bool
	}{
		{0, 0, true}, {1, 1, true}, {8, 8, true}, {17, 18, true}, {100, 104, true},
		{arena.MaxRoundUp, arena.MaxRoundUp, true}, {arena.MaxRoundUp + 1, 0, false},
	} {
		if got, ok := arena.RoundUp(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("RoundUp(%d) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
