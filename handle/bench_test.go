package handle_test

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gpumem/gpumem/handle"
)

// mutexList is the baseline: the obvious allocator, a slice free list and
// a generation slice behind one sync.Mutex, usable from any goroutine. Like
// the Owner's, its free list holds Handles with their next generation, so
// an allocation reads nothing else.
type mutexList struct {
	mu   sync.Mutex
	free []handle.Handle
	gens []uint32 // gens[i] is index i's generation; index 0 unused
}

func newMutexList() *mutexList { return &mutexList{gens: make([]uint32, 1, 1024)} }

func (m *mutexList) alloc() handle.Handle {
	m.mu.Lock()
	var h handle.Handle
	if n := len(m.free); n > 0 {
		h = m.free[n-1]
		m.free = m.free[:n-1]
	} else {
		h = handle.Pack(uint32(len(m.gens)), 0)
		m.gens = append(m.gens, 0)
	}
	m.mu.Unlock()
	return h
}

// freeMany frees hs under one lock, as the owner in the remote benchmark
// frees a batch; it reports whether every handle was live.
func (m *mutexList) freeMany(hs []handle.Handle) bool {
	ok := true
	m.mu.Lock()
	for _, h := range hs {
		i, g := h.Index(), h.Generation()
		if int(i) >= len(m.gens) || m.gens[i] != g {
			ok = false
			continue
		}
		m.gens[i] = g + 1
		m.free = append(m.free, handle.Pack(i, g+1))
	}
	m.mu.Unlock()
	return ok
}

func (m *mutexList) free1(h handle.Handle) bool {
	m.mu.Lock()
	i, g := h.Index(), h.Generation()
	ok := int(i) < len(m.gens) && m.gens[i] == g
	if ok {
		m.gens[i] = g + 1
		m.free = append(m.free, handle.Pack(i, g+1))
	}
	m.mu.Unlock()
	return ok
}

// BenchmarkOwner measures an alloc+free pair on the owner's goroutine:
// "pair" frees each handle at once (the owner's buffer serves the next
// alloc), "batch512" frees 512 and allocates 512, so every round flushes
// twice and pops the shared list. ns/op is per pair.
func BenchmarkOwner(b *testing.B) {
	b.Run("pair", func(b *testing.B) {
		o := handle.New()
		b.ReportAllocs()
		for b.Loop() {
			h, _ := o.Allocate()
			if o.Free(h) != nil {
				b.Fatal("free failed")
			}
		}
	})
	b.Run("batch512", func(b *testing.B) {
		o := handle.New()
		hs := make([]handle.Handle, 512)
		o.AllocMany(hs)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i += len(hs) {
			if o.FreeMany(hs) != nil {
				b.Fatal("free failed")
			}
			for j := range hs {
				hs[j], _ = o.Allocate()
			}
		}
	})
}

// BenchmarkMutexOwner is the baseline for BenchmarkOwner/pair.
func BenchmarkMutexOwner(b *testing.B) {
	m := newMutexList()
	b.ReportAllocs()
	for b.Loop() {
		if !m.free1(m.alloc()) {
			b.Fatal("free failed")
		}
	}
}

// goroutineCounts returns 1, 2 and GOMAXPROCS, without repeats.
func goroutineCounts() []int {
	return slices.Compact(slices.Sorted(slices.Values([]int{1, 2, runtime.GOMAXPROCS(0)})))
}

