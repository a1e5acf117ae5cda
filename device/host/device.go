package host

import (
	"encoding/binary"
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Device is a device.Device whose memory is Go byte slices. Create one with
// New. Every operation runs at once; Submit and Wait only count and check
// for loss.
//
// Invariants: every *Buffer and *Texture in buffers and textures is alive
// (not released) and belongs to this device; stats.Bytes is the sum of their
// sizes; once released is true, both sets are empty.
//
// A Device and its buffers and textures are not safe for concurrent use:
// the caller serializes every call, as on every backend.
type Device struct {
	limits   device.Limits
	opts     Options
	released bool
	lost     bool
	buffers  map[*Buffer]struct{}
	textures map[*Texture]struct{}
	stats    Stats

	// fence is the last fence Fence returned; done the last one Completed
	// reports. done <= fence. Without Options.HoldCompletion, done follows
	// fence at once: host work finishes when it is recorded.
	fence, done uint64

	creates  int    // creations that passed validation, for FailCreateAt
	failNext int    // creations still to fail, armed by FailNextCreates
	budget   uint64 // ByteBudget, changed by SetByteBudget; 0 is none
}

var _ device.Device = (*Device)(nil)

// New returns a device with opts' limits and faults. It fails with an error
// wrapping ErrInvalidOptions for limits no WebGPU adapter would report.
func New(opts Options) (*Device, error) {
	l, err := opts.limits()
	if err != nil {
		return nil, fmt.Errorf("host.New: %w", err)
	}
	return &Device{
		limits:   l,
		opts:     opts,
		buffers:  make(map[*Buffer]struct{}),
		textures: make(map[*Texture]struct{}),
		budget:   opts.ByteBudget,
	}, nil
}

// Limits returns the device's limits, zero Options fields defaulted.
func (d *Device) Limits() device.Limits { return d.limits }

// usable returns ErrReleased or ErrDeviceLost, wrapped with op, when the
// device can no longer run op.
func (d *Device) usable(op string) error {
	switch {
	case d.released:
		return fmt.Errorf("%s: %w", op, device.ErrReleased)
	case d.lost:
		return fmt.Errorf("%s: %w", op, device.ErrDeviceLost)
	}
	return nil
}

// buffer resolves b for op: alive, of this device, with all of need.
func (d *Device) buffer(op, role string, b device.Buffer, need device.Usage) (*Buffer, error) {
	hb, ok := device.UnwrapBuffer(b).(*Buffer)
	if !ok || hb == nil || hb.dev != d {
		return nil, fmt.Errorf("%s: %s buffer %T: %w", op, role, b, device.ErrInvalidObject)
	}
	if hb.data == nil {
		return nil, fmt.Errorf("%s: %s buffer %q: %w", op, role, hb.desc.Label, device.ErrReleased)
	}
	if !hb.desc.Usage.Has(need) {
		return nil, fmt.Errorf("%s: %s buffer %q has usage %v, needs %v: %w", op, role, hb.desc.Label, hb.desc.Usage, need, device.ErrInvalidUsage)
	}
	return hb, nil
}

// texture resolves t for op: alive, of this device, with all of need.
func (d *Device) texture(op, role string, t device.Texture, need device.TextureUsage) (*Texture, error) {
	ht, ok := device.UnwrapTexture(t).(*Texture)
	if !ok || ht == nil || ht.dev != d {
		return nil, fmt.Errorf("%s: %s texture %T: %w", op, role, t, device.ErrInvalidObject)
	}
	if ht.data == nil {
		return nil, fmt.Errorf("%s: %s texture %q: %w", op, role, ht.desc.Label, device.ErrReleased)
	}
	if !ht.desc.Usage.Has(need) {
		return nil, fmt.Errorf("%s: %s texture %q has usage %v, needs %v: %w", op, role, ht.desc.Label, ht.desc.Usage, need, device.ErrInvalidUsage)
	}
	return ht, nil
}

// allocate applies the armed creation faults to a creation of size bytes
// that passed validation, and accounts for it when it may go ahead.
func (d *Device) allocate(op, label string, size uint64) error {
	d.creates++
	fail := ""
	switch {
	case d.failNext > 0:
		d.failNext--
		fail = "armed failure"
	case d.opts.FailCreateAt > 0 && d.creates == d.opts.FailCreateAt:
		fail = fmt.Sprintf("creation %d set to fail", d.creates)
	case d.budget > 0 && size > d.budget-min(d.budget, d.stats.Bytes):
		fail = fmt.Sprintf("%d bytes over budget %d with %d alive", size, d.budget, d.stats.Bytes)
	}
	if fail != "" {
		d.stats.FailedCreates++
		return fmt.Errorf("%s %q: %s: %w", op, label, fail, device.ErrOutOfMemory)
	}
	d.stats.Creates++
	d.stats.Bytes += size
	d.stats.PeakBytes = max(d.stats.PeakBytes, d.stats.Bytes)
	return nil
}

// CreateBuffer creates a zeroed buffer; see device.Device. It allocates
// desc.Size bytes.
func (d *Device) CreateBuffer(desc device.BufferDesc) (device.Buffer, error) {
	if err := d.usable("CreateBuffer"); err != nil {
		return nil, err
	}
	if err := desc.Validate(d.limits); err != nil {
		return nil, fmt.Errorf("CreateBuffer: %w", err)
	}
	if err := d.allocate("CreateBuffer", desc.Label, desc.Size); err != nil {
		return nil, err
	}
	b := &Buffer{dev: d, desc: desc, data: make([]byte, desc.Size)}
	d.buffers[b] = struct{}{}
	d.stats.Buffers++
	return b, nil
}

// WriteBuffer writes data to buf at offset; see device.Device.
func (d *Device) WriteBuffer(buf device.Buffer, offset uint64, data []byte) error {
	b, err := d.writable("WriteBuffer", buf, offset, uint64(len(data)))
	if err != nil {
		return err
	}
	copy(b.data[offset:], data)
	return nil
}

// FillBuffer lets fill write size bytes of buf at offset in place; see
// device.FillBuffer.
func (d *Device) FillBuffer(buf device.Buffer, offset, size uint64, fill func(dst []byte)) error {
	b, err := d.writable("FillBuffer", buf, offset, size)
	if err != nil || size == 0 {
		return err
	}
	fill(b.data[offset : offset+size : offset+size])
	return nil
}

// CheckGuards checks guards of buf in place; see device.CheckGuards.
func (d *Device) CheckGuards(buf device.Buffer, guards []device.Guard, pattern uint32, bad []int) ([]int, error) {
	const op = "CheckGuards"
	if err := d.usable(op); err != nil {
		return bad, err
	}
	b, err := d.buffer(op, "checked", buf, device.CopySrc)
	if err != nil {
		return bad, err
	}
	if err := device.ValidateGuards(b.desc.Size, guards); err != nil {
		return bad, fmt.Errorf("%s %q: %w", op, b.desc.Label, err)
	}
	for i, g := range guards {
		if !device.GuardIntact(b.data[g.Offset:g.Offset+g.Size], pattern) {
			bad = append(bad, i)
		}
	}
	return bad, nil
}

// writable resolves the destination of a write of n bytes at offset, and
// counts the write.
func (d *Device) writable(op string, buf device.Buffer, offset, n uint64) (*Buffer, error) {
	if err := d.usable(op); err != nil {
		return nil, err
	}
	b, err := d.buffer(op, "destination", buf, 0)
	if err != nil {
		return nil, err
	}
	if u := b.desc.Usage; !u.Has(device.CopyDst) && !u.Has(device.MapWrite) {
		return nil, fmt.Errorf("%s: buffer %q has usage %v, needs CopyDst or MapWrite: %w", op, b.desc.Label, u, device.ErrInvalidUsage)
	}
	if err := device.CheckRange(b.desc.Size, offset, n); err != nil {
		return nil, fmt.Errorf("%s %q: %w", op, b.desc.Label, err)
	}
	d.stats.Writes++
	d.stats.WriteBytes += n
	return b, nil
}

// ReadBuffer copies buf's bytes from offset into dst; see device.Device.
func (d *Device) ReadBuffer(buf device.Buffer, offset uint64, dst []byte) error {
	const op = "ReadBuffer"
	if err := d.usable(op); err != nil {
		return err
	}
	b, err := d.buffer(op, "source", buf, 0)
	if err != nil {
		return err
	}
	if u := b.desc.Usage; !u.Has(device.CopySrc) && !u.Has(device.MapRead) {
		return fmt.Errorf("%s: buffer %q has usage %v, needs CopySrc or MapRead: %w", op, b.desc.Label, u, device.ErrInvalidUsage)
	}
	if err := device.CheckRange(b.desc.Size, offset, uint64(len(dst))); err != nil {
		return fmt.Errorf("%s %q: %w", op, b.desc.Label, err)
	}
	copy(dst, b.data[offset:])
	return nil
}

// CopyBuffer copies between two buffers; see device.Device.
func (d *Device) CopyBuffer(src device.Buffer, srcOffset uint64, dst device.Buffer, dstOffset, size uint64) error {
	const op = "CopyBuffer"
	if err := d.usable(op); err != nil {
		return err
	}
	s, err := d.buffer(op, "source", src, device.CopySrc)
	if err != nil {
		return err
	}
	t, err := d.buffer(op, "destination", dst, device.CopyDst)
	if err != nil {
		return err
	}
	if s == t {
		return fmt.Errorf("%s %q to itself: %w", op, s.desc.Label, device.ErrSameBuffer)
	}
	if err := device.CheckRange(s.desc.Size, srcOffset, size); err != nil {
		return fmt.Errorf("%s source %q: %w", op, s.desc.Label, err)
	}
	if err := device.CheckRange(t.desc.Size, dstOffset, size); err != nil {
		return fmt.Errorf("%s destination %q: %w", op, t.desc.Label, err)
	}
	copy(t.data[dstOffset:dstOffset+size], s.data[srcOffset:srcOffset+size])
	d.stats.Copies++
	d.stats.CopyBytes += size
	return nil
}

// Move applies moves within buf one by one, in order, each with memmove
// semantics; see device.Device. It does not allocate.
func (d *Device) Move(buf device.Buffer, moves []device.Move) error {
	const op = "Move"
	if err := d.usable(op); err != nil {
		return err
	}
	b, err := d.buffer(op, "", buf, device.CopySrc|device.CopyDst)
	if err != nil {
		return err
	}
	if err := device.CheckMoves(b.desc.Size, moves); err != nil {
		return fmt.Errorf("%s %q: %w", op, b.desc.Label, err)
	}
	for _, m := range moves {
		copy(b.data[m.Dst:m.Dst+m.Size], b.data[m.Src:m.Src+m.Size])
		d.stats.MoveBytes += m.Size
	}
	d.stats.Moves += len(moves)
	return nil
}

// Patch adds each patch's delta to its word of buf; see device.Device. It
// does not allocate.
func (d *Device) Patch(buf device.Buffer, patches []device.Patch) error {
	const op = "Patch"
	if err := d.usable(op); err != nil {
		return err
	}
	b, err := d.buffer(op, "", buf, device.Storage)
	if err != nil {
		return err
	}
	if err := device.CheckPatches(b.desc.Size, patches); err != nil {
		return fmt.Errorf("%s %q: %w", op, b.desc.Label, err)
	}
	for _, p := range patches {
		w := b.data[4*uint64(p.Index):]
		binary.LittleEndian.PutUint32(w, binary.LittleEndian.Uint32(w)+p.Delta)
	}
	d.stats.Patches += len(patches)
	return nil
}

// Submit counts a submit and loses the device when Options.LoseAfterSubmits
// says so. Work already ran when it was recorded.
func (d *Device) Submit() error {
	if err := d.usable("Submit"); err != nil {
		return err
	}
	d.stats.Submits++
	if n := d.opts.LoseAfterSubmits; n > 0 && d.stats.Submits >= n {
		d.lost = true
	}
	return nil
}

// Wait returns at once: host work finishes when it is recorded. It
// completes every fence, held ones included.
func (d *Device) Wait() error {
	if err := d.usable("Wait"); err != nil {
		return err
	}
	d.stats.Waits++
	d.done = d.fence
	return nil
}

// Fence submits as Submit does and returns the next fence. Without
// Options.HoldCompletion the fence is complete at once.
func (d *Device) Fence() (uint64, error) {
	if err := d.Submit(); err != nil {
		return 0, fmt.Errorf("Fence: %w", err)
	}
	d.fence++
	if !d.opts.HoldCompletion {
		d.done = d.fence
	}
	return d.fence, nil
}

// Completed returns the newest completed fence: the last one, or with
// Options.HoldCompletion the last one Complete or Wait let through.
func (d *Device) Completed() (uint64, error) {
	if err := d.usable("Completed"); err != nil {
		return 0, err
	}
	return d.done, nil
}

// Release releases every live buffer and texture, then the device. It is
// idempotent and safe on a nil *Device.
func (d *Device) Release() {
	if d == nil || d.released {
		return
	}
	for b := range d.buffers {
		b.Release()
	}
	for t := range d.textures {
		t.Release()
	}
	d.released = true
}
