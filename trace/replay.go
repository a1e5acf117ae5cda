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

// Run replays the Program into a, which should be empty and normally has
// the Program's Capacity. Every allocation is asked of a as is; a refusal of
// any kind counts as a failure, and the later free of its slot is skipped.
// The allocations still live at the end stay allocated in a (so its
// Report describes the end state); Reset a before running again.
//
// Run allocates nothing. Its only error is ErrFreeFailed, when a refuses
// to free an allocation it handed out.
func (r *Replayer) Run(a *offset.Allocator) (Result, error) {
	var (
		slots    = r.slots
		offsets  = r.offsets
		n        = 0
		failures = 0
		invalid  = 0
		peak     uint32
	)
	for i, s := range r.p.Steps {
		if s.slot&freeBit != 0 {
			h := slots[s.slot&^freeBit]
			if h.Size == 0 { // refused: skip its free
				continue
			}
			if err := a.Free(h); err != nil {
				return Result{}, fmt.Errorf("%w: step %d: %w", ErrFreeFailed, i, err)
			}
			continue
		}
		h, err := a.Allocate(s.size)
		if err != nil {
			failures++
			if err != offset.ErrOutOfSpace {
				invalid++
			}
			slots[s.slot] = offset.Allocation{}
			offsets[n] = Refused
			n++
			continue
		}
		slots[s.slot] = h
		offsets[n] = h.Offset
		n++
		if end := h.Offset + s.size; end > peak {
			peak = end
		}
	}
	return Result{Ops: len(r.p.Steps), Failures: failures, Invalid: invalid, PeakEnd: peak}, nil
}

// Offsets returns the offset of each allocation of the last Run, in order,
// with Refused for the refused ones. The slice is the Replayer's own and is
// overwritten by the next Run.
func (r *Replayer) Offsets() []uint32 { return r.offsets }
