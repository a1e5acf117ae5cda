package staging_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/staging"
)

const dstUsage = device.CopyDst | device.CopySrc | device.Vertex

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// world is a belt on a tracked device, destination buffers and what they
// should hold.
type world struct {
	dev    device.Device
	hold   *host.Device
	tr     *tracker
	belt   *staging.Belt
	dsts   []device.Buffer
	want   [][]byte
	rng    *rand.Rand
	fences []uint64
}

func newWorld(t testing.TB, dev device.Device, hold *host.Device, opts staging.Options, dstSizes ...uint64) *world {
	t.Helper()
	tr := track(dev)
	b, err := staging.New(tr, opts)
	must(t, err)
	t.Cleanup(b.Release)
	w := &world{dev: dev, hold: hold, tr: tr, belt: b, rng: rand.New(rand.NewPCG(1, 2))}
	for _, s := range dstSizes {
		buf, err := dev.CreateBuffer(device.BufferDesc{Label: "dst", Size: s, Usage: dstUsage})
		must(t, err)
		t.Cleanup(buf.Release)
		w.dsts = append(w.dsts, buf)
		w.want = append(w.want, make([]byte, s))
	}
	return w
}

func (w *world) upload(i int, off, n uint64) error {
	data := make([]byte, n)
	for j := range data {
		data[j] = byte(w.rng.Uint32())
	}
	if err := w.belt.Upload(w.dsts[i], off, data); err != nil {
		return err
	}
	copy(w.want[i][off:], data)
	return nil
}

// uploadFunc is upload through UploadFunc, which fills the chunk in place.
func (w *world) uploadFunc(i int, off, n uint64) error {
	data := make([]byte, n)
	for j := range data {
		data[j] = byte(w.rng.Uint32())
	}
	calls := 0
	if err := w.belt.UploadFunc(w.dsts[i], off, n, func(dst []byte) {
		calls++
		copy(dst, data)
	}); err != nil {
		return err
	}
	if calls != 1 {
		return fmt.Errorf("UploadFunc called fill %d times", calls)
	}
	copy(w.want[i][off:], data)
	return nil
}

func (w *world) endFrame() error {
	f, err := w.tr.Fence()
	if err != nil {
		return err
	}
	w.fences = append(w.fences, f)
	return w.belt.EndFrame(f)
}

// complete lets the GPU finish all but the newest keep frames.
func (w *world) complete(keep int) {
	if w.hold != nil && len(w.fences) > keep {
		w.hold.Complete(w.fences[len(w.fences)-1-keep])
	}
}

// verify checks the tracker and every destination's bytes.
func (w *world) verify() error {
	if err := w.tr.check(); err != nil {
		return err
	}
	for i, d := range w.dsts {
		got := make([]byte, len(w.want[i]))
		if err := w.dev.ReadBuffer(d, 0, got); err != nil {
			return err
		}
		if !bytes.Equal(got, w.want[i]) {
			return fmt.Errorf("destination %d differs", i)
		}
	}
	return nil
}

// TestBeltTable uploads scripted frames on 1 KiB chunks, at most four, with
// the GPU held two frames behind.
func TestBeltTable(t *testing.T) {
	type up struct {
		dst       int
		off, size uint64
	}
	for _, c := range []struct {
		name   string
		frames [][]up
		keep   int
		want   staging.Stats // Chunks, Copies, Waits checked
	}{
		{"small uploads share a chunk", [][]up{{{0, 0, 16}, {0, 64, 16}, {1, 0, 256}}}, 2,
			staging.Stats{Chunks: 1, Copies: 3}},
		{"an upload spans chunks", [][]up{{{0, 0, 1000}, {0, 1000, 1000}}}, 2,
			staging.Stats{Chunks: 2, Copies: 3}},
		{"chunks come back after their fence", [][]up{
			{{0, 0, 1024}}, {{0, 1024, 1024}}, {{0, 2048, 1024}}, {{0, 3072, 1024}}, {{0, 0, 1024}}, {{0, 0, 1024}},
		}, 2, staging.Stats{Chunks: 3, Copies: 6}},
		{"larger than the belt streams through", [][]up{{{0, 0, 4096}, {1, 0, 4096}}}, 2,
			staging.Stats{Chunks: 4, Copies: 8, Waits: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev := testdevice.Host(t, host.Options{HoldCompletion: true})
			w := newWorld(t, dev, dev, staging.Options{ChunkBytes: 1024, MaxChunks: 4}, 4096, 4096)
			for i, fr := range c.frames {
				for _, u := range fr {
					if err := w.upload(u.dst, u.off, u.size); err != nil {
						t.Fatalf("frame %d: Upload%+v: %v", i, u, err)
					}
					must(t, w.verify())
				}
				must(t, w.endFrame())
				w.complete(c.keep)
				must(t, w.verify())
			}
			got := w.belt.Stats()
			if got.Chunks != c.want.Chunks || got.Copies != c.want.Copies || got.Waits != c.want.Waits {
				t.Fatalf("stats %+v, want chunks %d, copies %d, waits %d", got, c.want.Chunks, c.want.Copies, c.want.Waits)
			}
		})
	}
}

