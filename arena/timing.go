package arena

import (
	"fmt"
	"time"

	"github.com/gpumem/gpumem/device"
)

// GPU time of moves. With Options.TimeMoves, on a device with a Timer
// (device.TimerOf), every batch of moves a sweep or a compaction records
// (its moves in the main buffer and in every plane) is bracketed by two
// stamps, one written before the batch's first command and one after its
// last: the span's GPU time is the batch's kernels (with the upload of
// their move tables), without the submit, the
// queue's idle time or the CPU's wake-up at the fence, which a caller's
// wall clock around Submit and Wait includes. Results come back
// asynchronously; the arena collects them, without waiting, at its next
// batch and at Stats, into Stats.TimedBatches and Stats.MoveGPUTime.
//
// The spans whose results have not come back are kept, oldest first, in
// a.timing.pending: len(pending) <= maxPendingSpans always holds (the
// oldest is dropped, untimed, past it).

// maxPendingSpans is the most batches whose results an arena waits for:
// a frame or two of sweeps, well inside device.StampWindow.
const maxPendingSpans = 64

// moveTiming is an arena's GPU timing of its batches of moves.
type moveTiming struct {
	timer   device.Timer // nil: not timed
	pending []device.Span
	last    device.Span // the newest batch's span; zero before the first
}

// startTiming sets the timer up, where opts ask for it and dev has one.
func (a *Arena) startTiming() {
	if !a.opts.TimeMoves {
		return
	}
	if t, ok := device.TimerOf(a.dev); ok {
		a.timing.timer = t
	}
}

// stamp writes a stamp for a batch of moves, or returns 0 when the
// arena does not time them.
func (a *Arena) stamp() (device.Stamp, error) {
	if a.timing.timer == nil {
		return 0, nil
	}
	s, err := a.timing.timer.Stamp()
	if err != nil {
		return 0, fmt.Errorf("arena %q: time moves: %w", a.opts.Label, err)
	}
	return s, nil
}

// timed files the span of a batch just recorded.
func (a *Arena) timed(s device.Span) {
	if s.Begin == 0 {
		return
	}
	t := &a.timing
	if len(t.pending) == maxPendingSpans {
		t.pending = t.pending[:copy(t.pending, t.pending[1:])]
	}
	t.pending = append(t.pending, s)
	t.last = s
}

// collect adds the GPU time of every pending span whose results are back
// to the stats, oldest first, stopping at the first that is not. It never
// blocks (device.Timer.StampTime polls the device at most). A span the
// timer no longer holds is dropped, untimed.
func (a *Arena) collect() {
	t := &a.timing
	n := 0
	for _, s := range t.pending {
		d, ok, err := device.Elapsed(t.timer, s)
		if err == nil && !ok {
			break
		}
		n++
		if err == nil {
			a.stats.TimedBatches++
			a.stats.MoveGPUTime += d
		}
	}
	t.pending = t.pending[:copy(t.pending, t.pending[n:])]
}

// LastMoveSpan returns the stamps around the newest batch of moves the
// arena recorded, for device.Elapsed (or to combine with a caller's own
// stamps); false when the arena does not time its moves (see
// Options.TimeMoves) or has recorded none. O(1).
func (a *Arena) LastMoveSpan() (device.Span, bool) {
	return a.timing.last, a.timing.last.Begin != 0
}

// MoveTime returns the GPU time of the newest batch of moves, or ok
// false while its results are not back (or it is not timed). It never
// blocks. O(1).
func (a *Arena) MoveTime() (d time.Duration, ok bool, err error) {
	s, timed := a.LastMoveSpan()
	if !timed {
		return 0, false, nil
	}
	return device.Elapsed(a.timing.timer, s)
}
