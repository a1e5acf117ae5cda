package trace

import (
	"fmt"

	"github.com/gpumem/gpumem/offset"
)

// Replayer replays one Program against *offset.Allocators. It holds the
// state a replay needs (a table of Program.Slots allocations and an offsets
// slice of Program.Allocs entries), made once by NewReplayer, so Run
// allocates nothing and can be repeated. A Replayer is not safe for
// concurrent use; several Replayers may share a Program.
type Replayer struct {
	p       *Program
	slots   []offset.Allocation
	offsets []uint32
	// The state of a running replay that only allocations touch: how many
	// offsets are written, the peak and the failure counts. See Run.
	n, failures, invalid int
	peak                 uint32
}

// Result is what one replay saw.
type Result struct {
	// Ops is the number of steps executed, skipped frees included.
	Ops int
	// Failures is the number of refused allocations, whatever the reason.
	Failures int
	// Invalid counts the Failures refused for another reason than
	// offset.ErrOutOfSpace: a size of 0 or above the capacity, or the
	// allocator's node limit.
	Invalid int
	// PeakEnd is the largest offset+size of any allocation: the part of the
	// arena the replay touched.
	PeakEnd uint32
}

// NewReplayer checks that p is well formed (every slot below p.Slots, every
// free of a slot allocated before it and not freed since: always true of a
// Program that Load made) and returns a Replayer for it. O(len(p.Steps)).
func NewReplayer(p *Program) (*Replayer, error) {
	live := make([]bool, p.Slots)
	allocs := 0
	for i, s := range p.Steps {
		slot := s.Slot()
		if slot >= p.Slots {
			return nil, fmt.Errorf("trace: %s: step %d: slot %d out of range (Slots %d)", p.Name, i, slot, p.Slots)
		}
		if live[slot] != s.IsFree() {
			return nil, fmt.Errorf("trace: %s: step %d: %v of slot %d, live=%v", p.Name, i, kindOf(s), slot, live[slot])
		}
		live[slot] = !s.IsFree()
		if !s.IsFree() {
			allocs++
		}
	}
	return &Replayer{
		p:       p,
		slots:   make([]offset.Allocation, p.Slots),
		offsets: make([]uint32, allocs),
	}, nil
}

func kindOf(s Step) Kind {
	if s.IsFree() {
		return Free
	}
	return Alloc
}

// Run replays the Program into a, which should be empty and must have the
// Program's Capacity (ErrMismatch, before any step). Every allocation is
// asked of a as is; a refusal of any kind counts as a failure, and the
// later free of its slot is skipped. The allocations still live at the end
// stay allocated in a (so its Report describes the end state); Reset a
// before running again.
//
// Run allocates nothing but its error. Its errors are ErrMismatch and
// ErrFreeFailed, when a refuses to free an allocation it handed out.
func (r *Replayer) Run(a *offset.Allocator) (Result, error) {
	if c := a.Capacity(); c != r.p.Capacity {
		return Result{}, fmt.Errorf("%w: %s: allocator of %d units, trace of %d", ErrMismatch, r.p.Name, c, r.p.Capacity)
	}
	// The loop is lean on purpose: Go keeps no register across a call, so
	// every value the loop carries is reloaded after each Allocate and
	// Free. What only allocations need (the offsets written so far, the
	// peak, the failure counts) lives in r's fields rather than in locals,
	// so frees, half the steps, neither carry nor reload it. The size of
	// an allocation is read back from h rather than kept from s.
	steps, slots := r.p.Steps, r.slots
	r.n, r.peak, r.failures, r.invalid = 0, 0, 0, 0
	for i, s := range steps {
		if s.slot&freeBit != 0 {
			// A refused allocation left Size 0 in its slot: skip its free.
			if h := slots[s.slot&^freeBit]; h.Size != 0 {
				if err := a.Free(h); err != nil {
					return Result{}, fmt.Errorf("%w: step %d: %w", ErrFreeFailed, i, err)
				}
			}
			continue
		}
		slot := &slots[s.slot] // before the call: one pointer to keep, not slots
		h, err := a.Allocate(s.size)
		if err != nil {
			r.refused(err)
			h = offset.Allocation{Offset: Refused}
		} else if end := h.Offset + h.Size; end > r.peak {
			r.peak = end
		}
		*slot = h
		r.offsets[r.n] = h.Offset
		r.n++
	}
	return Result{Ops: len(steps), Failures: r.failures, Invalid: r.invalid, PeakEnd: r.peak}, nil
}

// refused counts a refused allocation in the running Result.
//
//go:noinline
func (r *Replayer) refused(err error) {
	r.failures++
	if err != offset.ErrOutOfSpace {
		r.invalid++
	}
}

// Offsets returns the offset of each allocation of the last Run, in order,
// with Refused for the refused ones. The slice is the Replayer's own and is
// overwritten by the next Run.
func (r *Replayer) Offsets() []uint32 { return r.offsets }