// TestBeltBackends uploads frames of random sizes on every backend, with
// the device's own completion, and reads every destination back.
func TestBeltBackends(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		w := newWorld(t, dev, nil, staging.Options{ChunkBytes: 64 << 10, MaxChunks: 4}, 256<<10, 64<<10)
		for frame := range 10 {
			for range 1 + frame%3 {
				i := w.rng.IntN(2)
				size := uint64(len(w.want[i]))
				n := 4 * (1 + w.rng.Uint64N(size/4))
				off := 4 * w.rng.Uint64N((size-n)/4+1)
				if n <= w.belt.ChunkBytes() && w.rng.IntN(2) == 0 {
					must(t, w.uploadFunc(i, off, n))
				} else {
					must(t, w.upload(i, off, n))
				}
			}
			must(t, w.endFrame())
			must(t, w.verify())
		}
		t.Logf("%+v", w.belt.Stats())
	})
}

// TestUploadFunc: an upload that does not fit what is left of the chunk
// goes whole to the next one, and the chunk left is submitted; one larger
// than a chunk is refused without calling fill.
func TestUploadFunc(t *testing.T) {
	dev := testdevice.Host(t, host.Options{HoldCompletion: true})
	w := newWorld(t, dev, dev, staging.Options{ChunkBytes: 1024, MaxChunks: 4}, 4096)
	must(t, w.uploadFunc(0, 0, 1000))
	must(t, w.uploadFunc(0, 1000, 100)) // 24 bytes left: the next chunk
	must(t, w.verify())
	if s := w.belt.Stats(); s.Chunks != 2 || s.Copies != 2 || s.Submits != 1 {
		t.Fatalf("stats %+v, want 2 chunks, 2 copies, 1 submit (on leaving the first chunk)", s)
	}
	never := func([]byte) { t.Fatal("fill called for a refused upload") }
	for _, c := range []struct{ off, n uint64 }{{0, 1028}, {2, 4}, {4096, 4}} {
		if err := w.belt.UploadFunc(w.dsts[0], c.off, c.n, never); !errors.Is(err, staging.ErrInvalidUpload) {
			t.Errorf("UploadFunc(%d, %d): %v, want ErrInvalidUpload", c.off, c.n, err)
		}
	}
	must(t, w.endFrame())
	must(t, w.verify())
}

// TestSubmitChunks: the belt submits once every SubmitChunks chunks it
// leaves with uploads, counting from the last submit it knows of (its
// own, or the frame's at EndFrame); the default is a quarter of
// MaxChunks, from 1 to 4.
func TestSubmitChunks(t *testing.T) {
	for _, c := range []struct {
		opts  staging.Options
		every int
	}{
		{staging.Options{ChunkBytes: 1024, MaxChunks: 8, SubmitChunks: 3}, 3},
		{staging.Options{ChunkBytes: 1024}, 4},
		{staging.Options{ChunkBytes: 1024, MaxChunks: 8}, 2},
		{staging.Options{ChunkBytes: 1024, MaxChunks: 3}, 1},
	} {
		dev := testdevice.Host(t, host.Options{HoldCompletion: true})
		w := newWorld(t, dev, dev, c.opts, 16<<10)
		submits := 0
		for frame, chunks := range []int{7, 3, 3} {
			for i := range chunks {
				must(t, w.upload(0, uint64(i)*1024, 1024))
			}
			// chunks-1 chunks left, the last still open.
			submits += (chunks - 1) / c.every
			if s := w.belt.Stats(); s.Submits != submits {
				t.Fatalf("%+v, frame %d: %d submits, want %d", c.opts, frame, s.Submits, submits)
			}
			must(t, w.endFrame())
			must(t, w.verify())
			w.complete(0)
		}
	}
	for _, o := range []staging.Options{{SubmitChunks: -1}, {MaxChunks: 4, SubmitChunks: 5}} {
		if _, err := staging.New(testdevice.Host(t, host.Options{}), o); !errors.Is(err, staging.ErrInvalidOptions) {
			t.Errorf("New(%+v): %v, want ErrInvalidOptions", o, err)
		}
	}
}

