package handle_test

import (
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/gpumem/gpumem/handle"
)

// TestConcurrentUniqueness runs remote allocators on several goroutines
// while the owner allocates, frees and flushes. Every handle travels to the
// owner, which checks that no index is handed out twice while live, that
// every handle it receives is live and that a freed one is not. Short by
// default; HANDLE_STRESS=1 (or -short=false with -run on this test and a
// long -timeout) runs it long, as a stress test without -race. It runs
// twice: with one Remote shared by every worker, and with a Remote for
// each, so that workers pop stripes of their own and take from each
// other's when theirs run dry.
//
// Each runs again with rings that start at one slot, so that flushes grow
// them and pops race the owner's writes a lap behind throughout.
func TestConcurrentUniqueness(t *testing.T) {
	for _, ring := range []uint64{0, 1} {
		for _, own := range []bool{false, true} {
			name := "shared Remote"
			if own {
				name = "Remote per worker"
			}
			if ring > 0 {
				name += ", small rings"
			}
			t.Run(name, func(t *testing.T) { concurrentUniqueness(t, own, ring) })
		}
	}
}

func concurrentUniqueness(t *testing.T, ownRemote bool, ring uint64) {
	rounds := 200
	if os.Getenv("HANDLE_STRESS") != "" {
		rounds = 20000
	} else if testing.Short() {
		rounds = 50
	}
	workers := max(4, runtime.GOMAXPROCS(0))
	o := handle.New()
	if ring > 0 {
		handle.SetRingMin(o, ring)
	}
	shared := o.Remote()

	type batch struct {
		hs   []handle.Handle
		done chan<- []handle.Handle // returned for reuse
	}
	batches := make(chan batch, workers)
	var wg sync.WaitGroup
	for w := range workers {
		back := make(chan []handle.Handle, 2)
		back <- make([]handle.Handle, 0, 64)
		back <- make([]handle.Handle, 0, 64)
		r := shared
		if ownRemote {
			r = o.Remote()
		}
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range rounds {
				hs := (<-back)[:0]
				if rng.IntN(4) == 0 {
					hs = hs[:1+rng.IntN(cap(hs))]
					n, err := r.AllocMany(hs)
					if err != nil {
						t.Error(err)
						return
					}
					hs = hs[:n]
				} else {
					for range 1 + rng.IntN(cap(hs)) {
						h, err := r.Allocate()
						if err != nil {
							t.Error(err)
							return
						}
						hs = append(hs, h)
					}
				}
				batches <- batch{hs, back}
			}
		})
	}
	go func() { wg.Wait(); close(batches) }()

	live := map[uint32]handle.Handle{} // index -> its live handle
	var order []handle.Handle          // live handles, for random frees
	rng := rand.New(rand.NewPCG(1, 2))
	add := func(h handle.Handle) {
		if old, dup := live[h.Index()]; dup {
			t.Fatalf("index %d handed out twice: %v and %v", h.Index(), old, h)
		}
		if !o.Live(h) {
			t.Fatalf("%v not live when received", h)
		}
		live[h.Index()] = h
		order = append(order, h)
	}
	freeSome := func(n int) {
		for ; n > 0 && len(order) > 0; n-- {
			k := rng.IntN(len(order))
			h := order[k]
			order[k] = order[len(order)-1]
			order = order[:len(order)-1]
			delete(live, h.Index())
			if err := o.Free(h); err != nil {
				t.Fatal(err)
			}
			if o.Live(h) {
				t.Fatalf("%v live after free", h)
			}
		}
	}
	for b := range batches {
		for _, h := range b.hs {
			add(h)
		}
		b.done <- b.hs
		for range rng.IntN(8) {
			h, err := o.Allocate()
			if err != nil {
				t.Fatal(err)
			}
			add(h)
		}
		// Keep about 2,000 live so indices are reused over and over.
		if len(order) > 2000 {
			freeSome(len(order) - 1500)
		} else {
			freeSome(rng.IntN(40))
		}
		if rng.IntN(5) == 0 {
			o.Flush()
		}
	}
	st := o.Stats()
	if st.Live != uint64(len(live)) || st.Issued != st.Live+uint64(st.Buffered)+st.Shared+st.Retired {
		t.Fatalf("stats %+v with %d live", st, len(live))
	}
	t.Logf("%d rounds x %d workers: %+v", rounds, workers, st)
}
