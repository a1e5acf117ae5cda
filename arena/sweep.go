package arena

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/invariant"
	"github.com/gpumem/gpumem/offset"
)

// The sweep walks live allocations in address order with a cursor, sliding
// each down over the free region just before it (offset.SlideDown), so the
// holes it passes gather into one bubble that travels up with it and ends
// as the free region at the tail. Each Sweep call takes a bounded number of
// steps and records all its byte moves as one device.Move batch, whose
// sequential semantics are exactly the slides' order.
//
// Frees during an episode keep the walk right:
//   - a freed allocation the cursor or restart names hands its role to the
//     allocation after it;
//   - a hole opened behind the cursor (or while no pass runs) moves restart
//     down to the allocation after it, so the next episode's pass starts
//     there instead of at offset 0. The running pass does not step back,
//     and its episode ends when it reaches the end: under steady churn a
//     pass that went back for every new hole would never end, and would
//     move every byte again each time round.
//
// Allocations during an episode may fill holes anywhere; a step that finds
// no hole before its allocation moves nothing and costs one link walk.

// arm starts a sweep episode, unless one is running.
func (a *Arena) arm() {
	if a.sw.armed {
		return
	}
	a.sw.armed, a.sw.grew = true, false
	if a.sw.cursor == none {
		a.sw.cursor = a.sw.restart
		a.sw.restart = none
		if a.sw.cursor == none {
			a.sw.cursor = a.firstID()
		}
	}
	a.stats.SweepsArmed++
}

// Armed reports whether a sweep episode is running: Sweep has work to do.
func (a *Arena) Armed() bool { return a.sw.armed }

// Arm starts a sweep episode by hand, as a fragmentation refusal would.
func (a *Arena) Arm() {
	if !a.released {
		a.arm()
	}
}

func (a *Arena) firstID() uint32 {
	if h, ok := a.alloc.First(); ok {
		return h.ID()
	}
	return none
}

// after returns the id of the allocation after id in address order.
func (a *Arena) after(id uint32) uint32 {
	next, ok, err := a.alloc.Next(a.slots[id].alloc)
	if err != nil || !ok {
		return none
	}
	return next.ID()
}

func (a *Arena) below(x, y uint32) bool {
	return a.slots[x].alloc.Offset < a.slots[y].alloc.Offset
}

// forget keeps the sweep pointers right before allocation id is freed.
// The allocation after id, which each pointer change names, is looked up
// only when a pointer changes: most frees name neither pointer and lie
// above the lowest known hole, and cost two comparisons of offsets.
func (a *Arena) forget(id uint32) {
	sw := &a.sw
	switch {
	case sw.cursor == id || sw.restart == id:
		// The role passes to the allocation after id. (When the cursor
		// steps off id, the hole id leaves is right behind the running
		// pass, which closes it: no restart for it.)
		succ := a.after(id)
		if sw.cursor == id {
			sw.cursor = succ
		}
		if sw.restart == id {
			sw.restart = succ
		}
	case (sw.cursor == none || a.below(id, sw.cursor)) && (sw.restart == none || a.below(id, sw.restart)):
		// A hole behind the pass (or with no pass) and below any known
		// one. With nothing after it the hole merges into the tail, and
		// right behind the cursor the running pass closes it: neither
		// needs a restart.
		if s := a.after(id); s != none && s != sw.cursor {
			sw.restart = s
		}
	}
}

// Sweep takes one bounded step of the running sweep episode, if any: it
// slides up to limits.Moves allocations down (at least one when a move is
// possible), records their bytes' moves on the device as one batch,
// reports each (Changes, or OnMove), and returns them. The slice is the
// arena's, valid until its next call. Zero fields of limits take
// Options.SweepLimits's. O(limits).
//
// When the pass reaches the end with no hole left behind it, the episode
// completes: all free space is one region at the tail. With
// Options.ShrinkBelow, a call may also move the arena into a smaller
// buffer (shrink.go).
func (a *Arena) Sweep(limits SweepLimits) ([]Move, error) {
	if a.released {
		return nil, errReleased
	}
	completed, err := a.sweep(limits.Or(a.opts.SweepLimits))
	if completed {
		a.stats.SweepsCompleted++
	}
	if err == nil && a.opts.ShrinkBelow > 0 {
		err = a.watchShrink()
	}
	return a.done, err
}

