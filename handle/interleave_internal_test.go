package handle

import (
	"fmt"
	"slices"
	"testing"
)

// Exhaustive interleaving: a scenario's actors (the owner and remote
// allocators, one goroutine each) run one at a time, and every call to
// shared.step (made before each access to shared memory on the pop, fresh
// and flush paths) is a point where the explorer may switch to another
// actor. The explorer runs the scenario once per order of those accesses,
// depth first, replaying a prefix of choices and trying the next
// alternative at the deepest point that has one, so every interleaving at
// the granularity of shared accesses is checked (a run of slot reads or
// writes counts as one access: see shared.step).

// scenario builds a fresh owner with no step set, the actors to run and a
// check of the outcome.
type scenario func() (o *Owner, actors []func(), check func() error)

// explore runs sc under every interleaving and returns how many it ran.
func explore(t *testing.T, sc scenario) int {
	t.Helper()
	var prefix []int
	for runs := 1; ; runs++ {
		if runs > 2_000_000 {
			t.Fatalf("more than 2,000,000 interleavings: prefix %v", prefix)
		}
		o, actors, check := sc()
		events := make(chan chan struct{})
		o.sh.step = func() {
			resume := make(chan struct{})
			events <- resume
			<-resume
		}
		// Each actor runs to its first step (or its end) before the next
		// starts.
		parked := make([]chan struct{}, len(actors))
		for a, f := range actors {
			go func() { f(); events <- nil }()
			parked[a] = <-events
		}
		var chosen []int
		var options [][]int
		for {
			var enabled []int
			for a, p := range parked {
				if p != nil {
					enabled = append(enabled, a)
				}
			}
			if len(enabled) == 0 {
				break
			}
			c := enabled[0]
			if d := len(chosen); d < len(prefix) {
				c = prefix[d]
			}
			chosen = append(chosen, c)
			options = append(options, enabled)
			close(parked[c])
			parked[c] = <-events
		}
		o.sh.step = nil
		if err := check(); err != nil {
			t.Fatalf("schedule %v: %v", chosen, err)
		}
		// Backtrack: the deepest choice with an untried alternative.
		prefix = nil
		for d := len(chosen) - 1; d >= 0 && prefix == nil; d-- {
			k := slices.Index(options[d], chosen[d])
			if k+1 < len(options[d]) {
				prefix = append(slices.Clone(chosen[:d]), options[d][k+1])
			}
		}
		if prefix == nil {
			return runs
		}
	}
}

// audit checks that every issued index is in exactly one place: live (one
// of live), buffered in the owner, or on the shared list; that the live
// handles are live; and that Stats agrees.
func audit(o *Owner, live []Handle) error {
	issued := o.sh.issued()
	where := make([]string, issued+1)
	put := func(i uint32, place string) error {
		if i == 0 || uint64(i) > issued {
			return fmt.Errorf("%s holds index %d, issued %d", place, i, issued)
		}
		if where[i] != "" {
			return fmt.Errorf("index %d both %s and %s", i, where[i], place)
		}
		where[i] = place
		return nil
	}
	for _, h := range live {
		if !o.Live(h) {
			return fmt.Errorf("%v not live", h)
		}
		if err := put(h.Index(), "live"); err != nil {
			return err
		}
	}
	// A freed Handle waiting for reuse carries the generation its index
	// has now: the one it will be handed out with.
	waiting := func(h Handle, place string) error {
		if !o.Live(h) {
			return fmt.Errorf("%s holds %v, not the generation of its index", place, h)
		}
		return put(h.Index(), place)
	}
	for _, h := range o.local[:o.n] {
		if err := waiting(h, "buffered"); err != nil {
			return err
		}
	}
	for i := range o.sh.stripes {
		st := &o.sh.stripes[i]
		head, tail := positions(st.word.Load())
		for p := head; p != tail; p++ {
			if err := waiting(st.ring.Load().load(p), fmt.Sprintf("stripe %d", i)); err != nil {
				return err
			}
		}
	}
	for i := uint64(1); i <= issued; i++ {
		if where[i] == "" {
			return fmt.Errorf("index %d lost", i)
		}
	}
	if st := o.Stats(); st.Live != uint64(len(live)) || st.Retired != 0 {
		return fmt.Errorf("stats %+v with %d live", st, len(live))
	}
	return nil
}

// setup returns an owner with the given stripes that has issued n indices
// and freed those in shared (flushed) and then those in buffered, with the
// live rest. Remotes made before the call (remotes of them) spread the
// flush over that many stripes.
func setup(stripes, remotes, n int, shared, buffered []int) (*Owner, []Handle) {
	return setupRing(minRing, stripes, remotes, n, shared, buffered)
}

// setupRing is setup with stripes whose first ring has ring slots.
func setupRing(ring uint64, stripes, remotes, n int, shared, buffered []int) (*Owner, []Handle) {
	o := newOwner(stripes)
	o.sh.ringMin = ring
	for range remotes {
		o.Remote()
	}
	hs := make([]Handle, n+1)
	for i := 1; i <= n; i++ {
		hs[i], _ = o.Allocate()
	}
	for _, i := range shared {
		o.Free(hs[i])
		hs[i] = 0
	}
	o.Flush()
	for _, i := range buffered {
		o.Free(hs[i])
		hs[i] = 0
	}
	var live []Handle
	for _, h := range hs {
		if h != 0 {
			live = append(live, h)
		}
	}
	return o, live
}