// runRemote runs b.N allocations spread over g worker goroutines, each
// allocating 256 handles one at a time, with the allocator newAlloc gives
// it, and handing the batch to a single freeing goroutine (the owner),
// which frees it and hands the slice back. ns/op is per allocation, the
// frees running alongside.
func runRemote(b *testing.B, g int, newAlloc func() func() handle.Handle, freeMany func([]handle.Handle) bool) {
	const batch = 256
	type full struct {
		hs   []handle.Handle
		back chan []handle.Handle
	}
	fulls := make(chan full, g)
	backs := make([]chan []handle.Handle, g)
	for w := range backs {
		backs[w] = make(chan []handle.Handle, 2)
		backs[w] <- make([]handle.Handle, batch)
		backs[w] <- make([]handle.Handle, batch)
	}
	ownerDone := make(chan bool)
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		ok := true
		for f := range fulls {
			ok = freeMany(f.hs) && ok
			f.back <- f.hs[:cap(f.hs)]
		}
		ownerDone <- ok
	}()
	var wg sync.WaitGroup
	for w := range g {
		n := b.N / g
		if w == 0 {
			n += b.N % g
		}
		alloc := newAlloc()
		wg.Go(func() {
			for n > 0 {
				hs := (<-backs[w])[:min(batch, n)]
				for j := range hs {
					hs[j] = alloc()
				}
				n -= len(hs)
				fulls <- full{hs, backs[w]}
			}
		})
	}
	wg.Wait()
	close(fulls)
	if !<-ownerDone {
		b.Fatal("a free failed")
	}
}

// runConcurrent runs b.N allocations spread over g worker goroutines while
// a single freeing goroutine (the owner) frees them, all of them running at
// once, as a loader allocates while a main loop frees: each worker cycles
// through four batches of 256, filling one with the allocator newAlloc
// gives it and marking it full; the freeing goroutine frees every full
// batch it finds and marks it empty. A goroutine with nothing to do spins,
// yielding its processor each round, instead of blocking. (runRemote's
// channels hand a batch over by waking the receiver, which the scheduler
// queues to run next on the sender's processor, so there the two sides
// often take turns on one core rather than run at once, and their costs
// add up.) ns/op is per allocation, its free running alongside.
func runConcurrent(b *testing.B, g int, newAlloc func() func() handle.Handle, freeMany func([]handle.Handle) bool) {
	const batch, depth = 256, 4
	type slot struct {
		full atomic.Bool
		hs   []handle.Handle
		_    [64 - 8 - 24]byte // one slot per cache line
	}
	slots := make([][depth]slot, g)
	counts := make([]int, g)
	batches := 0
	for w := range slots {
		for k := range slots[w] {
			slots[w][k].hs = make([]handle.Handle, batch)
		}
		counts[w] = b.N / g
		if w == 0 {
			counts[w] += b.N % g
		}
		batches += (counts[w] + batch - 1) / batch
	}
	ownerDone := make(chan bool)
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		ok := true
		for left := batches; left > 0; {
			found := false
			for w := range slots {
				for k := range slots[w] {
					if s := &slots[w][k]; s.full.Load() {
						ok = freeMany(s.hs) && ok
						s.full.Store(false)
						found = true
						left--
					}
				}
			}
			if !found {
				runtime.Gosched()
			}
		}
		ownerDone <- ok
	}()
	var wg sync.WaitGroup
	for w := range g {
		n := counts[w]
		alloc := newAlloc()
		wg.Go(func() {
			for k := 0; n > 0; k = (k + 1) % depth {
				s := &slots[w][k]
				for s.full.Load() {
					runtime.Gosched()
				}
				hs := s.hs[:min(batch, n)]
				for j := range hs {
					hs[j] = alloc()
				}
				n -= len(hs)
				s.hs = hs
				s.full.Store(true)
			}
		})
	}
	wg.Wait()
	if !<-ownerDone {
		b.Fatal("a free failed")
	}
}

// remoteAlloc returns a new Remote's Allocate, for one worker goroutine (the
// use Owner.Remote recommends).
func remoteAlloc(o *handle.Owner) func() func() handle.Handle {
	return func() func() handle.Handle {
		r := o.Remote()
		return func() handle.Handle {
			h, err := r.Allocate()
			if err != nil {
				panic(err)
			}
			return h
		}
	}
}

// ownerFree returns the freeing side of the remote benchmarks: o frees a
// batch and flushes it at once, publishing it as the mutex list does; it
// reports whether every Handle was live.
func ownerFree(o *handle.Owner) func([]handle.Handle) bool {
	return func(hs []handle.Handle) bool {
		err := o.FreeMany(hs)
		o.Flush()
		return err == nil
	}
}

