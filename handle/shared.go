package handle

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

// The state an Owner shares with its Remote allocators. See doc.go for the
// free list's design, its stripes and its words.

const (
	lenMask    = 1<<32 - 1 // a stripe word's length
	versionOne = 1 << 32   // one step of a stripe word's version

	// maxIndex is the last index issued: a stripe's 32-bit length can
	// count every index, and index 0 is never issued.
	maxIndex = 1<<32 - 1

	// retired is the generation recorded for an index whose generations
	// ran out; no Handle carries it, so none matches it.
	retired = 1<<32 - 1

	// maxStripes bounds the stripes of one owner (see defaultStripes).
	maxStripes = 32
)

type shared struct {
	// next is the next fresh index: 1 + the indices ever issued. It may
	// run past maxIndex + 1 once indices are exhausted.
	next atomic.Uint64
	_    [56]byte // keep the contended counter on a cache line of its own

	closed atomic.Bool
	// active is how many stripes, from the first, the owner pushes to:
	// one per Remote made, at least 1, at most len(stripes). Only the
	// owner raises it; remote allocators look no further.
	active  atomic.Uint32
	stripes []stripe

	// step, when set, is called before every access to shared memory of
	// the pop, fresh and flush paths: the interleaving test parks the
	// calling goroutine there to run every order of those accesses. Nil
	// outside that test.
	step func()
}

// stripe is one stack of the shared free list: its word (length and
// version) and its slots. Stripes are padded apart so that allocators
// popping different stripes never share a cache line.
type stripe struct {
	word atomic.Uint64
	list slotTable
	_    [256 - 8 - numChunks*8]byte
}

func newShared(stripes int) *shared {
	s := &shared{stripes: make([]stripe, stripes)}
	s.next.Store(1) // index 0 is never issued: the zero Handle is never live
	s.active.Store(1)
	return s
}

// defaultStripes is one stripe per processor, so that as many remote
// allocators as can run at once each pop a stripe of their own, up to
// maxStripes.
func defaultStripes() int { return min(runtime.GOMAXPROCS(0), maxStripes) }

func (s *shared) yield() {
	if s.step != nil {
		s.step()
	}
}

// pop1 takes one Handle off the shared free list, as pop does; it reports
// false when every active stripe was empty when it looked.
func (s *shared) pop1(home uint32) (Handle, bool) {
	var h [1]Handle
	return h[0], s.pop(home, h[:]) == 1
}

// pop takes up to len(dst) Handles off the shared free list into dst, with
// one swap on each stripe it takes from, starting at stripe home, and
// returns how many it took.
func (s *shared) pop(home uint32, dst []Handle) int {
	k := s.popFrom(&s.stripes[home], dst)
	n := s.active.Load()
	for i, j := home+1, uint32(1); j < n && k < len(dst); i, j = i+1, j+1 {
		if i >= n {
			i = 0
		}
		k += s.popFrom(&s.stripes[i], dst[k:])
	}
	return k
}

// popFrom takes up to len(dst) Handles off stripe st into dst in one swap
// and returns how many it took. Lock-free: a failed swap means another pop
// or a flush made progress.
func (s *shared) popFrom(st *stripe, dst []Handle) int {
	spins := minSpins
	for {
		s.yield()
		w := st.word.Load()
		n := uint32(w & lenMask)
		if n == 0 || len(dst) == 0 {
			return 0
		}
		m := uint32(min(uint64(len(dst)), uint64(n)))
		for j := range m {
			s.yield()
			dst[j] = st.list.load(n - 1 - j)
		}
		s.yield()
		if st.word.CompareAndSwap(w, w-uint64(m)+versionOne) {
			return int(m)
		}
		spins = backoff(spins)
	}
}

// push publishes hs on stripe st. Owner only: it never blocks pops. See
// doc.go.
func (s *shared) push(st *stripe, hs []Handle) {
	// Write the Handles just past the stripe's top, where no pop reads (a
	// pop that began before a pop below it may read there, but its swap
	// fails), then publish them by raising the length with a swap. Only
	// the owner pushes, so a failed swap means pops lowered the length
	// meanwhile: the pushed Handles must start lower. Slide the ones that
	// now lie past the new end down into the gap and swap again. Each
	// retry costs as many stores as there were pops.
	k := uint32(len(hs))
	s.yield()
	w := st.word.Load()
	base := uint32(w & lenMask)
	if s.step == nil {
		st.list.storeRun(base, hs)
	} else {
		for j, h := range hs {
			s.yield()
			st.list.store(base+uint32(j), h)
		}
	}
	for {
		s.yield()
		if st.word.CompareAndSwap(w, w+uint64(k)) {
			return
		}
		s.yield()
		w = st.word.Load()
		nb := uint32(w & lenMask) // < base: only pops ran
		from := max(base, nb+k)   // pushed entries past the new end...
		for p := from; p < base+k; p++ {
			s.yield()
			v := st.list.load(p)
			s.yield()
			st.list.store(nb+(p-from), v) // ...move into [nb, min(base, nb+k))
		}
		base = nb
	}
}

// length returns how many Handles the shared free list holds: a moment's
// view while remote allocators pop.
func (s *shared) length() uint64 {
	var n uint64
	for i := range s.stripes {
		n += s.stripes[i].word.Load() & lenMask
	}
	return n
}

// fresh1 issues a never-used index, generation 0.
func (s *shared) fresh1() (Handle, error) {
	s.yield()
	i := s.next.Add(1) - 1
	if i > maxIndex {
		return 0, fmt.Errorf("%w: all %d issued", ErrExhausted, uint64(maxIndex))
	}
	return Pack(uint32(i), 0), nil
}

// fresh fills dst with never-used indices and returns how many it filled:
// all of them unless the indices ran out (ErrExhausted).
func (s *shared) fresh(dst []Handle) (int, error) {
	if len(dst) == 0 {
		return 0, nil
	}
	s.yield()
	k := uint64(len(dst))
	start := s.next.Add(k) - k
	n := k
	if start+k-1 > maxIndex {
		n = (maxIndex + 1) - min(start, maxIndex+1)
	}
	for j := range n {
		dst[j] = Pack(uint32(start+j), 0)
	}
	if n < k {
		return int(n), fmt.Errorf("%w: all %d issued", ErrExhausted, uint64(maxIndex))
	}
	return int(n), nil
}

// issued returns how many indices have been issued.
func (s *shared) issued() uint64 {
	return min(s.next.Load()-1, maxIndex)
}

// Backoff after a failed swap. Allocators that retry at once take the list
// word's cache line from each other on every attempt, and under contention
// most attempts fail; one that waits a little lets the winner run several
// pops with the line in its cache, as a contended mutex does. The wait
// doubles with each failure, from minSpins to maxSpins rounds (a round is a
// multiply and an add, about a nanosecond). Measured on a 16-core Xeon,
// popping on 2 goroutines: 76 ns a pop without backoff, 75 with 16 to
// 1,024 rounds, 32 with these; on 16 goroutines 149, 147 and 126.
const (
	minSpins = 128
	maxSpins = 8192
)

// backoff spins about n rounds without touching shared memory and returns
// the next wait.
func backoff(n int) int {
	x := uint32(n)
	for range n {
		x = x*1664525 + 1013904223
	}
	if x == 0 { // never, but the compiler cannot tell: keeps the loop
		runtime.Gosched()
	}
	return min(2*n, maxSpins)
}
