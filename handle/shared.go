package handle

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

// The state an Owner shares with its Remote allocators. See doc.go for the
// free list's design and its word.

const (
	lenMask    = 1<<32 - 1 // the list word's length
	versionOne = 1 << 32   // one step of the list word's version

	// maxIndex is the last index issued: the free list's 32-bit length can
	// count every index, and index 0 is never issued.
	maxIndex = 1<<32 - 1

	// retired is the generation recorded for an index whose generations
	// ran out; no Handle carries it, so none matches it.
	retired = 1<<32 - 1
)

type shared struct {
	// word is the free list's length and version.
	word atomic.Uint64
	_    [56]byte // keep the contended word on a cache line of its own
	// next is the next fresh index: 1 + the indices ever issued. It may
	// run past maxIndex + 1 once indices are exhausted.
	next atomic.Uint64
	_    [56]byte

	closed atomic.Bool
	list   slotTable

	// step, when set, is called before every access to shared memory of
	// the pop, fresh and flush paths: the interleaving test parks the
	// calling goroutine there to run every order of those accesses. Nil
	// outside that test.
	step func()
}

func (s *shared) yield() {
	if s.step != nil {
		s.step()
	}
}

// pop1 takes the top Handle off the shared free list. It reports false when the list is empty. Lock-free: a failed
// swap means another pop or a flush made progress.
func (s *shared) pop1() (Handle, bool) {
	spins := minSpins
	for {
		s.yield()
		w := s.word.Load()
		n := uint32(w & lenMask)
		if n == 0 {
			return 0, false
		}
		s.yield()
		h := s.list.load(n - 1)
		s.yield()
		if s.word.CompareAndSwap(w, w-1+versionOne) {
			return h, true
		}
		spins = backoff(spins)
	}
}

// pop takes up to len(dst) Handles off the shared free list into dst in one
// swap and returns how many it took; see pop1.
func (s *shared) pop(dst []Handle) int {
	spins := minSpins
	for {
		s.yield()
		w := s.word.Load()
		n := uint32(w & lenMask)
		if n == 0 || len(dst) == 0 {
			return 0
		}
		m := uint32(min(uint64(len(dst)), uint64(n)))
		for j := range m {
			s.yield()
			dst[j] = s.list.load(n - 1 - j)
		}
		s.yield()
		if s.word.CompareAndSwap(w, w-uint64(m)+versionOne) {
			return int(m)
		}
		spins = backoff(spins)
	}
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