// BenchmarkRemote measures remote allocation on g goroutines, each with a
// Remote of its own.
//
// "concurrent": the owner frees on its own goroutine what the workers
// allocated, in batches of 256, and flushes after each, all of them
// running at once (runConcurrent); ns/op is per allocation, its free
// running alongside. "pipeline": the same work handed over through
// channels (runRemote). "pop": the workers only pop, from a shared list
// the owner filled with 65,536 handles while the timer was stopped; ns/op
// is per allocation. "shared-pipeline": as pipeline, but all workers share
// one Remote, so they all pop the same stripe.
func BenchmarkRemote(b *testing.B) {
	for _, g := range goroutineCounts() {
		b.Run(fmt.Sprintf("pipeline/g=%d", g), func(b *testing.B) {
			o := handle.New()
			runRemote(b, g, remoteAlloc(o), ownerFree(o))
		})
	}
	for _, g := range goroutineCounts() {
		b.Run(fmt.Sprintf("concurrent/g=%d", g), func(b *testing.B) {
			o := handle.New()
			runConcurrent(b, g, remoteAlloc(o), ownerFree(o))
		})
	}
	for _, g := range goroutineCounts() {
		b.Run(fmt.Sprintf("shared-pipeline/g=%d", g), func(b *testing.B) {
			o := handle.New()
			one := remoteAlloc(o)()
			runRemote(b, g, func() func() handle.Handle { return one }, ownerFree(o))
		})
	}
	for _, g := range goroutineCounts() {
		b.Run(fmt.Sprintf("pop/g=%d", g), func(b *testing.B) {
			o := handle.New()
			runPops(b, g, func(hs []handle.Handle) {
				if _, err := o.AllocMany(hs); err != nil {
					b.Fatal(err)
				}
				if err := o.FreeMany(hs); err != nil {
					b.Fatal(err)
				}
				o.Flush()
			}, remoteAlloc(o))
		})
	}
}

// runPops runs b.N pops on g goroutines, each with the allocator newPop
// gives it, in rounds of 65,536: fill frees a full round's handles
// (untimed), then the goroutines pop them.
func runPops(b *testing.B, g int, fill func([]handle.Handle), newPop func() func() handle.Handle) {
	const round = 1 << 16
	hs := make([]handle.Handle, round)
	pops := make([]func() handle.Handle, g)
	for w := range pops {
		pops[w] = newPop()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += round {
		b.StopTimer()
		n := min(round, b.N-done)
		fill(hs[:n])
		b.StartTimer()
		var wg sync.WaitGroup
		for w := range g {
			part := hs[w*n/g : (w+1)*n/g]
			pop := pops[w]
			wg.Go(func() {
				for j := range part {
					part[j] = pop()
				}
			})
		}
		wg.Wait()
	}
}

// BenchmarkMutexRemote is BenchmarkRemote's baseline: the same work on the
// mutex-guarded list.
func BenchmarkMutexRemote(b *testing.B) {
	for _, g := range goroutineCounts() {
		b.Run(fmt.Sprintf("pipeline/g=%d", g), func(b *testing.B) {
			m := newMutexList()
			runRemote(b, g, func() func() handle.Handle { return m.alloc }, m.freeMany)
		})
	}
	for _, g := range goroutineCounts() {
		b.Run(fmt.Sprintf("concurrent/g=%d", g), func(b *testing.B) {
			m := newMutexList()
			runConcurrent(b, g, func() func() handle.Handle { return m.alloc }, m.freeMany)
		})
	}
	for _, g := range goroutineCounts() {
		b.Run(fmt.Sprintf("pop/g=%d", g), func(b *testing.B) {
			m := newMutexList()
			runPops(b, g, func(hs []handle.Handle) {
				for j := range hs {
					hs[j] = m.alloc()
				}
				m.freeMany(hs)
			}, func() func() handle.Handle { return m.alloc })
		})
	}
}
