package handle

import (
	"errors"
	"testing"
)

// model is the naive allocator the fuzz target checks an Owner against, on
// one goroutine: the owner's buffered frees as a plain stack, the shared
// list as a plain queue, and each index's generation.
type model struct {
	local, shared []uint32
	next          uint32
	gen           map[uint32]uint32
	live          []Handle
}

func (m *model) alloc(owner bool) Handle {
	var i uint32
	if owner && len(m.local) == 0 && len(m.shared) > 0 {
		m.refill()
	}
	switch {
	case owner && len(m.local) > 0:
		i, m.local = m.local[len(m.local)-1], m.local[:len(m.local)-1]
	case len(m.shared) > 0:
		i, m.shared = m.shared[0], m.shared[1:]
	default:
		m.next++
		i = m.next
	}
	h := Pack(i, m.gen[i])
	m.live = append(m.live, h)
	return h
}

// refill moves the first Handles of the shared list to the owner's
// buffer, the first on top, as Allocate does when its buffer is empty.
func (m *model) refill() {
	k := min(refill, len(m.shared))
	for j := k - 1; j >= 0; j-- {
		m.local = append(m.local, m.shared[j])
	}
	m.shared = m.shared[k:]
}

// allocMany is the Handles an AllocMany of n returns: the buffer's, then
// the shared list's and fresh ones, with no refill.
func (m *model) allocMany(owner bool, n int) []Handle {
	hs := make([]Handle, n)
	for j := range hs {
		if owner && len(m.local) > 0 {
			hs[j] = m.alloc(true)
		} else {
			hs[j] = m.alloc(false)
		}
	}
	return hs
}

func (m *model) free(k int) Handle {
	h := m.live[k]
	m.live[k] = m.live[len(m.live)-1]
	m.live = m.live[:len(m.live)-1]
	m.gen[h.Index()]++
	if len(m.local) == localCap {
		m.flush()
	}
	m.local = append(m.local, h.Index())
	return h
}

func (m *model) flush() {
	m.shared = append(m.shared, m.local...)
	m.local = m.local[:0]
}

// FuzzOwner drives an Owner and a Remote with a stream of operations, one
// byte each (and a byte of argument for some), checks every answer against
// the model, and audits the owner after every step.
func FuzzOwner(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 0, 2, 0, 4, 1, 1, 3, 0})
	f.Add([]byte{5, 40, 2, 3, 2, 7, 4, 6, 9, 0, 1, 7, 1})
	f.Add(append([]byte{5, 255, 5, 255}, make([]byte, 300)...))
	f.Fuzz(func(t *testing.T, ops []byte) {
		// The audit after each step is O(indices issued): cap the steps so
		// that no input runs long enough for the fuzzer to call it hung.
		ops = ops[:min(len(ops), 1024)]
		o := New()
		if len(ops) > 0 { // rings of 1 to 256 slots, to wrap and grow often
			o.sh.ringMin = 1 << (ops[0] % 9)
		}
		if len(ops) > 1 { // positions start up to 255 short of 2^32, to wrap
			for i := range o.sh.stripes {
				p := -uint32(ops[1])
				o.sh.stripes[i].word.Store(word(p, p))
			}
		}
		r := o.Remote()
		m := &model{gen: map[uint32]uint32{}}
		var stale []Handle
		arg := func(k *int) int {
			if *k+1 < len(ops) {
				*k++
				return int(ops[*k])
			}
			return 0
		}
		for k := 0; k < len(ops); k++ {
			switch ops[k] % 8 {
			case 0, 1: // owner alloc, remote alloc
				owner := ops[k]%8 == 0
				want := m.alloc(owner)
				var got Handle
				var err error
				if owner {
					got, err = o.Allocate()
				} else {
					got, err = r.Allocate()
				}
				if err != nil || got != want {
					t.Fatalf("op %d: alloc (owner %v) = %v, %v, want %v", k, owner, got, err, want)
				}
			case 2: // free live handles, up to 256 in a row, one by one or with FreeMany
				many := ops[k]/8%2 == 1
				var batch []Handle
				for n := 1 + arg(&k); n > 0 && len(m.live) > 0; n-- {
					h := m.free(n % len(m.live))
					if !many {
						if err := o.Free(h); err != nil {
							t.Fatalf("op %d: free %v: %v", k, h, err)
						}
					}
					batch = append(batch, h)
				}
				if many {
					if err := o.FreeMany(batch); err != nil {
						t.Fatalf("op %d: FreeMany %v: %v", k, batch, err)
					}
				}
				stale = append(stale, batch...)
			case 3: // free a stale or never issued handle
				h := Pack(m.next+1, 0)
				if len(stale) > 0 {
					h = stale[arg(&k)%len(stale)]
				}
				var err error
				if ops[k]/8%2 == 1 {
					err = o.FreeMany([]Handle{h})
				} else {
					err = o.Free(h)
				}
				if !errors.Is(err, ErrStale) {
					t.Fatalf("op %d: free stale %v = %v", k, h, err)
				}
			case 4:
				o.Flush()
				m.flush()
			case 5, 6: // owner batch, remote batch
				owner := ops[k]%8 == 5
				dst := make([]Handle, arg(&k))
				want := m.allocMany(owner, len(dst))
				var n int
				var err error
				if owner {
					n, err = o.AllocMany(dst)
				} else {
					n, err = r.AllocMany(dst)
				}
				if err != nil || n != len(dst) {
					t.Fatalf("op %d: AllocMany = %d, %v", k, n, err)
				}
				for j := range dst {
					if dst[j] != want[j] {
						t.Fatalf("op %d: AllocMany (owner %v) = %v, want %v", k, owner, dst, want)
					}
				}
			case 7: // stale handles are not live
				for _, h := range stale {
					if o.Live(h) {
						t.Fatalf("op %d: stale %v live", k, h)
					}
				}
			}
			if err := audit(o, m.live); err != nil {
				t.Fatalf("op %d (%d): %v", k, ops[k], err)
			}
		}
	})
}
