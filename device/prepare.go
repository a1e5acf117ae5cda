package device

import (
	"fmt"
	"sync"
)

// Buffers made ahead of need. Creating a large buffer can cost the caller
// milliseconds (the driver allocates the memory and clears it), and a
// manager that grows creates one in the middle of the request that needs
// it. Prepare starts creating a buffer early, and the manager takes it when
// the need comes: on a device that is a Preparer, the creation runs on a
// goroutine of its own while the caller goes on, from a moment the device
// chooses (webgpu's: the next Fence, after the frame's submits, which
// would wait for the driver's work), and Take waits only for what is
// left; on any other device, Take creates the buffer then, as
// CreateBuffer would have.
//
// A Pending is used on the device's goroutine, as the device is: exactly
// one Take or Release, once. Until then a Preparer's buffer holds its
// memory beside everything else.

// Preparer is a Device that creates buffers off the caller's goroutine.
// Find it with Prepare.
type Preparer interface {
	// PrepareBuffer starts creating a buffer of desc and returns at once.
	// The Pending's Take returns what CreateBuffer(desc) would have: the
	// buffer, or its errors.
	PrepareBuffer(desc BufferDesc) *Pending
}

// Prepare starts creating a buffer of desc on dev: off the caller's
// goroutine if dev is a Preparer, else when the Pending is taken.
func Prepare(dev Device, desc BufferDesc) *Pending {
	if p, ok := dev.(Preparer); ok {
		return p.PrepareBuffer(desc)
	}
	return CreateAtTake(dev, desc)
}

// CreateAtTake returns a Pending whose Take calls dev.CreateBuffer(desc)
// and whose Release does nothing: what Prepare gives on a device that
// is not a Preparer.
func CreateAtTake(dev Device, desc BufferDesc) *Pending {
	p := NewPending(func(take bool) (Buffer, error) {
		if !take {
			return nil, nil
		}
		return dev.CreateBuffer(desc)
	})
	p.atTake = true
	return p
}

// Pending is a buffer being created ahead of need; see Prepare.
type Pending struct {
	finish func(take bool) (Buffer, error)
	once   sync.Once // finish runs once: at the first Take or Release
	atTake bool      // made by Take (CreateAtTake)
}

// Ahead reports whether the buffer is made ahead of need: its memory is
// held from the Prepare until the Take or Release. One of CreateAtTake
// is not: Take makes it.
func (p *Pending) Ahead() bool { return !p.atTake }

// NewPending returns a Pending that calls finish once: finish(true) at
// Take, whose result Take returns, or finish(false) at Release, which
// must give the buffer's memory back (a Preparer's waits for its
// goroutine and destroys the buffer).
func NewPending(finish func(take bool) (Buffer, error)) *Pending {
	return &Pending{finish: finish}
}

// Take returns the buffer, waiting for its creation to end. A second Take,
// or one after Release, is ErrInvalidObject.
func (p *Pending) Take() (Buffer, error) {
	var (
		b   Buffer
		err = fmt.Errorf("device: pending buffer taken or released already: %w", ErrInvalidObject)
	)
	p.once.Do(func() { b, err = p.finish(true) })
	return b, err
}

// Release gives the buffer up, once its creation has ended. Releasing a
// Pending taken or released already, or nil, does nothing.
func (p *Pending) Release() {
	if p == nil {
		return
	}
	p.once.Do(func() { _, _ = p.finish(false) })
}
