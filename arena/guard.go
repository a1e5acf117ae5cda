package arena

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/invariant"
)

// Guards: a debugging aid against writes past the end of an allocation.
// With Options.GuardBytes set, every allocation takes at least that many
// bytes more than asked, rounded up to whole elements: its margin, the
// elements after the ones asked for (with RoundToBins, the bin's slack
// too). The margin is filled with GuardPattern when the allocation is
// made, and travels with it through moves and growth, which copy whole
// allocations. CheckGuards reports the allocations whose margins changed:
// some write reached past their end. Off (zero) by default, and then free:
// no margins, no writes, no checks.

// GuardPattern is the word a margin holds, little-endian.
const GuardPattern = 0xFDFD_FDFD

// MarginElems returns the elements of margin each allocation of an arena
// of o takes: GuardBytes rounded up to whole elements of ElemSize (4 when
// zero); 0 without guards. O(1).
func (o Options) MarginElems() uint32 {
	e := uint64(o.ElemSize)
	if e == 0 {
		e = 4
	}
	return uint32((uint64(o.GuardBytes) + e - 1) / e)
}

// movedBytes returns the bytes a move of s carries: its elements, and
// with guards its margin too.
func (a *Arena) movedBytes(s *slot) uint64 { return a.carried(s.elems, s.alloc.Size) }

// carried returns the bytes that a move or a write of an allocation of
// elems elements in a span of size elements carries: the elements, and
// with guards the whole span, margin included.
func (a *Arena) carried(elems, size uint32) uint64 {
	if a.opts.GuardBytes > 0 {
		elems = size
	}
	return uint64(elems) * uint64(a.opts.ElemSize)
}

// fillGuard writes the pattern into the margin of the new allocation id.
func (a *Arena) fillGuard(id uint32) error {
	s := &a.slots[id]
	n := uint64(s.alloc.Size-s.elems) * uint64(a.opts.ElemSize)
	if n == 0 {
		return nil
	}
	if uint64(len(a.guardFill)) < n {
		a.guardFill = make([]byte, n)
		for i := range a.guardFill {
			a.guardFill[i] = 0xFD // GuardPattern's every byte
		}
	}
	off := uint64(s.alloc.Offset+s.elems) * uint64(a.opts.ElemSize)
	return a.dev.WriteBuffer(a.buf, off, a.guardFill[:n])
}

// CheckGuards returns the live allocations whose margins no longer hold
// GuardPattern, in address order: something wrote past their end (into
// the margin; a write beyond the margin lands in the next allocation or
// in free space). It waits for the device, which checks the margins where
// it can (device.CheckGuards: a compute kernel on a GPU); nil when none
// changed, or without Options.GuardBytes. O(live allocations) and the
// margins' bytes.
func (a *Arena) CheckGuards() ([]Handle, error) {
	if a.released {
		return nil, errReleased
	}
	if a.opts.GuardBytes == 0 {
		return nil, nil
	}
	guards := a.guards[:0]
	ids := a.guardIDs[:0]
	es := uint64(a.opts.ElemSize)
	for h, ok := a.alloc.First(); ok; {
		s := &a.slots[h.ID()]
		guards = append(guards, device.Guard{
			Offset: uint64(h.Offset+s.elems) * es,
			Size:   uint64(h.Size-s.elems) * es,
		})
		ids = append(ids, h.ID())
		var err error
		if h, ok, err = a.alloc.Next(h); err != nil {
			invariant.Broken("arena", "%q: check guards: step past a live range: %v", a.opts.Label, err)
		}
	}
	a.guards, a.guardIDs = guards, ids
	bad, err := device.CheckGuards(a.dev, a.buf, guards, GuardPattern, nil)
	if err != nil {
		return nil, fmt.Errorf("arena %q: check guards: %w", a.opts.Label, err)
	}
	var hs []Handle
	for _, i := range bad {
		hs = append(hs, a.handle(ids[i]))
	}
	return hs, nil
}
