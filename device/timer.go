package device

import (
	"fmt"
	"time"
)

// GPU time. A Timer writes timestamps into the work a device records and
// reads them back once the GPU has run that work: what a span of recorded
// work (a batch of moves, a frame's updates) cost the GPU, beside the wall
// time a caller sees around Submit and Wait. It is optional: a backend has
// one only where its adapter can write timestamps (device/webgpu on an
// adapter with timestamp queries inside command encoders); the host
// backend has none. Find it with TimerOf.
//
// The contract, for every Timer:
//
//  1. Stamp writes a timestamp into the device's recorded work, in call
//     order: the GPU takes it once it has finished everything earlier
//     calls recorded or wrote, before later calls' work ends (work the
//     GPU may start early, with no dependency on earlier work, can
//     overlap it). A Stamp records work, as a CopyBuffer does: Submit,
//     Fence or Wait sends it to the GPU.
//  2. StampTime reads a stamp's time, in nanoseconds on the device's
//     timestamp clock (one clock for every stamp of the device, with an
//     origin of its own: compare stamps, never a stamp with the CPU's
//     clock). It never blocks: it reports ok false until the work that
//     wrote the stamp has been submitted and has finished, and the
//     result has come back (results are copied into mapped buffers
//     asynchronously, with no wait). After Wait returns, every stamp
//     written before it reads ok.
//  3. A Timer keeps the results of its newest StampWindow stamps; an
//     older stamp reads ErrOutOfBounds, and a Stamp the Timer did not
//     return (the zero Stamp, another timer's, one not yet written)
//     ErrInvalidObject. Both are errors of the call only.
//  4. Two stamps in one submission (no Submit, Fence, Wait, ReadBuffer or
//     queue write between them) measure the GPU's work between them.
//     Stamps in different submissions also count the time the GPU spent
//     idle, waiting for the next submission.
//
// A Timer belongs to its device: it fails with the device's errors
// (ErrReleased after the device's Release, ErrDeviceLost) and is no more
// safe for concurrent use than the device.

// StampWindow is the number of newest stamps whose results a Timer keeps.
const StampWindow = 4096

// Stamp names one timestamp a Timer wrote, numbered from 1 in the order
// written. The zero Stamp names none.
type Stamp uint64

// Span is the work recorded between two stamps.
type Span struct{ Begin, End Stamp }

// Timer writes and reads GPU timestamps; see the contract above.
type Timer interface {
	// Stamp writes a timestamp into the recorded work and returns it.
	// O(1); it allocates only when it needs a new block of queries.
	Stamp() (Stamp, error)
	// StampTime returns s's time in nanoseconds, or ok false while its
	// result is not back yet. It never blocks; it polls the device when
	// s is not ready.
	StampTime(s Stamp) (ns uint64, ok bool, err error)
}

// A Timed device may have a Timer. Wrappers of a device (a budget's
// account, a test's view) forward it with one line:
//
//	func (w *wrapper) Timer() (device.Timer, bool) { return device.TimerOf(w.dev) }
//
// so that spans recorded through the wrapper are timed by the device
// underneath, which records the work.
type Timed interface {
	// Timer returns the device's Timer, or false where it cannot time
	// its work (no timestamp support on the adapter, or not requested on
	// a device the program owns).
	Timer() (Timer, bool)
}

// TimerOf returns dev's Timer: false unless dev is Timed and has one.
func TimerOf(dev Device) (Timer, bool) {
	if t, ok := dev.(Timed); ok {
		return t.Timer()
	}
	return nil, false
}

// Elapsed returns the GPU time of span s: its End's time minus its
// Begin's, or ok false while either result is not back. An End stamped
// before its Begin is ErrInvalidObject.
func Elapsed(t Timer, s Span) (d time.Duration, ok bool, err error) {
	if s.End < s.Begin {
		return 0, false, fmt.Errorf("device: span %d..%d ends before it begins: %w", s.Begin, s.End, ErrInvalidObject)
	}
	begin, ok, err := t.StampTime(s.Begin)
	if err != nil || !ok {
		return 0, false, err
	}
	end, ok, err := t.StampTime(s.End)
	if err != nil || !ok {
		return 0, false, err
	}
	if end < begin {
		// A clock that stepped back (a GPU's clocks are monotonic on one
		// queue; a driver may still reset them): report no time, not a
		// wrapped one.
		return 0, true, nil
	}
	return time.Duration(end - begin), true, nil
}
