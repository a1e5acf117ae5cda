package handle

import "fmt"

// Remote allocates Handles from its Owner's indices, from any goroutine,
// without locks: every method is safe for concurrent use with every other
// method of any Remote and of the Owner. It reuses an index from the
// shared free list, the oldest on its stripe, taken with one swap, and
// issues a fresh index when the list is empty. It never frees: hand the Handles to the owner for that.
// The zero Remote is not usable: call Owner.Remote.
type Remote struct {
	sh   *shared
	st   *stripe // the stripe it pops first: &sh.stripes[home]
	home uint32
}

// Allocate returns a live Handle. It fails with ErrReleased once the owner is
// released and ErrExhausted when no index is left. Lock-free: it retries its
// swap only when another allocation or a flush changed the list, after a
// short backoff that grows with each failure; no allocation but on error.
func (r Remote) Allocate() (Handle, error) {
	// Fast path: one try at the head of the home stripe, as popFrom's
	// first round for one Handle; anything else goes the slow way. Its
	// steps are the interleaving test's too.
	s, st := r.sh, r.st
	s.yield()
	if w := st.word.Load(); uint32(w) != uint32(w>>32) && !s.closed.Load() {
		head, tail := positions(w)
		s.yield()
		h := st.ring.Load().load(head) // after the word, as in popFrom
		s.yield()
		if st.word.CompareAndSwap(w, word(head+1, tail)) {
			return h, nil
		}
	}
	return r.alloc()
}

func (r Remote) alloc() (Handle, error) {
	if r.sh.closed.Load() {
		return 0, fmt.Errorf("remote alloc: %w", ErrReleased)
	}
	if h, ok := r.sh.pop1(r.home); ok {
		return h, nil
	}
	return r.sh.fresh1()
}

// AllocMany fills dst with live Handles and returns how many it wrote:
// len(dst), fewer with ErrExhausted (the ones written are live), or none
// with ErrReleased. It pops what it can from the shared free list in one swap
// and takes the rest fresh with one atomic add. O(len(dst)); no
// allocation.
func (r Remote) AllocMany(dst []Handle) (int, error) {
	if r.sh.closed.Load() {
		return 0, fmt.Errorf("remote alloc: %w", ErrReleased)
	}
	k := r.sh.pop(r.home, dst)
	n, err := r.sh.fresh(dst[k:])
	return k + n, err
}

// Released reports whether the owner has been released. A false answer may be
// out of date as soon as it is returned.
func (r Remote) Released() bool { return r.sh.closed.Load() }
