package bindless

import "math/bits"

// bitset is a set of small integers (layers of a page, global indices of
// a bucket's pages) with a lowest-member query. lo is a lower bound: no
// member lies in words below it, so first scans from there and a run of
// takes from the bottom costs O(1) each. n is the member count.
type bitset struct {
	w  []uint64
	lo int
	n  int
}

// has reports whether i is a member.
func (s *bitset) has(i uint32) bool {
	k := int(i >> 6)
	return k < len(s.w) && s.w[k]&(1<<(i&63)) != 0
}

// set adds i; it grows the words as needed.
func (s *bitset) set(i uint32) {
	k := int(i >> 6)
	for len(s.w) <= k {
		s.w = append(s.w, 0)
	}
	if s.w[k]&(1<<(i&63)) != 0 {
		return
	}
	s.w[k] |= 1 << (i & 63)
	s.n++
	s.lo = min(s.lo, k)
}

// unset removes i.
func (s *bitset) unset(i uint32) {
	if !s.has(i) {
		return
	}
	s.w[i>>6] &^= 1 << (i & 63)
	s.n--
}

// first returns the lowest member, and ok false when there is none.
// O(1) amortized over takes from the bottom: it moves lo past empty
// words, which later sets below move back.
func (s *bitset) first() (uint32, bool) {
	if s.n == 0 {
		return 0, false
	}
	for ; s.lo < len(s.w); s.lo++ {
		if w := s.w[s.lo]; w != 0 {
			return uint32(s.lo<<6 + bits.TrailingZeros64(w)), true
		}
	}
	return 0, false
}

// reset removes every member, keeping the words' memory.
func (s *bitset) reset() {
	clear(s.w)
	s.lo, s.n = 0, 0
}