// sweep runs the episode within b and reports whether it completed.
func (a *Arena) sweep(b SweepLimits) (completed bool, err error) {
	a.moves, a.done = a.moves[:0], a.done[:0]
	if !a.sw.armed {
		return false, nil
	}
	var bytes uint64
	e := uint64(a.opts.ElemSize)
	for steps := 0; steps < b.Steps && len(a.done) < b.Moves && (bytes < b.Bytes || len(a.done) == 0); steps++ {
		id := a.sw.cursor
		if id == none {
			// The pass reached the end: the holes it passed are one
			// region at the tail. Holes opened behind it since are
			// left, with restart, for the next episode; under steady
			// churn a pass that stepped back for them would never end.
			a.sw.armed, a.sw.grew = false, false
			completed = true
			break
		}
		s := &a.slots[id]
		moved, dist, err := a.alloc.SlideDown(s.alloc)
		if err != nil {
			invariant.Broken("arena", "%q: sweep: slide of a live range: %v", a.opts.Label, err)
		}
		if dist > 0 {
			from := s.alloc.Offset
			s.alloc = moved
			a.moves = append(a.moves, device.Move{Src: uint64(from) * e, Dst: uint64(moved.Offset) * e, Size: a.movedBytes(s)})
			a.done = append(a.done, Move{Handle: a.handle(id), Owner: s.owner, From: from, To: moved.Offset, Elems: s.elems})
			bytes += uint64(s.elems) * e
		}
		a.sw.cursor = a.after(id)
		a.stats.SweepSteps++
	}
	return completed, a.flush(bytes, false)
}

// flush records the batch of moves on the device and reports them;
// marked says the batch's walk already marked them for the change log.
func (a *Arena) flush(bytes uint64, marked bool) error {
	if len(a.moves) == 0 {
		return nil
	}
	if a.timing.timer != nil {
		a.collect()
	}
	begin, err := a.stamp()
	if err != nil {
		return err
	}
	if err := a.dev.Move(a.buf, a.moves); err != nil {
		return fmt.Errorf("arena %q: move %d allocations: %w", a.opts.Label, len(a.moves), err)
	}
	if err := a.movePlanes(); err != nil {
		return err
	}
	if begin != 0 {
		end, err := a.stamp()
		if err != nil {
			return err
		}
		a.timed(device.Span{Begin: begin, End: end})
	}
	a.stats.Moves += uint64(len(a.done))
	a.stats.BytesMoved += bytes
	if a.placing {
		a.reportMoves() // Place reports them, once its batch is placed
		return nil
	}
	if marked {
		a.boundLog()
		return nil
	}
	a.report(a.done)
	return nil
}

// Compact packs every live allocation at the start of the buffer, in one
// device batch, ending any sweep episode: all free space becomes one region
// at the tail. It returns the moves, as Sweep does. O(live allocations).
func (a *Arena) Compact() ([]Move, error) {
	if a.released {
		return nil, errReleased
	}
	if err := a.compact(); err != nil {
		return nil, err
	}
	return a.done, nil
}

func (a *Arena) compact() error {
	// Room for every live allocation's move up front: one allocation of
	// each list at most, instead of growing them step by step.
	n := a.alloc.Len()
	a.moves = slices.Grow(a.moves[:0], n)
	a.done = slices.Grow(a.done[:0], n)
	a.movedIDs = slices.Grow(a.movedIDs, n)
	// One walk packs the allocator (offset.Pack: the slides of a full
	// pass, without filing a free region at each step) and builds the
	// batch; the moves are those of the pass, in its order. Without
	// OnMove, the walk also marks the moves for the change log while
	// it holds each slot (report's marking, without a second pass over
	// the slots in random order).
	marking := a.opts.OnMove == nil && !a.placing
	e := uint64(a.opts.ElemSize)
	var bytes uint64
	a.alloc.Pack(func(h offset.Allocation, from uint32) {
		id := h.ID()
		s := &a.slots[id]
		s.alloc = h
		if marking {
			a.mark(id, from)
		}
		size := a.movedBytes(s)
		a.moves = append(a.moves, device.Move{Src: uint64(from) * e, Dst: uint64(h.Offset) * e, Size: size})
		a.done = append(a.done, Move{Handle: a.handle(id), Owner: s.owner, From: from, To: h.Offset, Elems: s.elems})
		bytes += size
	})
	a.stats.SweepSteps += uint64(n)
	a.sw = sweep{cursor: none, restart: none}
	a.stats.FullCompactions++
	return a.flush(bytes, marking)
}

// isDeviceBroken reports errors after which no retry can help.
func isDeviceBroken(err error) bool {
	return errors.Is(err, device.ErrDeviceLost) || errors.Is(err, device.ErrReleased)
}

// movePlanes records the batch a.moves, made in the first buffer's bytes,
// on every plane in its element size. A failure leaves the planes behind
// the first buffer; only a lost device fails a checked batch.
func (a *Arena) movePlanes() error {
	if len(a.planes) == 0 {
		return nil
	}
	e := uint64(a.opts.ElemSize)
	for i, buf := range a.planes {
		pe := uint64(a.opts.Planes[i])
		ms := slices.Grow(a.planeMoves[:0], len(a.moves))
		for _, m := range a.moves {
			ms = append(ms, device.Move{Src: m.Src / e * pe, Dst: m.Dst / e * pe, Size: m.Size / e * pe})
		}
		a.planeMoves = ms
		if err := a.dev.Move(buf, ms); err != nil {
			return fmt.Errorf("arena %q: plane %d: move %d allocations: %w", a.opts.Label, i+1, len(ms), err)
		}
	}
	return nil
}
