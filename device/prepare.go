package device

import (
	"fmt"
	"sync"
)

// Buffers and textures made ahead of need. Creating a large buffer or
// texture can cost the caller milliseconds (the driver allocates the
// memory and clears it), and a manager that grows creates one in the
// middle of the request that needs it. Prepare (PrepareTexture) starts
// creating one early, and the manager takes it when the need comes: on a
// device that is a Preparer (TexturePreparer), the creation runs on a
// goroutine of its own while the caller goes on, from a moment the device
// chooses (webgpu's: the next Fence, after the frame's submits, which
// would wait for the driver's work), and Take waits only for what is
// left; on any other device, Take creates it then, as CreateBuffer
// (CreateTexture) would have.
//
// A Pending is used on the device's goroutine, as the device is: exactly
// one Take or Release, once. Until then a Preparer's object holds its
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
	return atTake(func() (Buffer, error) { return dev.CreateBuffer(desc) })
}

// TexturePreparer is a Device that creates textures off the caller's
// goroutine. Find it with PrepareTexture.
type TexturePreparer interface {
	// PrepareTexture starts creating a texture of desc and returns at
	// once. The Pending's Take returns what CreateTexture(desc) would
	// have: the texture, or its errors.
	PrepareTexture(desc TextureDesc) *PendingTexture
}

// PrepareTexture starts creating a texture of desc on dev: off the
// caller's goroutine if dev is a TexturePreparer, else when the Pending
// is taken.
func PrepareTexture(dev Device, desc TextureDesc) *PendingTexture {
	if p, ok := dev.(TexturePreparer); ok {
		return p.PrepareTexture(desc)
	}
	return CreateTextureAtTake(dev, desc)
}

// CreateTextureAtTake returns a PendingTexture whose Take calls
// dev.CreateTexture(desc) and whose Release does nothing: what
// PrepareTexture gives on a device that is not a TexturePreparer.
func CreateTextureAtTake(dev Device, desc TextureDesc) *PendingTexture {
	return atTake(func() (Texture, error) { return dev.CreateTexture(desc) })
}

// atTake returns a Pending whose Take calls create.
func atTake[T any](create func() (T, error)) *PendingOf[T] {
	p := NewPending(func(take bool) (T, error) {
		if !take {
			var none T
			return none, nil
		}
		return create()
	})
	p.atTake = true
	return p
}

// Pending is a buffer being created ahead of need; see Prepare.
type Pending = PendingOf[Buffer]

// PendingTexture is a texture being created ahead of need; see
// PrepareTexture.
type PendingTexture = PendingOf[Texture]

// PendingOf is a T (Buffer or Texture) being created ahead of need.
type PendingOf[T any] struct {
	finish func(take bool) (T, error)
	once   sync.Once // finish runs once: at the first Take or Release
	atTake bool      // made by Take (CreateAtTake, CreateTextureAtTake)
}

// Ahead reports whether the object is made ahead of need: its memory is
// held from the Prepare until the Take or Release. One of CreateAtTake
// or CreateTextureAtTake is not: Take makes it.
func (p *PendingOf[T]) Ahead() bool { return !p.atTake }

// NewPending returns a Pending that calls finish once: finish(true) at
// Take, whose result Take returns, or finish(false) at Release, which
// must give the object's memory back (a Preparer's waits for its
// goroutine and destroys the object).
func NewPending[T any](finish func(take bool) (T, error)) *PendingOf[T] {
	return &PendingOf[T]{finish: finish}
}

// Take returns the object, waiting for its creation to end. A second
// Take, or one after Release, is ErrInvalidObject.
func (p *PendingOf[T]) Take() (T, error) {
	var (
		v   T
		err = fmt.Errorf("device: pending object taken or released already: %w", ErrInvalidObject)
	)
	p.once.Do(func() { v, err = p.finish(true) })
	return v, err
}

// Release gives the object up, once its creation has ended. Releasing a
// Pending taken or released already, or nil, does nothing.
func (p *PendingOf[T]) Release() {
	if p == nil {
		return
	}
	p.once.Do(func() { _, _ = p.finish(false) })
}
