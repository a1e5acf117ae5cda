package budget

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Account is a device.Device that charges what it creates to one name of
// its Budget. It forwards every call to the budget's device, the optional
// device.Filler, device.GuardChecker and device.Timed included, so a manager works on an
// account as on the device. For Release it is a device of its own: see
// Release.
type Account struct {
	dev      device.Device
	b        *Budget
	name     string
	reclaim  Reclaimer
	bytes    uint64
	buffers  []*buffer  // live; each knows its index
	textures []*texture // live; each knows its index
	prepared int        // buffers being made ahead of need (PrepareBuffer)
	released bool
}

// The device interfaces an Account forwards.
var (
	_ device.Device          = (*Account)(nil)
	_ device.Filler          = (*Account)(nil)
	_ device.GuardChecker    = (*Account)(nil)
	_ device.Timed           = (*Account)(nil)
	_ device.Preparer        = (*Account)(nil)
	_ device.TexturePreparer = (*Account)(nil)
)

// Name returns the account's name.
func (a *Account) Name() string { return a.name }

// SetReclaimer sets the function the budget calls when another account's
// request does not fit; nil removes it.
func (a *Account) SetReclaimer(f Reclaimer) { a.reclaim = f }

// Release releases every buffer and texture the account still holds
// (crediting them), then the account, as device.Device.Release does: later
// calls fail with device.ErrReleased and its reclaimer is no longer asked.
// The budget's device is not the account's: it stays usable and stays its
// owner's to release. The account keeps its name in the budget's Usage.
// Idempotent.
func (a *Account) Release() {
	if a.released {
		return
	}
	for len(a.buffers) > 0 {
		a.buffers[len(a.buffers)-1].Release()
	}
	for len(a.textures) > 0 {
		a.textures[len(a.textures)-1].Release()
	}
	a.released = true
}

// usable returns device.ErrReleased, with context, after Release.
func (a *Account) usable(op string) error {
	if a.released {
		return fmt.Errorf("budget: account %q: %s: %w", a.name, op, device.ErrReleased)
	}
	return nil
}

// Limits returns the device's limits.
func (a *Account) Limits() device.Limits { return a.dev.Limits() }

// CreateBuffer creates a buffer on the device, charged to the account: it
// fails with ErrOverBudget (and device.ErrOutOfMemory) when the budget
// cannot make room, and with the device's errors as the device's
// CreateBuffer does. The descriptor is checked by the device first, so an
// invalid one is refused as invalid, not as over budget.
func (a *Account) CreateBuffer(desc device.BufferDesc) (device.Buffer, error) {
	if err := a.usable("CreateBuffer"); err != nil {
		return nil, err
	}
	if err := desc.Validate(a.Limits()); err != nil {
		return a.dev.CreateBuffer(desc) // the device says what is wrong
	}
	if err := a.b.reserve(a, desc.Size, "buffer "+quote(desc.Label)); err != nil {
		return nil, err
	}
	buf, err := a.dev.CreateBuffer(desc)
	if err != nil {
		a.b.credit(desc.Size)
		return nil, err
	}
	a.bytes += desc.Size
	v := &buffer{Buffer: buf, a: a, at: len(a.buffers)}
	a.buffers = append(a.buffers, v)
	return v, nil
}

// PrepareBuffer starts making a buffer of desc ahead of need, charged to
// the account from now on, where the budget's device makes buffers ahead
// (a device.Preparer whose Pending is Ahead) and the budget has room for
// it as it is: memory made ahead of need asks no reclaimer for room, so it
// never pushes out what others hold. Otherwise (no room, a device that
// makes buffers at Take, a desc the device would refuse, a released
// account) the Pending makes the buffer at Take through CreateBuffer, with
// its rules and errors. A Take on an account released meanwhile gives the
// buffer up and fails with device.ErrReleased.
func (a *Account) PrepareBuffer(desc device.BufferDesc) *device.Pending {
	if a.released || desc.Validate(a.Limits()) != nil {
		return device.CreateAtTake(a, desc)
	}
	return prepare(a, desc.Size, "buffer", desc.Label,
		func() *device.Pending { return device.Prepare(a.dev, desc) },
		func() *device.Pending { return device.CreateAtTake(a, desc) },
		func(buf device.Buffer) device.Buffer {
			v := &buffer{Buffer: buf, a: a, at: len(a.buffers)}
			a.buffers = append(a.buffers, v)
			return v
		})
}

// PrepareTexture starts making a texture of desc ahead of need, charged
// to the account, as PrepareBuffer does a buffer (a
// device.TexturePreparer's).
func (a *Account) PrepareTexture(desc device.TextureDesc) *device.PendingTexture {
	if a.released || desc.Validate(a.Limits()) != nil {
		return device.CreateTextureAtTake(a, desc)
	}
	n := desc.Bytes()
	return prepare(a, n, "texture", desc.Label,
		func() *device.PendingTexture { return device.PrepareTexture(a.dev, desc) },
		func() *device.PendingTexture { return device.CreateTextureAtTake(a, desc) },
		func(tex device.Texture) device.Texture {
			v := &texture{Texture: tex, a: a, bytes: n, at: len(a.textures)}
			a.textures = append(a.textures, v)
			return v
		})
}

