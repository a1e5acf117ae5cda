package host_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
)

func newDevice(t *testing.T, opts host.Options) *host.Device {
	t.Helper()
	d, err := host.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Release)
	return d
}

var rw = device.CopySrc | device.CopyDst | device.Storage

func create(d *host.Device, size uint64) (device.Buffer, error) {
	return d.CreateBuffer(device.BufferDesc{Label: "b", Size: size, Usage: rw})
}

var smallTex = device.TextureDesc{Format: device.RGBA8Unorm, Width: 4, Height: 4, Usage: device.TextureCopyDst}

func TestFailCreateAt(t *testing.T) {
	d := newDevice(t, host.Options{FailCreateAt: 3})
	// Invalid creations do not count.
	if _, err := create(d, 0); !errors.Is(err, device.ErrInvalidDescriptor) {
		t.Fatalf("zero size: %v", err)
	}
	if _, err := create(d, 64); err != nil { // 1
		t.Fatal(err)
	}
	if _, err := d.CreateTexture(smallTex); err != nil { // 2: textures count
		t.Fatal(err)
	}
	b, err := create(d, 64) // 3
	if !errors.Is(err, device.ErrOutOfMemory) || b != nil {
		t.Fatalf("third creation: %v, %v; want ErrOutOfMemory", b, err)
	}
	for range 5 { // only the third
		if _, err := create(d, 64); err != nil {
			t.Fatal(err)
		}
	}
	st := d.Stats()
	if st.Creates != 7 || st.FailedCreates != 1 || st.Buffers != 6 || st.Textures != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestFailNextCreates(t *testing.T) {
	d := newDevice(t, host.Options{})
	keep, err := create(d, 256)
	if err != nil {
		t.Fatal(err)
	}
	must(t, d.WriteBuffer(keep, 0, []byte{1, 2, 3, 4}))
	d.FailNextCreates(2)
	if _, err := create(d, 64); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("armed creation 1: %v", err)
	}
	if _, err := d.CreateTexture(smallTex); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("armed creation 2: %v", err)
	}
	if _, err := create(d, 64); err != nil {
		t.Fatalf("after the armed failures: %v", err)
	}
	d.FailNextCreates(1)
	d.FailNextCreates(0) // disarms
	if _, err := create(d, 64); err != nil {
		t.Fatalf("disarmed: %v", err)
	}
	// The device stays usable and keeps its contents.
	got := make([]byte, 4)
	must(t, d.ReadBuffer(keep, 0, got))
	if string(got) != "\x01\x02\x03\x04" {
		t.Errorf("contents after failed creations: % x", got)
	}
}

func TestByteBudget(t *testing.T) {
	d := newDevice(t, host.Options{ByteBudget: 1024})
	a, err := create(d, 768)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := create(d, 512); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("over budget: %v", err)
	}
	b, err := create(d, 256) // exactly at the budget
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateTexture(smallTex); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("texture over budget: %v", err)
	}
	a.Release()
	if _, err := d.CreateTexture(smallTex); err != nil { // 64 bytes
		t.Fatalf("after a release: %v", err)
	}
	// A lower budget keeps what is alive and refuses more.
	d.SetByteBudget(100)
	if _, err := create(d, 4); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("under a lowered budget: %v", err)
	}
	b.Release()
	if st := d.Stats(); st.Bytes != 64 || st.PeakBytes != 1024 {
		t.Errorf("stats %+v", st)
	}
	d.SetByteBudget(0)
	if _, err := create(d, 1<<20); err != nil {
		t.Fatalf("without a budget: %v", err)
	}
}

// everyCall makes one call of every Device method on live objects.
func everyCall(d *host.Device, b device.Buffer, tex device.Texture) map[string]error {
	w := make([]byte, 4)
	return map[string]error{
		"CreateBuffer":     func() error { _, err := create(d, 64); return err }(),
		"CreateTexture":    func() error { _, err := d.CreateTexture(smallTex); return err }(),
		"WriteBuffer":      d.WriteBuffer(b, 0, w),
		"ReadBuffer":       d.ReadBuffer(b, 0, w),
		"CopyBuffer":       d.CopyBuffer(b, 0, b, 4, 4),
		"Move":             d.Move(b, []device.Move{{Src: 0, Dst: 4, Size: 4}}),
		"Patch":            d.Patch(b, []device.Patch{{}}),
		"WriteTexture":     d.WriteTexture(tex, 0, 0, make([]byte, 64)),
		"ReadTexture":      d.ReadTexture(tex, 0, 0, make([]byte, 64)),
		"CopyTextureLayer": d.CopyTextureLayer(tex, 0, tex, 0),
		"GenerateMips":     d.GenerateMips(tex, 0),
		"Submit":           d.Submit(),
		"Wait":             d.Wait(),
	}
}

