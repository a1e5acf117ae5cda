package budget_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gpumem/gpumem/budget"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/devicetest"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// TestAccountConformance: an account is a device.Device, so it passes the
// device conformance suite on every backend, Release's contract included.
func TestAccountConformance(t *testing.T) {
	for _, be := range testdevice.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			devicetest.Run(t, func(t *testing.T) device.Device {
				b := newBudget(t, be.Open(t), budget.Options{Bytes: 1 << 40})
				return account(t, b, "suite")
			})
		})
	}
}

// guardDevice is a device.GuardChecker that counts its checks and the
// read-backs it is asked for.
type guardDevice struct {
	*host.Device
	checks, reads int
}

func (d *guardDevice) CheckGuards(buf device.Buffer, guards []device.Guard, pattern uint32, bad []int) ([]int, error) {
	d.checks++
	return d.Device.CheckGuards(buf, guards, pattern, bad)
}

func (d *guardDevice) ReadBuffer(buf device.Buffer, offset uint64, dst []byte) error {
	d.reads++
	return d.Device.ReadBuffer(buf, offset, dst)
}

// TestAccountCheckGuards: guards checked through an account are checked
// by the device, as they would be on the device itself, not read back.
func TestAccountCheckGuards(t *testing.T) {
	dev := &guardDevice{Device: testdevice.Host(t, host.Options{})}
	a := account(t, newBudget(t, dev, budget.Options{Bytes: 1 << 20}), "a")
	buf, err := a.CreateBuffer(device.BufferDesc{Size: 64, Usage: device.CopySrc | device.CopyDst | device.Storage})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteBuffer(buf, 16, []byte{1, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	bad, err := device.CheckGuards(a, buf, []device.Guard{{Offset: 0, Size: 16}, {Offset: 16, Size: 16}}, 0, nil)
	if err != nil || len(bad) != 1 || bad[0] != 1 {
		t.Fatalf("CheckGuards: bad %v, %v; want [1]", bad, err)
	}
	if dev.checks != 1 || dev.reads != 0 {
		t.Errorf("CheckGuards through an account: %d device checks, %d read-backs; want 1, 0", dev.checks, dev.reads)
	}
}

// TestAccountTimer: an account has its device's GPU timer (none on the
// host backend), and none once released.
func TestAccountTimer(t *testing.T) {
	for _, be := range testdevice.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			dev := be.Open(t)
			a := account(t, newBudget(t, dev, budget.Options{Bytes: 1 << 30}), "a")
			_, want := device.TimerOf(dev)
			if _, got := device.TimerOf(a); got != want {
				t.Fatalf("TimerOf(account) = %v, the device's %v", got, want)
			}
			a.Release()
			if _, got := device.TimerOf(a); got {
				t.Error("a released account still has a timer")
			}
		})
	}
}

// TestAccountRelease: Release releases what the account still holds and
// credits it, fails later calls with device.ErrReleased, leaves the
// device and the other accounts alone, and takes the account out of
// reclaiming.
func TestAccountRelease(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	b := newBudget(t, dev, budget.Options{Bytes: 1 << 10})
	a, other := account(t, b, "a"), account(t, b, "other")
	rw := device.CopySrc | device.CopyDst
	kept, err := a.CreateBuffer(device.BufferDesc{Size: 256, Usage: rw})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := a.CreateBuffer(device.BufferDesc{Size: 256, Usage: rw})
	if err != nil {
		t.Fatal(err)
	}
	gone.Release() // released before the account: released once
	tex, err := a.CreateTexture(device.TextureDesc{Format: device.RGBA8Unorm, Width: 4, Height: 4, Usage: device.TextureCopySrc | device.TextureCopyDst})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := other.CreateBuffer(device.BufferDesc{Size: 256, Usage: rw})
	if err != nil {
		t.Fatal(err)
	}
	reclaimed := false
	a.SetReclaimer(func() (uint64, error) { reclaimed = true; return 0, nil })

	a.Release()
	a.Release() // idempotent
	u := b.Usage()
	if u.Bytes != 256 || u.Accounts[0] != (budget.AccountUsage{Name: "a"}) {
		t.Errorf("usage after Release: %+v; want only other's 256 bytes", u)
	}
	if st := dev.Stats(); st.Buffers != 1 || st.Textures != 0 {
		t.Errorf("device holds %d buffers, %d textures; want other's one buffer", st.Buffers, st.Textures)
	}
	four := make([]byte, 4)
	for what, err := range map[string]error{
		"WriteBuffer on the device": dev.WriteBuffer(kept, 0, four),
		"ReadTexture on the device": dev.ReadTexture(tex, 0, 0, make([]byte, 64)),
		"WriteBuffer":               a.WriteBuffer(theirs, 0, four),
		"Submit":                    a.Submit(),
		"CheckGuards":               func() error { _, err := a.CheckGuards(theirs, nil, 0, nil); return err }(),
		"FillBuffer":                a.FillBuffer(theirs, 0, 4, func([]byte) {}),
	} {
		if !errors.Is(err, device.ErrReleased) {
			t.Errorf("%s after the account's Release: %v, want device.ErrReleased", what, err)
		}
	}
	if _, err := a.CreateBuffer(device.BufferDesc{Size: 4, Usage: rw}); !errors.Is(err, device.ErrReleased) {
		t.Errorf("CreateBuffer after Release: %v, want device.ErrReleased", err)
	}
	kept.Release() // after the account: a no-op
	if err := other.WriteBuffer(theirs, 0, four); err != nil {
		t.Errorf("other account after a's Release: %v", err)
	}
	if _, err := other.CreateBuffer(device.BufferDesc{Size: 1 << 10, Usage: rw}); !errors.Is(err, budget.ErrOverBudget) || reclaimed {
		t.Errorf("over budget after a's Release: %v, reclaimer called %v; want ErrOverBudget, not called", err, reclaimed)
	}
	if u := b.Usage(); u.Bytes != 256 {
		t.Errorf("usage %d bytes; want 256", u.Bytes)
	}
}