func TestInterleavings(t *testing.T) {
	// collect returns an actor's result slots and the check that gathers
	// them with the live handles before.
	type result struct {
		hs  []Handle
		err error
	}
	finish := func(o *Owner, before []Handle, rs []*result, freed ...Handle) func() error {
		return func() error {
			live := slices.Clone(before)
			for _, r := range rs {
				if r.err != nil {
					return r.err
				}
				live = append(live, r.hs...)
			}
			live = slices.DeleteFunc(live, func(h Handle) bool { return slices.Contains(freed, h) })
			return audit(o, live)
		}
	}
	alloc := func(r Remote, res *result) func() {
		return func() {
			h, err := r.Allocate()
			res.hs, res.err = []Handle{h}, err
		}
	}
	allocs := func(r Remote, n int, res *result) func() {
		return func() {
			for range n {
				h, err := r.Allocate()
				res.hs = append(res.hs, h)
				if err != nil {
					res.err = err
					return
				}
			}
		}
	}
	allocMany := func(n int, f func([]Handle) (int, error), res *result) func() {
		return func() {
			res.hs = make([]Handle, n)
			_, res.err = f(res.hs)
		}
	}
	cases := []struct {
		name  string
		sc    scenario
		large bool // skipped with -short and -race: 35,000 to 117,000 interleavings
	}{
		// The owner pops index 1, frees 3 and flushes it while a remote
		// pops: the remote's swap fails whenever the head or the tail
		// moved since it read the word. (Positions only grow, so no word
		// value comes back: the ABA case of a stack cannot arise.)
		{"owner pop, free, flush vs remote pop", func() (*Owner, []func(), func() error) {
			o, live := setup(1, 0, 3, []int{1, 2}, nil)
			var a, b result
			owner := func() {
				h, err := o.Allocate()
				a.hs, a.err = []Handle{h}, err
				if err == nil {
					a.err = o.Free(live[0])
				}
				o.Flush()
			}
			return o, []func(){owner, alloc(o.Remote(), &b)},
				finish(o, live, []*result{&a, &b}, live[0])
		}, false},
		// A flush races two pops: its swap fails, and it tries again with
		// its slots as they are.
		{"flush vs two remote pops", func() (*Owner, []func(), func() error) {
			o, live := setup(1, 0, 4, []int{1, 2}, []int{3})
			var b, c result
			return o, []func(){o.Flush, alloc(o.Remote(), &b), alloc(o.Remote(), &c)},
				finish(o, live, []*result{&b, &c})
		}, true},
		// A flush of two races a batch pop of two.
		{"flush vs remote batch", func() (*Owner, []func(), func() error) {
			o, live := setup(1, 0, 5, []int{1, 2}, []int{3, 4})
			var b result
			return o, []func(){o.Flush, allocMany(2, o.Remote().AllocMany, &b)},
				finish(o, live, []*result{&b})
		}, false},
		// The owner's batch pop races a remote pop over three entries, one
		// short of both: someone takes a fresh index.
		{"owner batch vs remote pop", func() (*Owner, []func(), func() error) {
			o, live := setup(1, 0, 4, []int{1, 2}, nil)
			var a, b result
			return o, []func(){allocMany(2, o.AllocMany, &a), alloc(o.Remote(), &b)},
				finish(o, live, []*result{&a, &b})
		}, false},
		// Two stripes, a Handle on each: the remote of stripe 0 takes its
		// own and then steals from stripe 1, racing the remote of stripe 1;
		// one of them takes a fresh index.
		{"two stripes: steal vs pop", func() (*Owner, []func(), func() error) {
			o, live := setup(2, 2, 3, []int{1, 2}, nil)
			var b, c result
			return o, []func(){allocs(o.Remote(), 2, &b), alloc(o.Remote(), &c)},
				finish(o, live, []*result{&b, &c})
		}, false},
		// A flush spreads two Handles over two stripes while the remote of
		// stripe 1, whose stripe is empty, steals from stripe 0.
		{"two stripes: flush vs steal", func() (*Owner, []func(), func() error) {
			o, live := setup(2, 2, 4, []int{1}, []int{2, 3})
			o.Remote()
			var c result
			return o, []func(){o.Flush, allocs(o.Remote(), 2, &c)},
				finish(o, live, []*result{&c})
		}, false},
		// The ring is full (2 slots) when a flush adds one: the flush
		// copies the ring into one of 4 slots and swaps the ring pointer
		// while one remote pops both old Handles and another pops one,
		// each reading the word and the ring before the swap, or after, or
		// the word before and the ring after. Reading the ring before the
		// word would be wrong: position 2 read from the old ring is slot
		// 0, Handle 1 again.
		{"flush grows the ring vs two remote pops", func() (*Owner, []func(), func() error) {
			o, live := setupRing(2, 1, 0, 4, []int{1, 2}, []int{3})
			var b, c result
			return o, []func(){o.Flush, allocMany(2, o.Remote().AllocMany, &b), alloc(o.Remote(), &c)},
				finish(o, live, []*result{&b, &c})
		}, true},
		// As above, but the full ring has wrapped: it holds 2 and 3 at
		// positions 1 and 2, slots 1 and 0, which the larger ring holds
		// in slots 1 and 2. A remote that popped 1 before holds it.
		{"flush grows a wrapped ring vs two remote pops", func() (*Owner, []func(), func() error) {
			o := newOwner(1)
			o.sh.ringMin = 2
			hs := make([]Handle, 5)
			o.AllocMany(hs)
			o.FreeMany(hs[:2])
			o.Flush() // 1, 2 at positions 0, 1
			r := o.Remote()
			h1, _ := r.Allocate() // 1: the head is 1
			o.Free(hs[2])
			o.Flush()     // 3 at position 2, slot 0: the ring is full
			o.Free(hs[3]) // buffered: the next flush grows the ring
			live := []Handle{h1, hs[4]}
			var b, c result
			return o, []func(){o.Flush, allocMany(2, r.AllocMany, &b), alloc(o.Remote(), &c)},
				finish(o, live, []*result{&b, &c})
		}, true},
		// A 2-slot ring holds 1 and 2 at positions 0 and 1. A remote
		// reads the word, another pops position 0, and the flush writes 3
		// at position 2: slot 0 again, a lap later. The first remote may
		// read 3 where it expected 1; its swap fails, as the head moved.
		{"flush laps the ring under a late pop", func() (*Owner, []func(), func() error) {
			o, live := setupRing(2, 1, 0, 4, []int{1, 2}, []int{3})
			var b, c result
			return o, []func(){alloc(o.Remote(), &b), func() {
				alloc(o.Remote(), &c)()
				o.Flush()
			}}, finish(o, live, []*result{&b, &c})
		}, false},
		// A batch pop spans both stripes while the other remote pops.
		{"two stripes: batch across stripes vs pop", func() (*Owner, []func(), func() error) {
			o, live := setup(2, 2, 4, []int{1, 2, 3}, nil)
			var b, c result
			return o, []func(){allocMany(3, o.Remote().AllocMany, &b), alloc(o.Remote(), &c)},
				finish(o, live, []*result{&b, &c})
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.large && (testing.Short() || raceEnabled) {
				t.Skip("large; run without -short and without -race")
			}
			n := explore(t, tc.sc)
			t.Logf("%d interleavings", n)
		})
	}
}

