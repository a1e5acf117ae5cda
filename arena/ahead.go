package arena

import (
	"math"

	"github.com/gpumem/gpumem/device"
)

// Growing ahead of need (Options.GrowAhead). Creating a large buffer can
// cost the caller milliseconds (the driver allocates and clears its
// memory), and a growth creates one in the middle of the request that
// needs it. With GrowAhead, an arena whose free elements fall below that
// fraction of its capacity (checked after each Allocate and Place that
// succeeds) starts creating the buffers of its next growth at once, of
// capacity times GrowthFactor (at most MaxElems), through device.Prepare,
// off the caller's goroutine. Where the device makes them at the growth
// instead (one that is not a device.Preparer, as the host device; a
// budget's account without room for them) they hold no memory before it;
// the arena decides alike on every device, so its capacities do not
// depend on which.
//
// The growth that comes takes them when they hold its target, and grows
// to their size (more than a growth for want of one piece asks for: what
// the next full growth would have made), waiting only for what is left
// of their creation; a growth that needs more gives them up and creates
// its own. A shrink and Release give them up. Until taken they hold
// their memory beside the arena's buffers (Stats.PreparedBytes): the
// price of growth without the wait.

// ahead is the buffers of the next growth being prepared: one per plane,
// for elems elements.
type ahead struct {
	elems   uint32
	bytes   uint64 // what those made ahead hold (device.Pending.Ahead)
	pending []*device.Pending
}

// prepareAhead starts preparing the next growth's buffers when
// Options.GrowAhead asks for it and none are being prepared.
func (a *Arena) prepareAhead() {
	if a.opts.GrowAhead == 0 || a.ahead != nil || a.released {
		return
	}
	capacity := a.alloc.Capacity()
	if float64(a.alloc.Report().Free) >= a.opts.GrowAhead*float64(capacity) {
		return
	}
	target := min(math.Ceil(float64(capacity)*a.opts.GrowthFactor), float64(a.opts.MaxElems))
	if target <= float64(capacity) {
		return // at MaxElems: no growth to prepare
	}
	ah := &ahead{elems: uint32(target)}
	for i := range a.Planes() {
		desc := a.opts.bufferDesc(i, ah.elems)
		p := device.Prepare(a.dev, desc)
		ah.pending = append(ah.pending, p)
		if p.Ahead() {
			ah.bytes += desc.Size
		}
	}
	a.ahead = ah
}

// takeAhead returns the prepared buffers and their capacity when they
// hold at least elems elements, nil otherwise. Either way none are
// prepared after it: those too small, or whose creation failed, are
// given up (the growth creates its own, and reports the device's error
// if that fails too).
func (a *Arena) takeAhead(elems uint32) ([]device.Buffer, uint32) {
	ah := a.ahead
	a.ahead = nil
	if ah == nil {
		return nil, 0
	}
	if ah.elems < elems {
		ah.release()
		return nil, 0
	}
	bufs := make([]device.Buffer, 0, len(ah.pending))
	for i, p := range ah.pending {
		b, err := p.Take()
		if err != nil {
			for _, b := range bufs {
				b.Release()
			}
			for _, p := range ah.pending[i+1:] {
				p.Release()
			}
			return nil, 0
		}
		bufs = append(bufs, b)
	}
	return bufs, ah.elems
}

// dropAhead gives up the prepared buffers, if any.
func (a *Arena) dropAhead() {
	if a.ahead != nil {
		a.ahead.release()
		a.ahead = nil
	}
}

func (ah *ahead) release() {
	for _, p := range ah.pending {
		p.Release()
	}
}