// hostPreparer is the host device made a device.Preparer: it makes each
// buffer at the Prepare, ahead of the Take.
type hostPreparer struct{ *host.Device }

func (d hostPreparer) PrepareBuffer(desc device.BufferDesc) *device.Pending {
	buf, err := d.CreateBuffer(desc)
	return device.NewPending(func(take bool) (device.Buffer, error) {
		if !take && buf != nil {
			buf.Release()
		}
		return buf, err
	})
}

// TestPrepareBuffer: a buffer prepared through an account over a device
// that makes buffers ahead is charged from the Prepare when the budget has
// room for it as it is, and credited once by a Release or a failed Take;
// without room, or for a desc the device refuses, Take makes it as
// CreateBuffer would; a Take on an account released meanwhile fails.
// Usage counts the buffers being prepared. Over a device that makes
// buffers at Take (the host device, webgpu in the browser), nothing is
// charged before the Take.
func TestPrepareBuffer(t *testing.T) {
	desc := device.BufferDesc{Label: "ahead", Size: 256 << 10, Usage: device.CopySrc | device.CopyDst}
	backends := append(testdevice.Backends(), testdevice.Backend{Name: "host preparer", Open: func(t testing.TB) device.Device {
		return hostPreparer{testdevice.Host(t, host.Options{})}
	}})
	for _, be := range backends {
		t.Run(be.Name, func(t *testing.T) {
			dev := be.Open(t)
			b := newBudget(t, dev, budget.Options{Bytes: 1 << 20})
			if !testdevice.PreparesAhead(dev) {
				a := account(t, b, "a")
				p := device.Prepare(a, desc)
				if p.Ahead() || b.Usage().Bytes != 0 {
					t.Fatalf("over a device that makes buffers at Take: ahead %v, usage %+v", p.Ahead(), b.Usage())
				}
				buf, err := p.Take()
				if err != nil {
					t.Fatal(err)
				}
				check(t, b, map[string]uint64{"a": desc.Size})
				buf.Release()
				return
			}
			a, o := account(t, b, "a"), account(t, b, "other")
			reclaims := 0
			o.SetReclaimer(func() (uint64, error) { reclaims++; return 0, nil })
			prepared := func(want int) {
				t.Helper()
				if got := b.Usage().Accounts[0].Prepared; got != want {
					t.Fatalf("%d buffers prepared, want %d", got, want)
				}
			}

			// Room: made ahead, charged at once, taken as a live buffer.
			p := device.Prepare(a, desc)
			if !p.Ahead() {
				t.Fatal("a buffer the budget has room for is not made ahead")
			}
			prepared(1)
			check(t, b, map[string]uint64{"a": desc.Size})
			buf, err := p.Take()
			if err != nil {
				t.Fatal(err)
			}
			prepared(0)
			if u := b.Usage().Accounts[0]; u.Buffers != 1 {
				t.Fatalf("taken: %+v", u)
			}
			want := []byte{1, 2, 3, 4}
			got := make([]byte, 4)
			if err := a.WriteBuffer(buf, 64, want); err != nil {
				t.Fatal(err)
			}
			if err := a.ReadBuffer(buf, 64, got); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read back %v, %v; want %v", got, err, want)
			}
			check(t, b, map[string]uint64{"a": desc.Size})
			buf.Release()
			check(t, b, nil)

			// Given up: credited once; a Take after it fails.
			p = device.Prepare(a, desc)
			p.Release()
			p.Release()
			prepared(0)
			check(t, b, nil)
			if _, err := p.Take(); !errors.Is(err, device.ErrInvalidObject) {
				t.Fatalf("Take after Release: %v", err)
			}

			// No room as it is: no reclaimer asked at the Prepare; the
			// Take creates, asks, and is refused as CreateBuffer is.
			full, err := o.CreateBuffer(device.BufferDesc{Label: "full", Size: 900 << 10, Usage: device.CopyDst})
			if err != nil {
				t.Fatal(err)
			}
			p = device.Prepare(a, desc)
			if p.Ahead() || reclaims != 0 {
				t.Fatalf("without room: ahead %v, %d reclaims", p.Ahead(), reclaims)
			}
			prepared(0)
			check(t, b, map[string]uint64{"other": 900 << 10})
			if _, err := p.Take(); !errors.Is(err, budget.ErrOverBudget) || reclaims != 1 {
				t.Fatalf("Take without room: %v, %d reclaims", err, reclaims)
			}
			check(t, b, map[string]uint64{"other": 900 << 10})
			full.Release()

			// A desc the device refuses: refused at Take, nothing charged.
			p = device.Prepare(a, device.BufferDesc{Size: 6, Usage: device.CopyDst})
			if p.Ahead() {
				t.Fatal("an invalid desc made ahead")
			}
			if _, err := p.Take(); err == nil || errors.Is(err, budget.ErrOverBudget) {
				t.Fatalf("Take of an invalid desc: %v", err)
			}

			// The account released meanwhile: the Take fails, credited.
			p = device.Prepare(a, desc)
			a.Release()
			if _, err := p.Take(); !errors.Is(err, device.ErrReleased) {
				t.Fatalf("Take after the account's Release: %v", err)
			}
			prepared(0)
			check(t, b, nil)
		})
	}
}