func TestLoseAfterSubmits(t *testing.T) {
	d := newDevice(t, host.Options{LoseAfterSubmits: 2})
	b, err := create(d, 64)
	if err != nil {
		t.Fatal(err)
	}
	tex, err := d.CreateTexture(device.TextureDesc{Format: device.RGBA8Unorm, Width: 4, Height: 4,
		Usage: device.TextureCopySrc | device.TextureCopyDst})
	if err != nil {
		t.Fatal(err)
	}
	must(t, d.Wait()) // waits do not count
	must(t, d.Submit())
	if d.Lost() {
		t.Fatal("lost after one submit")
	}
	must(t, d.Submit())
	if !d.Lost() {
		t.Fatal("not lost after two submits")
	}
	for name, err := range everyCall(d, b, tex) {
		if !errors.Is(err, device.ErrDeviceLost) {
			t.Errorf("%s on a lost device: %v", name, err)
		}
	}
	// Objects count as alive until released, so leak checks still work.
	if st := d.Stats(); st.Buffers != 1 || st.Textures != 1 || st.Submits != 2 {
		t.Errorf("stats %+v", st)
	}
	b.Release()
	tex.Release()
	if st := d.Stats(); st.Buffers != 0 || st.Textures != 0 || st.Bytes != 0 {
		t.Errorf("stats after releases %+v", st)
	}
	d.Release()
}

func TestLose(t *testing.T) {
	d := newDevice(t, host.Options{})
	b, _ := create(d, 64)
	tex, _ := d.CreateTexture(device.TextureDesc{Format: device.RGBA8Unorm, Width: 4, Height: 4, Usage: device.TextureCopySrc | device.TextureCopyDst})
	d.Lose()
	for name, err := range everyCall(d, b, tex) {
		if !errors.Is(err, device.ErrDeviceLost) {
			t.Errorf("%s on a lost device: %v", name, err)
		}
	}
	if got := d.Limits(); got != device.DefaultLimits() {
		t.Errorf("Limits on a lost device: %+v", got)
	}
}

func TestReleasedDeviceBeatsLost(t *testing.T) {
	d := newDevice(t, host.Options{})
	d.Lose()
	d.Release()
	if err := d.Submit(); !errors.Is(err, device.ErrReleased) {
		t.Errorf("Submit on a released, lost device: %v", err)
	}
}

