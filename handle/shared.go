package handle

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"
)

// The state an Owner shares with its Remote allocators. See doc.go for the
// free list's design, its stripes and its words.

const (
	// maxIndex is the last index issued: a stripe's 32-bit positions can
	// count every index, and index 0 is never issued.
	maxIndex = 1<<32 - 1

	// retired is the generation recorded for an index whose generations
	// ran out; no Handle carries it, so none matches it.
	retired = 1<<32 - 1

	// maxStripes bounds the stripes of one owner (see defaultStripes).
	maxStripes = 32

	// minRing is the slots of a stripe's first ring: 2 KiB.
	minRing = 256
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
	// ringMin is the slots of a stripe's first ring (rounded up to a power
	// of two): minRing, but for tests that need rings to grow and wrap
	// within a few Handles.
	ringMin uint64

	// step, when set, is called before every access to shared memory of
	// the pop, fresh and flush paths that may race another's: the
	// interleaving test parks the calling goroutine there to run every
	// order of those accesses. A run of slot reads or writes takes one
	// step: a pop never acts on what it reads before its swap succeeds, and
	// a pop whose reads overlap the owner's writes has a head that moved on,
	// so its swap fails whatever it read. Nil outside that test.
	step func()
}

// stripe is one queue of the shared free list. Its word holds two 32-bit
// positions that only ever grow, modulo 2^32: the head (low half), where
// pops take, and the tail (high half), where the owner adds. The Handles
// at positions head to tail-1 wait in ring, position p in slot p modulo
// the ring's size. Stripes are padded apart so that allocators popping
// different stripes never share a cache line, nor a pair of lines that the
// processor fetches together.
type stripe struct {
	word atomic.Uint64
	ring atomic.Pointer[ring]
	_    [128 - 16]byte
}

// ring is a stripe's storage, a power of two slots. The owner writes
// slots while remote allocators read others, and a late reader may read a
// slot the owner is rewriting (its swap then fails), so every slot is read
// and written atomically; a flush writes with release ordering where that
// store is cheaper (see storeSlots). A full ring is replaced by a larger
// copy, never resized in place: a reader holding the old one reads what it
// held.
type ring struct {
	mask  uint32 // slots - 1
	slots []atomic.Uint64
}

func (r *ring) load(p uint32) Handle { return Handle(r.slots[p&r.mask].Load()) }

// storeMany stores hs at positions p, p+1, ...; len(hs) <= the slots.
func (r *ring) storeMany(p uint32, hs []Handle) {
	i := p & r.mask
	n := min(len(hs), len(r.slots)-int(i)) // up to the ring's end
	storeSlots(r.slots[i:], hs[:n])
	storeSlots(r.slots, hs[n:]) // the rest wraps round
}

// positions splits a stripe word into its head and tail.
func positions(w uint64) (head, tail uint32) { return uint32(w), uint32(w >> 32) }

// word joins a head and a tail into a stripe word.
func word(head, tail uint32) uint64 { return uint64(tail)<<32 | uint64(head) }

func newShared(stripes int) *shared {
	s := &shared{stripes: make([]stripe, stripes), ringMin: minRing}
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
		head, tail := positions(w)
		if head == tail || len(dst) == 0 {
			return 0
		}
		m := uint32(min(uint64(len(dst)), uint64(tail-head)))
		s.yield()
		r := st.ring.Load() // after the word: it holds the positions read
		for j := range m {
			dst[j] = r.load(head + j)
		}
		s.yield()
		if st.word.CompareAndSwap(w, word(head+m, tail)) {
			return int(m)
		}
		spins = backoff(spins)
	}
}

// push publishes hs on stripe st. Owner only: it never blocks pops. See
// doc.go.
func (s *shared) push(st *stripe, hs []Handle) {
	// Write the Handles past the tail, in slots no pop reads (a pop that
	// read its word a whole ring ago may read one, but its swap fails),
	// then publish them by raising the tail with a swap. Only the owner
	// moves the tail, so a failed swap means pops moved the head; the
	// slots are right as they are, and the swap is tried again.
	k := uint32(len(hs))
	s.yield()
	w := st.word.Load()
	head, tail := positions(w)
	r := st.ring.Load()
	if r == nil || uint64(tail-head)+uint64(k) > uint64(r.mask)+1 {
		r = s.grow(st, r, head, tail, k)
	}
	s.yield()
	r.storeMany(tail, hs)
	for {
		s.yield()
		if st.word.CompareAndSwap(w, word(head, tail+k)) {
			return
		}
		s.yield()
		w = st.word.Load()
		head = uint32(w) // the tail is still ours
	}
}

// grow replaces stripe st's ring r (nil for none yet) with one of at
// least twice the slots that also has room for k more Handles than the
// positions head to tail-1 that it copies. Owner only. A pop that goes on
// meanwhile, its head still the stripe's, finds the Handles it reads in
// either ring, each position in both at its own slot; one whose head has
// moved on may read anything from the new ring, and its swap fails.
func (s *shared) grow(st *stripe, r *ring, head, tail, k uint32) *ring {
	n := uint64(tail - head)
	size := uint64(1) << bits.Len64(max(s.ringMin, 1)-1) // a power of two
	if r != nil {
		size = 2 * (uint64(r.mask) + 1)
	}
	for size < n+uint64(k) {
		size *= 2
	}
	nr := &ring{mask: uint32(size - 1), slots: make([]atomic.Uint64, size)}
	for p := head; p != tail; p++ {
		nr.slots[p&nr.mask].Store(uint64(r.load(p)))
	}
	s.yield()
	st.ring.Store(nr)
	return nr
}

// length returns how many Handles the shared free list holds: a moment's
// view while remote allocators pop.
func (s *shared) length() uint64 {
	var n uint64
	for i := range s.stripes {
		head, tail := positions(s.stripes[i].word.Load())
		n += uint64(tail - head)
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