// TestPrepareTexture: a texture prepared through an account is charged
// as a buffer is (TestPrepareBuffer): from the Prepare, over a device that
// makes textures ahead (webgpu natively) and with room, and credited once by its Release or
// a Release of the Pending; without room, Take makes it as CreateTexture
// would, and is refused as it is.
func TestPrepareTexture(t *testing.T) {
	desc := device.TextureDesc{Label: "page", Format: device.RGBA8Unorm, Width: 64, Height: 64, Layers: 16, Mips: 1, Samples: 1,
		Usage: device.TextureCopySrc | device.TextureCopyDst | device.TextureBinding}
	n := desc.Bytes()
	for _, be := range testdevice.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			dev := be.Open(t)
			b := newBudget(t, dev, budget.Options{Bytes: 2 * n})
			a, o := account(t, b, "a"), account(t, b, "other")
			ahead := testdevice.PreparesTexturesAhead(dev)
			p := device.PrepareTexture(a, desc)
			if p.Ahead() != ahead {
				t.Fatalf("made ahead %v, the device makes textures ahead %v", p.Ahead(), ahead)
			}
			if ahead {
				check(t, b, map[string]uint64{"a": n})
				if got := b.Usage().Accounts[0].Prepared; got != 1 {
					t.Fatalf("%d prepared, want 1", got)
				}
			} else {
				check(t, b, nil)
			}
			tex, err := p.Take()
			if err != nil {
				t.Fatal(err)
			}
			if u := b.Usage().Accounts[0]; u.Textures != 1 || u.Prepared != 0 {
				t.Fatalf("taken: %+v", u)
			}
			check(t, b, map[string]uint64{"a": n})
			tex.Release()
			check(t, b, nil)

			p = device.PrepareTexture(a, desc)
			p.Release()
			p.Release()
			check(t, b, nil)

			// No room as it is: made at Take, through the account, and
			// refused there.
			full, err := o.CreateBuffer(device.BufferDesc{Label: "full", Size: 2*n - 1024, Usage: device.CopyDst})
			if err != nil {
				t.Fatal(err)
			}
			p = device.PrepareTexture(a, desc)
			if p.Ahead() {
				t.Fatal("made ahead without room")
			}
			if _, err := p.Take(); !errors.Is(err, budget.ErrOverBudget) {
				t.Fatalf("Take without room: %v", err)
			}
			full.Release()
			check(t, b, nil)
		})
	}
}