func TestLeakCheck(t *testing.T) {
	d := newDevice(t, host.Options{})
	before := d.Stats()
	var bufs []device.Buffer
	for i := range 10 {
		b, err := create(d, uint64(4*(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
	}
	tex, err := d.CreateTexture(device.TextureDesc{Format: device.RGBA16Float, Width: 8, Height: 4, Layers: 3, Mips: 4, Usage: device.TextureCopyDst})
	if err != nil {
		t.Fatal(err)
	}
	// 3 layers of 8x4 + 4x2 + 2x1 + 1x1 texels of 8 bytes.
	wantTex := uint64(3 * (32 + 8 + 2 + 1) * 8)
	if st := d.Stats(); st.Buffers != 10 || st.Textures != 1 || st.Bytes != 220+wantTex {
		t.Errorf("stats %+v, want 10 buffers, 1 texture, %d bytes", st, 220+wantTex)
	}
	for _, b := range bufs {
		b.Release()
	}
	tex.Release()
	st := d.Stats()
	if st.Buffers != 0 || st.Textures != 0 || st.Bytes != 0 {
		t.Errorf("leak: %+v", st)
	}
	if diff := st.Sub(before); diff.Creates != 11 || diff.PeakBytes != 220+wantTex {
		t.Errorf("Sub: %+v", diff)
	}
}

func TestReleaseCascades(t *testing.T) {
	d := newDevice(t, host.Options{})
	b, _ := create(d, 64)
	_, _ = d.CreateTexture(smallTex)
	d.Release()
	if st := d.Stats(); st.Buffers != 0 || st.Textures != 0 || st.Bytes != 0 {
		t.Errorf("after device Release: %+v", st)
	}
	b.Release()
}

func TestNilSafe(t *testing.T) {
	var b *host.Buffer
	b.Release()
	var tex *host.Texture
	tex.Release()
	var d *host.Device
	d.Release()
	e := newDevice(t, host.Options{})
	if err := e.WriteBuffer(b, 0, nil); !errors.Is(err, device.ErrInvalidObject) {
		t.Errorf("typed nil buffer: %v", err)
	}
	if err := e.GenerateMips(tex, 0); !errors.Is(err, device.ErrInvalidObject) {
		t.Errorf("typed nil texture: %v", err)
	}
}

func TestErrorContext(t *testing.T) {
	d := newDevice(t, host.Options{})
	b, err := d.CreateBuffer(device.BufferDesc{Label: "vertices", Size: 64, Usage: device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	err = d.WriteBuffer(b, 60, make([]byte, 8))
	if !errors.Is(err, device.ErrOutOfBounds) || !strings.Contains(err.Error(), "vertices") || !strings.Contains(err.Error(), "WriteBuffer") {
		t.Errorf("error %q: want ErrOutOfBounds naming the call and the buffer", err)
	}
}

func TestOptions(t *testing.T) {
	d := newDevice(t, host.Options{Limits: device.Limits{MaxBufferSize: 1 << 20}})
	want := device.DefaultLimits()
	want.MaxBufferSize = 1 << 20
	if d.Limits() != want {
		t.Errorf("Limits %+v, want %+v", d.Limits(), want)
	}
	if _, err := create(d, 1<<20+4); !errors.Is(err, device.ErrTooLarge) {
		t.Errorf("over a 1 MiB MaxBufferSize: %v", err)
	}
	for _, o := range []host.Options{
		{Limits: device.Limits{CopyAlignment: 8}},
		{Limits: device.Limits{MapAlignment: 4}},
		{Limits: device.Limits{UniformOffsetAlignment: 100}},
		{Limits: device.Limits{StorageOffsetAlignment: 2}},
		{FailCreateAt: -1},
		{LoseAfterSubmits: -1},
	} {
		if _, err := host.New(o); !errors.Is(err, host.ErrInvalidOptions) {
			t.Errorf("New(%+v): %v, want ErrInvalidOptions", o, err)
		}
	}
}

func TestStatsCount(t *testing.T) {
	d := newDevice(t, host.Options{})
	a, _ := create(d, 1024)
	b, _ := create(d, 1024)
	before := d.Stats()
	must(t, d.WriteBuffer(a, 0, make([]byte, 512)))
	must(t, d.CopyBuffer(a, 0, b, 0, 256))
	must(t, d.Move(a, []device.Move{{Src: 0, Dst: 4, Size: 100}, {Src: 8, Dst: 0, Size: 4}}))
	must(t, d.Patch(a, []device.Patch{{}, {}, {}}))
	must(t, d.Submit())
	must(t, d.Wait())
	got := d.Stats().Sub(before)
	if got.Writes != 1 || got.WriteBytes != 512 || got.Copies != 1 || got.CopyBytes != 256 ||
		got.Moves != 2 || got.MoveBytes != 104 || got.Patches != 3 || got.Submits != 1 || got.Waits != 1 {
		t.Errorf("counts %+v", got)
	}
}

func TestNoAllocs(t *testing.T) {
	d := newDevice(t, host.Options{})
	b, _ := create(d, 1<<16)
	moves := []device.Move{{Src: 0, Dst: 1024, Size: 4096}, {Src: 4096, Dst: 0, Size: 64}}
	patches := []device.Patch{{Index: 1, Delta: 1}, {Index: 9, Delta: 3}}
	data := make([]byte, 256)
	for name, fn := range map[string]func(){
		"Move":        func() { _ = d.Move(b, moves) },
		"Patch":       func() { _ = d.Patch(b, patches) },
		"WriteBuffer": func() { _ = d.WriteBuffer(b, 0, data) },
		"ReadBuffer":  func() { _ = d.ReadBuffer(b, 0, data) },
	} {
		if n := testing.AllocsPerRun(100, fn); n != 0 {
			t.Errorf("%s: %v allocs per call", name, n)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestHoldCompletion(t *testing.T) {
	d := newDevice(t, host.Options{HoldCompletion: true})
	completed := func() uint64 {
		t.Helper()
		c, err := d.Completed()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for want := uint64(1); want <= 3; want++ {
		if f, err := d.Fence(); err != nil || f != want {
			t.Fatalf("Fence = %d, %v; want %d", f, err, want)
		}
	}
	if c := completed(); c != 0 {
		t.Fatalf("Completed = %d with completion held, want 0", c)
	}
	d.Complete(2)
	if c := completed(); c != 2 {
		t.Fatalf("Completed = %d after Complete(2), want 2", c)
	}
	d.Complete(1)  // never goes back
	d.Complete(99) // never passes the last fence
	if c := completed(); c != 3 {
		t.Fatalf("Completed = %d after Complete(99), want 3", c)
	}
	if _, err := d.Fence(); err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	if c := completed(); c != 4 {
		t.Fatalf("Completed = %d after Wait, want 4", c)
	}
	if st := d.Stats(); st.Submits != 4 {
		t.Fatalf("Submits = %d, want 4 (a Fence is a submit)", st.Submits)
	}
}