// slowDevice takes submit and wait long on every Submit and Wait.
type slowDevice struct {
	device.Device
	submit, wait time.Duration
}

func (d *slowDevice) Submit() error { time.Sleep(d.submit); return d.Device.Submit() }
func (d *slowDevice) Wait() error   { time.Sleep(d.wait); return d.Device.Wait() }

// TestBeltTimes: Stats adds up the time of the submits the belt makes on
// leaving a chunk and of its waits for the GPU, and of nothing else.
func TestBeltTimes(t *testing.T) {
	hd := testdevice.Host(t, host.Options{HoldCompletion: true})
	dev := &slowDevice{Device: hd, submit: 2 * time.Millisecond, wait: 3 * time.Millisecond}
	w := newWorld(t, dev, hd, staging.Options{ChunkBytes: 1024, MaxChunks: 2}, 4096)
	must(t, w.upload(0, 0, 512)) // one chunk: no submit, no wait
	must(t, w.endFrame())
	if s := w.belt.Stats(); s.SubmitTime != 0 || s.WaitTime != 0 {
		t.Fatalf("stats %+v: time without a submit or a wait of the belt's", s)
	}
	must(t, w.upload(0, 0, 4096))
	must(t, w.endFrame())
	must(t, w.verify())
	s := w.belt.Stats()
	if s.Submits == 0 || s.Waits == 0 || s.SubmitTime < time.Duration(s.Submits)*dev.submit || s.WaitTime < time.Duration(s.Waits)*dev.wait {
		t.Fatalf("stats %+v: want submits and waits, each taking its time", s)
	}
}

// TestBeltErrors: bad uploads write nothing; a refused chunk is an error
// and the belt keeps working; Release releases every chunk.
func TestBeltErrors(t *testing.T) {
	dev := testdevice.Host(t, host.Options{HoldCompletion: true})
	w := newWorld(t, dev, dev, staging.Options{ChunkBytes: 256, MaxChunks: 2}, 1024)
	must(t, w.upload(0, 0, 64))
	before := w.belt.Stats()
	for _, c := range []struct {
		off, n uint64
	}{{2, 4}, {0, 6}, {1020, 8}, {1 << 62, 4}} {
		if err := w.belt.Upload(w.dsts[0], c.off, make([]byte, c.n)); !errors.Is(err, staging.ErrInvalidUpload) {
			t.Errorf("Upload(%d bytes at %d): %v, want ErrInvalidUpload", c.n, c.off, err)
		}
	}
	if err := w.belt.Upload(nil, 0, make([]byte, 4)); !errors.Is(err, device.ErrInvalidObject) {
		t.Errorf("Upload to nil: %v", err)
	}
	if w.belt.Stats() != before {
		t.Fatalf("refused uploads changed the belt: %+v, then %+v", before, w.belt.Stats())
	}
	must(t, w.verify())

	dev.FailNextCreates(1)
	if err := w.upload(0, 0, 256); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("Upload with the chunk refused: %v", err)
	}
	// The part that fit the first chunk went through; the model does not
	// know, so upload the whole range again now that the device agrees.
	must(t, w.upload(0, 0, 512))
	must(t, w.verify())

	for _, o := range []staging.Options{{MaxChunks: -1}, {ChunkBytes: 1 << 40}} {
		if _, err := staging.New(dev, o); !errors.Is(err, staging.ErrInvalidOptions) {
			t.Errorf("New(%+v): %v", o, err)
		}
	}
	if err := w.belt.EndFrame(0); !errors.Is(err, staging.ErrInvalidFence) {
		t.Errorf("EndFrame(0): %v", err)
	}
	w.belt.Release()
	w.belt.Release()
	if err := w.belt.Upload(w.dsts[0], 0, make([]byte, 4)); !errors.Is(err, device.ErrReleased) {
		t.Errorf("Upload after Release: %v", err)
	}
	if n := dev.Stats().Buffers; n != 1 {
		t.Errorf("%d buffers alive after Release, want the destination alone", n)
	}
}

// TestNilDevice: New refuses a nil device with ErrInvalidOptions instead
// of panicking (issue 21).
func TestNilDevice(t *testing.T) {
	if _, err := staging.New(nil, staging.Options{}); !errors.Is(err, staging.ErrInvalidOptions) {
		t.Fatalf("New(nil): %v, want ErrInvalidOptions", err)
	}
}