// prepare is PrepareBuffer and PrepareTexture for an object (a buffer or
// a texture, kind) of n bytes: ahead starts making it on the device,
// atTake makes it at Take through the account instead (when the budget
// has no room as it is, or the device makes it at Take), and own makes
// what Take got the account's.
func prepare[T any](a *Account, n uint64, kind, label string, ahead, atTake func() *device.PendingOf[T], own func(T) T) *device.PendingOf[T] {
	if n > a.b.opts.Bytes-a.b.bytes {
		return atTake()
	}
	p := ahead()
	// Where n fits, reserve asks no reclaimer and cannot fail.
	if !p.Ahead() || a.b.reserve(a, n, kind+" "+quote(label)) != nil {
		p.Release()
		return atTake()
	}
	a.bytes += n
	a.prepared++
	return device.NewPending(func(take bool) (T, error) {
		var none T
		a.prepared--
		if take && !a.released {
			v, err := p.Take()
			if err == nil {
				return own(v), nil
			}
			a.debit(n)
			return none, err
		}
		p.Release()
		a.debit(n)
		if take {
			return none, a.usable("Take of a prepared " + kind)
		}
		return none, nil
	})
}

// CreateTexture creates a texture on the device, charged to the account;
// see CreateBuffer.
func (a *Account) CreateTexture(desc device.TextureDesc) (device.Texture, error) {
	if err := a.usable("CreateTexture"); err != nil {
		return nil, err
	}
	if err := desc.Validate(a.Limits()); err != nil {
		return a.dev.CreateTexture(desc) // the device says what is wrong
	}
	n := desc.Bytes()
	if err := a.b.reserve(a, n, "texture "+quote(desc.Label)); err != nil {
		return nil, err
	}
	tex, err := a.dev.CreateTexture(desc)
	if err != nil {
		a.b.credit(n)
		return nil, err
	}
	a.bytes += n
	v := &texture{Texture: tex, a: a, bytes: n, at: len(a.textures)}
	a.textures = append(a.textures, v)
	return v, nil
}

// The methods below are the device's, after the account's check for
// Release.

// WriteBuffer is the device's WriteBuffer.
func (a *Account) WriteBuffer(buf device.Buffer, offset uint64, data []byte) error {
	if err := a.usable("WriteBuffer"); err != nil {
		return err
	}
	return a.dev.WriteBuffer(buf, offset, data)
}

// FillBuffer is device.FillBuffer on the device, so that writes in place
// reach a device.Filler through an account.
func (a *Account) FillBuffer(buf device.Buffer, offset, size uint64, fill func([]byte)) error {
	if err := a.usable("FillBuffer"); err != nil {
		return err
	}
	return device.FillBuffer(a.dev, buf, offset, size, fill)
}

// ReadBuffer is the device's ReadBuffer.
func (a *Account) ReadBuffer(buf device.Buffer, offset uint64, dst []byte) error {
	if err := a.usable("ReadBuffer"); err != nil {
		return err
	}
	return a.dev.ReadBuffer(buf, offset, dst)
}

// CheckGuards is device.CheckGuards on the device, so that a
// device.GuardChecker checks through an account without a read-back.
func (a *Account) CheckGuards(buf device.Buffer, guards []device.Guard, pattern uint32, bad []int) ([]int, error) {
	if err := a.usable("CheckGuards"); err != nil {
		return bad, err
	}
	return device.CheckGuards(a.dev, buf, guards, pattern, bad)
}

// Timer is the device's Timer (device.TimerOf), so that GPU time is
// measured through an account; none once the account is released, and
// the one it gave fails with device.ErrReleased after.
func (a *Account) Timer() (device.Timer, bool) {
	if a.released {
		return nil, false
	}
	t, ok := device.TimerOf(a.dev)
	if !ok {
		return nil, false
	}
	return accountTimer{a, t}, true
}

// accountTimer is the device's timer seen through an account.
type accountTimer struct {
	a *Account
	t device.Timer
}

func (at accountTimer) Stamp() (device.Stamp, error) {
	if err := at.a.usable("Stamp"); err != nil {
		return 0, err
	}
	return at.t.Stamp()
}

func (at accountTimer) StampTime(s device.Stamp) (uint64, bool, error) {
	if err := at.a.usable("StampTime"); err != nil {
		return 0, false, err
	}
	return at.t.StampTime(s)
}