// TestRetire spends an index's generations: its last free retires it, and
// the index is never issued again.
func TestRetire(t *testing.T) {
	o := New()
	h, _ := o.Allocate()
	k, off := locate(h.Index())
	o.addChunk(k)[off] = retired - 1 // as if freed 2^32-2 times
	h = Pack(h.Index(), retired-1)
	if !o.Live(h) {
		t.Fatal("not live at its last generation")
	}
	if err := o.Free(h); err != nil {
		t.Fatal(err)
	}
	if o.Live(h) || o.Live(Pack(h.Index(), retired)) || o.Free(Pack(h.Index(), retired)) == nil {
		t.Fatal("retired index live")
	}
	o.Flush()
	next, _ := o.Allocate()
	if next.Index() == h.Index() {
		t.Fatalf("retired index reissued: %v", next)
	}
	if st := o.Stats(); st.Retired != 1 || st.Live != 1 || st.Issued != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestLocate(t *testing.T) {
	for _, c := range []struct{ i, chunk, off uint32 }{
		{0, 0, 0}, {1023, 0, 1023}, {1024, 1, 0}, {2047, 1, 1023}, {2048, 2, 0},
		{4095, 2, 2047}, {1 << 31, 22, 0}, {1<<32 - 1, 22, 1<<31 - 1},
	} {
		k, off := locate(c.i)
		if k != c.chunk || off != c.off || int(off) >= chunkLen(k) {
			t.Errorf("locate(%d) = %d, %d, want %d, %d", c.i, k, off, c.chunk, c.off)
		}
	}
	total := 0
	for k := range uint32(numChunks) {
		total += chunkLen(k)
	}
	if total != 1<<32 {
		t.Errorf("chunks hold %d, want 2^32", total)
	}
}

// TestExhausted issues the last indices.
func TestExhausted(t *testing.T) {
	o := New()
	o.sh.next.Store(maxIndex - 1)
	dst := make([]Handle, 3)
	n, err := o.Remote().AllocMany(dst)
	if n != 2 || err == nil || dst[1].Index() != maxIndex {
		t.Fatalf("AllocMany at the end = %d, %v, %v", n, err, dst)
	}
	if _, err := o.Allocate(); err == nil {
		t.Fatal("Allocate past the end succeeded")
	}
	if !o.Live(dst[0]) || !o.Live(dst[1]) {
		t.Fatal("last indices not live")
	}
	// (Freeing them would make the generation table's last chunk: 8 GiB.)
	if st := o.Stats(); st.Issued != maxIndex {
		t.Fatalf("stats %+v", st)
	}
}