// TestUploadTexture uploads layers and mips of textures whose rows need
// padding (and one whose rows do not) between buffer uploads, over
// frames, on every backend, and reads every texel back; a mip larger than
// a chunk goes by WriteTexture. Refused uploads change nothing.
func TestUploadTexture(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		w := newWorld(t, dev, nil, staging.Options{ChunkBytes: 64 << 10, MaxChunks: 4}, 64<<10)
		usage := device.TextureCopyDst | device.TextureCopySrc | device.TextureBinding
		descs := []device.TextureDesc{
			{Label: "32x32 rgba8", Format: device.RGBA8Unorm, Width: 32, Height: 32, Layers: 3, Mips: 3, Usage: usage},
			{Label: "64x64 rgba8", Format: device.RGBA8Unorm, Width: 64, Height: 64, Layers: 2, Usage: usage},
			{Label: "13x7 r8", Format: device.R8Unorm, Width: 13, Height: 7, Layers: 2, Mips: 2, Usage: usage},
			{Label: "9x5 rgba32f", Format: device.RGBA32Float, Width: 9, Height: 5, Layers: 2, Usage: usage},
			{Label: "256x256 rgba8, over a chunk", Format: device.RGBA8Unorm, Width: 256, Height: 256, Usage: usage},
		}
		texs := make([]device.Texture, len(descs))
		want := make([][][][]byte, len(descs)) // [texture][layer][mip]
		for i, d := range descs {
			tex, err := dev.CreateTexture(d)
			must(t, err)
			t.Cleanup(tex.Release)
			texs[i], d = tex, tex.Desc()
			want[i] = make([][][]byte, d.Layers)
			for l := range want[i] {
				want[i][l] = make([][]byte, d.Mips)
				for m := range want[i][l] {
					want[i][l][m] = make([]byte, d.MipBytes(uint32(m)))
				}
			}
		}
		for range 6 {
			for range 8 {
				i := w.rng.IntN(len(texs))
				d := texs[i].Desc()
				l, m := w.rng.Uint32N(d.Layers), w.rng.Uint32N(d.Mips)
				data := make([]byte, d.MipBytes(m))
				for j := range data {
					data[j] = byte(w.rng.Uint32())
				}
				if d.Format == device.RGBA32Float {
					for j := 3; j < len(data); j += 4 {
						data[j] &= 0x3f // finite floats: read back as written
					}
				}
				must(t, w.belt.UploadTexture(texs[i], l, m, data))
				want[i][l][m] = data
				must(t, w.upload(0, 4*w.rng.Uint64N(1024), 4*(1+w.rng.Uint64N(64))))
			}
			must(t, w.endFrame())
			must(t, w.verify())
			for i, tex := range texs {
				for l, mips := range want[i] {
					for m, wm := range mips {
						got := make([]byte, len(wm))
						must(t, dev.ReadTexture(tex, uint32(l), uint32(m), got))
						if !bytes.Equal(got, wm) {
							t.Fatalf("%s layer %d mip %d differs", descs[i].Label, l, m)
						}
					}
				}
			}
		}
		before := w.belt.Stats()
		noDst, err := dev.CreateTexture(device.TextureDesc{Format: device.RGBA8Unorm, Width: 8, Height: 8, Usage: device.TextureCopySrc})
		must(t, err)
		t.Cleanup(noDst.Release)
		for _, c := range []struct {
			what       string
			tex        device.Texture
			layer, mip uint32
			n          int
			want       error
		}{
			{"short data", texs[0], 0, 0, 32*32*4 - 4, device.ErrInvalidSize},
			{"mip 1 with mip 0's bytes", texs[0], 0, 1, 32 * 32 * 4, device.ErrInvalidSize},
			{"a layer past the last", texs[0], 3, 0, 32 * 32 * 4, device.ErrOutOfBounds},
			{"a mip past the last", texs[1], 0, 1, 32 * 32 * 4, device.ErrOutOfBounds},
			{"a texture without TextureCopyDst", noDst, 0, 0, 8 * 8 * 4, device.ErrInvalidUsage},
			{"a nil texture", nil, 0, 0, 4, device.ErrInvalidObject},
		} {
			if err := w.belt.UploadTexture(c.tex, c.layer, c.mip, make([]byte, c.n)); !errors.Is(err, c.want) {
				t.Errorf("UploadTexture of %s: %v, want %v", c.what, err, c.want)
			}
		}
		if w.belt.Stats() != before {
			t.Errorf("refused uploads changed the belt: %+v, then %+v", before, w.belt.Stats())
		}
		t.Logf("%+v", w.belt.Stats())
	})
}