// CopyBuffer is the device's CopyBuffer.
func (a *Account) CopyBuffer(src device.Buffer, srcOffset uint64, dst device.Buffer, dstOffset, size uint64) error {
	if err := a.usable("CopyBuffer"); err != nil {
		return err
	}
	return a.dev.CopyBuffer(src, srcOffset, dst, dstOffset, size)
}

// Move is the device's Move.
func (a *Account) Move(buf device.Buffer, moves []device.Move) error {
	if err := a.usable("Move"); err != nil {
		return err
	}
	return a.dev.Move(buf, moves)
}

// Patch is the device's Patch.
func (a *Account) Patch(buf device.Buffer, patches []device.Patch) error {
	if err := a.usable("Patch"); err != nil {
		return err
	}
	return a.dev.Patch(buf, patches)
}

// WriteTexture is the device's WriteTexture.
func (a *Account) WriteTexture(tex device.Texture, layer, mip uint32, data []byte) error {
	if err := a.usable("WriteTexture"); err != nil {
		return err
	}
	return a.dev.WriteTexture(tex, layer, mip, data)
}

// CopyBufferToTexture is the device's CopyBufferToTexture.
func (a *Account) CopyBufferToTexture(src device.Buffer, srcOffset uint64, bytesPerRow uint32, tex device.Texture, layer, mip uint32) error {
	if err := a.usable("CopyBufferToTexture"); err != nil {
		return err
	}
	return a.dev.CopyBufferToTexture(src, srcOffset, bytesPerRow, tex, layer, mip)
}

// ReadTexture is the device's ReadTexture.
func (a *Account) ReadTexture(tex device.Texture, layer, mip uint32, dst []byte) error {
	if err := a.usable("ReadTexture"); err != nil {
		return err
	}
	return a.dev.ReadTexture(tex, layer, mip, dst)
}

// CopyTextureLayer is the device's CopyTextureLayer.
func (a *Account) CopyTextureLayer(src device.Texture, srcLayer uint32, dst device.Texture, dstLayer uint32) error {
	if err := a.usable("CopyTextureLayer"); err != nil {
		return err
	}
	return a.dev.CopyTextureLayer(src, srcLayer, dst, dstLayer)
}

// GenerateMips is the device's GenerateMips.
func (a *Account) GenerateMips(tex device.Texture, layer uint32) error {
	if err := a.usable("GenerateMips"); err != nil {
		return err
	}
	return a.dev.GenerateMips(tex, layer)
}

// Submit is the device's Submit.
func (a *Account) Submit() error {
	if err := a.usable("Submit"); err != nil {
		return err
	}
	return a.dev.Submit()
}

// Wait is the device's Wait.
func (a *Account) Wait() error {
	if err := a.usable("Wait"); err != nil {
		return err
	}
	return a.dev.Wait()
}

// Fence is the device's Fence.
func (a *Account) Fence() (uint64, error) {
	if err := a.usable("Fence"); err != nil {
		return 0, err
	}
	return a.dev.Fence()
}

// Completed is the device's Completed.
func (a *Account) Completed() (uint64, error) {
	if err := a.usable("Completed"); err != nil {
		return 0, err
	}
	return a.dev.Completed()
}

func quote(label string) string { return fmt.Sprintf("%q", label) }

// buffer is an account's view of a device buffer.
type buffer struct {
	device.Buffer
	a        *Account
	at       int // index in a.buffers while live
	released bool
}

// Unwrap returns the device's buffer; see device.UnwrapBuffer.
func (b *buffer) Unwrap() device.Buffer { return b.Buffer }

// Release releases the device's buffer and credits its account, once.
func (b *buffer) Release() {
	if b.released {
		return
	}
	b.released = true
	b.Buffer.Release()
	b.a.buffers = unlink(b.a.buffers, b.at)
	b.a.debit(b.Buffer.Size())
}

func (b *buffer) index() *int { return &b.at }

// texture is an account's view of a device texture.
type texture struct {
	device.Texture
	a        *Account
	bytes    uint64
	at       int // index in a.textures while live
	released bool
}

// Unwrap returns the device's texture; see device.UnwrapTexture.
func (t *texture) Unwrap() device.Texture { return t.Texture }

// Release releases the device's texture and credits its account, once.
func (t *texture) Release() {
	if t.released {
		return
	}
	t.released = true
	t.Texture.Release()
	t.a.textures = unlink(t.a.textures, t.at)
	t.a.debit(t.bytes)
}

func (t *texture) index() *int { return &t.at }

// unlink removes list[i] in O(1), moving the last element into its place:
// each element knows its index in list.
func unlink[T interface{ index() *int }](list []T, i int) []T {
	last := len(list) - 1
	list[i] = list[last]
	*list[i].index() = i
	var zero T
	list[last] = zero
	return list[:last]
}

// debit takes n bytes, released, off the account and its budget.
func (a *Account) debit(n uint64) {
	a.bytes -= n
	a.b.credit(n)
}
