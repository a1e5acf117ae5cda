package bindless_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/staging"
)

var (
	rgba4  = bindless.Key{Format: device.RGBA8Unorm, Width: 4, Height: 4}
	rgba8  = bindless.Key{Format: device.RGBA8Unorm, Width: 8, Height: 8}
	r32x2  = bindless.Key{Format: device.R32Float, Width: 2, Height: 2}
	mipped = bindless.Key{Format: device.RGBA8Unorm, Width: 4, Height: 4, Mips: 3}
)

func newRegistry(t *testing.T, dev device.Device, opts bindless.Options) *bindless.Registry[string] {
	t.Helper()
	r, err := bindless.New[string](dev, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Release)
	return r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRegistryTable walks scripted operations on four-layer pages and
// checks each handle, the page count and the version after every one.
func TestRegistryTable(t *testing.T) {
	type op struct {
		do      string // "reg", "unreg", "update"
		id      string
		key     bindless.Key
		handle  string // want, as page:layer; "" for no check
		err     error
		pages   int
		version uint64
	}
	for _, c := range []struct {
		name string
		opts bindless.Options
		ops  []op
	}{
		{"defaults then a bucket", bindless.Options{LayersPerPage: 4}, []op{
			{"reg", "a", rgba4, "1:0", nil, 2, 2},
			{"reg", "b", rgba4, "1:1", nil, 2, 2},
			{"reg", "a", rgba4, "1:0", nil, 2, 2}, // idempotent
			{"reg", "one", bindless.Key{Format: device.RGBA8Unorm, Width: 1, Height: 1}, "0:3", nil, 2, 2},
			{"reg", "two", bindless.Key{Format: device.RGBA8Unorm, Width: 1, Height: 1}, "2:0", nil, 3, 3},
		}},
		{"reuse the lowest free", bindless.Options{LayersPerPage: 4}, []op{
			{"reg", "a", rgba4, "1:0", nil, 2, 2},
			{"reg", "b", rgba4, "1:1", nil, 2, 2},
			{"reg", "c", rgba4, "1:2", nil, 2, 2},
			{"unreg", "c", rgba4, "", nil, 2, 2},
			{"unreg", "a", rgba4, "", nil, 2, 2},
			{"reg", "d", rgba4, "1:0", nil, 2, 2}, // a's, freed first
			{"reg", "e", rgba4, "1:2", nil, 2, 2},
			{"reg", "f", rgba4, "1:3", nil, 2, 2},
			{"reg", "g", rgba4, "2:0", nil, 3, 3},
			{"reg", "h", rgba4, "2:1", nil, 3, 3},
			{"unreg", "g", rgba4, "", nil, 3, 3},
			{"unreg", "e", rgba4, "", nil, 3, 3},
			{"reg", "i", rgba4, "1:2", nil, 3, 3}, // the lower page first
			{"reg", "j", rgba4, "2:0", nil, 3, 3},
			{"unreg", "a", rgba4, "", bindless.ErrNotRegistered, 3, 3},
		}},
		{"buckets interleave pages", bindless.Options{LayersPerPage: 2}, []op{
			{"reg", "a", rgba4, "2:0", nil, 3, 3},
			{"reg", "x", r32x2, "3:0", nil, 4, 4},
			{"reg", "b", rgba4, "2:1", nil, 4, 4},
			{"reg", "c", rgba4, "4:0", nil, 5, 5},
			{"reg", "y", r32x2, "3:1", nil, 5, 5},
		}},
		{"full bucket", bindless.Options{LayersPerPage: 3, MaxPages: 3, MaxPagesPerBucket: 1}, []op{
			{"reg", "a", rgba4, "1:0", nil, 2, 2},
			{"reg", "b", rgba4, "1:1", nil, 2, 2},
			{"reg", "c", rgba4, "1:2", nil, 2, 2},
			{"reg", "d", rgba4, "", bindless.ErrFull, 2, 2}, // MaxPagesPerBucket
			{"reg", "x", r32x2, "2:0", nil, 3, 3},
			{"reg", "y", rgba8, "", bindless.ErrFull, 3, 3}, // MaxPages
			{"unreg", "b", rgba4, "", nil, 3, 3},
			{"reg", "d", rgba4, "1:1", nil, 3, 3},
		}},
		{"mismatches", bindless.Options{LayersPerPage: 4}, []op{
			{"reg", "a", rgba4, "1:0", nil, 2, 2},
			{"reg", "a", rgba8, "", bindless.ErrMismatch, 2, 2},
			{"update", "a", rgba8, "", bindless.ErrMismatch, 2, 2},
			{"update", "a", rgba4, "", nil, 2, 2},
			{"update", "z", rgba4, "", bindless.ErrNotRegistered, 2, 2},
			{"reg", "bad", bindless.Key{Format: device.RGBA8Unorm, Width: 4, Height: 4, Mips: 9}, "", bindless.ErrInvalidKey, 2, 2},
			{"reg", "bad", bindless.Key{Format: 0, Width: 4, Height: 4}, "", bindless.ErrInvalidKey, 2, 2},
			{"reg", "ms", bindless.Key{Format: device.RGBA8Unorm, Width: 4, Height: 4, Samples: 4}, "", bindless.ErrInvalidKey, 2, 2},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev := testdevice.Host(t, host.Options{})
			r := newRegistry(t, dev, c.opts)
			m := newModel(dev, r)
			must(t, m.verify())
			for i, o := range c.ops {
				var h bindless.Handle
				var err error
				switch o.do {
				case "reg":
					h, err = m.register(o.id, o.key, i)
				case "unreg":
					err = m.unregister(o.id)
				case "update":
					if _, ok := r.Handle(o.id); !ok {
						err = r.Update(o.id, o.key.Width, o.key.Height, pixels(o.key, i))
						break
					}
					if e := m.want[o.id]; e.key != o.key.Normalized() {
						err = r.Update(o.id, o.key.Width, o.key.Height, pixels(o.key, i))
						break
					}
					err = m.update(o.id, i)
				}
				if !errors.Is(err, o.err) || (o.err == nil && err != nil) {
					t.Fatalf("op %d %s %q: %v, want %v", i, o.do, o.id, err, o.err)
				}
				if o.handle != "" && h.String() != o.handle {
					t.Fatalf("op %d %s %q: handle %v, want %s", i, o.do, o.id, h, o.handle)
				}
				if r.NumPages() != o.pages || r.Version() != o.version {
					t.Fatalf("op %d %s %q: %d pages, version %d; want %d, %d", i, o.do, o.id, r.NumPages(), r.Version(), o.pages, o.version)
				}
				if err := m.verify(); err != nil {
					t.Fatalf("op %d %s %q: %v", i, o.do, o.id, err)
				}
			}
		})
	}
}

// TestRegistryBackends registers, updates, copies and unregisters on
// every backend, with queue writes and through a staging belt, and reads
// every texture back.
func TestRegistryBackends(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		for _, belt := range []bool{false, true} {
			t.Run(fmt.Sprint("belt=", belt), func(t *testing.T) { testRegistryBackend(t, dev, belt) })
		}
	})
}

// withBelt returns o with a staging belt on dev that carries the texels
// and is released after the registry, when belt is set.
func withBelt(t *testing.T, dev device.Device, o bindless.Options, belt bool) bindless.Options {
	t.Helper()
	if belt {
		b, err := staging.New(dev, staging.Options{ChunkBytes: 64 << 10})
		must(t, err)
		t.Cleanup(func() {
			if b.Stats().Uploads == 0 {
				t.Error("nothing went through the belt")
			}
			b.Release()
		})
		o.Belt = b
	}
	return o
}

func testRegistryBackend(t *testing.T, dev device.Device, belt bool) {
	r := newRegistry(t, dev, withBelt(t, dev, bindless.Options{LayersPerPage: 3}, belt))
	m := newModel(dev, r)
	must(t, m.verify())
	for i := range 8 {
		_, err := m.register(fmt.Sprint("t", i), []bindless.Key{rgba4, rgba8}[i%2], i)
		must(t, err)
	}
	must(t, m.verify())
	must(t, m.update("t3", 99))
	must(t, m.unregister("t2"))
	must(t, m.unregister("t4"))
	must(t, m.verify())
	// A copy of another texture's layer.
	src, err := dev.CreateTexture(device.TextureDesc{Format: device.RGBA8Unorm, Width: 4, Height: 4, Layers: 2,
		Usage: device.TextureCopySrc | device.TextureCopyDst})
	must(t, err)
	defer src.Release()
	px := pixels(rgba4, 7)
	must(t, dev.WriteTexture(src, 1, 0, px))
	h, err := r.RegisterCopy("copy", src, 1)
	must(t, err)
	if h.String() != "1:1" { // t2's layer, the lowest free
		t.Fatalf("RegisterCopy reused %v, want 1:1", h)
	}
	m.want["copy"] = entry{key: rgba4.Normalized(), h: h, pixels: px}
	must(t, m.verify())
	px = pixels(rgba4, 8)
	must(t, dev.WriteTexture(src, 0, 0, px))
	must(t, r.UpdateCopy("copy", src, 0))
	m.want["copy"] = entry{key: rgba4.Normalized(), h: h, pixels: px}
	must(t, m.verify())
}

// TestRegistryMips registers a three-mip texture from mip 0 and checks the
// generated mips against the device's box filter.
func TestRegistryMips(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		r := newRegistry(t, dev, bindless.Options{})
		px := pixels(mipped, 3)
		h, err := r.Register("m", mipped, px)
		must(t, err)
		tex, layer, _ := r.Locate(h)
		want := px
		for mip, size := range []uint32{2, 1} {
			want = box(want, size*2, size)
			got := make([]byte, len(want))
			must(t, dev.ReadTexture(tex, layer, uint32(mip+1), got))
			if string(got) != string(want) {
				t.Fatalf("mip %d: % x, want % x", mip+1, got, want)
			}
		}
		// GenerateMips after a write of mip 0 by hand.
		px = pixels(mipped, 4)
		must(t, dev.WriteTexture(tex, layer, 0, px))
		must(t, r.GenerateMips("m"))
		got := make([]byte, 16)
		must(t, dev.ReadTexture(tex, layer, 1, got))
		if string(got) != string(box(px, 4, 2)) {
			t.Fatalf("GenerateMips: mip 1 % x", got)
		}
		if err := r.GenerateMips("none"); !errors.Is(err, bindless.ErrNotRegistered) {
			t.Fatalf("GenerateMips of an unknown id: %v", err)
		}
	})
}

// box is the device's 2x2 box filter of an RGBA8 image w wide to one
// out x out.
func box(in []byte, w, out uint32) []byte {
	res := make([]byte, 0, out*out*4)
	at := func(x, y, c uint32) uint32 { return uint32(in[(y*w+x)*4+c]) }
	for y := range out {
		for x := range out {
			for c := range uint32(4) {
				s := at(2*x, 2*y, c) + at(2*x+1, 2*y, c) + at(2*x, 2*y+1, c) + at(2*x+1, 2*y+1, c)
				res = append(res, byte((s+2)/4))
			}
		}
	}
	return res
}

// TestRegistryFaults: the device refuses a page or a write. The call
// fails, and nothing the caller sees changes.
func TestRegistryFaults(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	r := newRegistry(t, dev, bindless.Options{LayersPerPage: 2})
	m := newModel(dev, r)
	_, err := m.register("a", rgba4, 1)
	must(t, err)
	_, err = m.register("b", rgba4, 2)
	must(t, err)
	before, live := r.Stats(), dev.Stats().Textures

	dev.FailNextCreates(1)
	_, err = m.register("c", rgba4, 3)
	if !errors.Is(err, bindless.ErrFull) || !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("Register with the page refused: %v", err)
	}
	if r.Stats() != before || dev.Stats().Textures != live {
		t.Fatalf("a refused page changed the registry: %+v, then %+v", before, r.Stats())
	}
	must(t, m.verify())

	// A write that fails after the page was made: the page goes again.
	_, err = r.Register("short", rgba8, make([]byte, 3))
	if !errors.Is(err, bindless.ErrInvalidSize) {
		t.Fatalf("Register with short pixels: %v", err)
	}
	dev.Lose()
	_, err = r.Register("lost", rgba8, pixels(rgba8, 1))
	if !errors.Is(err, device.ErrDeviceLost) {
		t.Fatalf("Register on a lost device: %v", err)
	}
	if r.Stats() != before {
		t.Fatalf("a failed Register changed the registry: %+v, then %+v", before, r.Stats())
	}
	if err := bindless.Check(r); err != nil {
		t.Fatal(err)
	}

	// Creation of the defaults refused: New fails and leaves nothing.
	dev2 := testdevice.Host(t, host.Options{FailCreateAt: 1})
	if _, err := bindless.New[int](dev2, bindless.Options{}); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("New with the first page refused: %v", err)
	}
	if n := dev2.Stats().Textures; n != 0 {
		t.Fatalf("%d textures alive after a failed New", n)
	}
}

func TestRegistryOptions(t *testing.T) {
	dev := testdevice.Host(t, host.Options{Limits: device.Limits{MaxArrayLayers: 16}})
	for _, o := range []bindless.Options{
		{LayersPerPage: 17},
		{MaxPages: 1<<16 + 1},
		{MaxPages: -1},
		// Too few pages for the three built-in textures.
		{LayersPerPage: 1, MaxPages: 2},
		{LayersPerPage: 2, MaxPagesPerBucket: 1},
		// The built-in textures fill every page: nothing else fits.
		{LayersPerPage: 3, MaxPages: 1},
		{LayersPerPage: 1, MaxPages: 3},
	} {
		if _, err := bindless.New[int](dev, o); !errors.Is(err, bindless.ErrInvalidOptions) {
			t.Errorf("New(%+v): %v, want ErrInvalidOptions", o, err)
		}
	}
	// The fewest pages that leave room: a free layer beside the built-in
	// textures, or a page.
	for _, o := range []bindless.Options{
		{LayersPerPage: 4, MaxPages: 1},
		{LayersPerPage: 3, MaxPages: 2, MaxPagesPerBucket: 1},
		{LayersPerPage: 1, MaxPages: 4, MaxPagesPerBucket: 3},
	} {
		r, err := bindless.New[int](dev, o)
		if err != nil {
			t.Fatalf("New(%+v): %v", o, err)
		}
		r.Release()
	}
	r := newRegistry(t, dev, bindless.Options{})
	if st := r.Stats(); st.Layers != 16 || st.Builtin != 3 || st.Pages != 1 {
		t.Fatalf("defaults: %+v", st)
	}
	if r.White() != 0 {
		t.Fatalf("White = %v, want 0:0", r.White())
	}
	r.Release()
	r.Release()
	if _, err := r.Register("a", rgba4, pixels(rgba4, 0)); !errors.Is(err, device.ErrReleased) {
		t.Fatalf("Register after Release: %v", err)
	}
	if err := r.Unregister("a"); !errors.Is(err, device.ErrReleased) {
		t.Fatalf("Unregister after Release: %v", err)
	}
	if _, _, ok := r.Locate(0); ok {
		t.Fatal("Locate after Release found a texture")
	}
	if n := dev.Stats().Textures; n != 0 {
		t.Fatalf("%d textures alive after Release", n)
	}
}

// TestRegisterCopyRollback: a RegisterCopy that fails after taking a
// never-used layer (a source texture of another device) gives the layer
// back as unused, not as free: Stats are as before, as the doc promises
// (issue 21). A failure on a freed layer puts it back on the free list.
func TestRegisterCopyRollback(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	other := testdevice.Host(t, host.Options{})
	r := newRegistry(t, dev, bindless.Options{LayersPerPage: 4})
	_, err := r.Register("a", rgba4, pixels(rgba4, 1))
	must(t, err)
	src, err := other.CreateTexture(device.TextureDesc{Format: device.RGBA8Unorm, Width: 4, Height: 4,
		Usage: device.TextureCopySrc | device.TextureBinding})
	must(t, err)
	t.Cleanup(src.Release)
	for _, when := range []string{"unused layer", "freed layer"} {
		if when == "freed layer" {
			_, err := r.Register("b", rgba4, pixels(rgba4, 2))
			must(t, err)
			must(t, r.Unregister("b"))
		}
		before := r.Stats()
		if _, err := r.RegisterCopy("x", src, 0); err == nil {
			t.Fatalf("%s: RegisterCopy from another device's texture succeeded", when)
		}
		if after := r.Stats(); after != before {
			t.Fatalf("%s: a failed RegisterCopy changed Stats: %+v, then %+v", when, before, after)
		}
		must(t, bindless.Check(r))
	}
	// Every layer of the page is still there to take: 3 more of 4.
	for i := range 3 {
		_, err := r.Register(fmt.Sprint("c", i), rgba4, pixels(rgba4, i))
		must(t, err)
	}
	if st := r.Stats(); st.Pages != 2 {
		t.Fatalf("%d pages, want 2 (the builtins' and rgba4's)", st.Pages)
	}
}

// TestNilDevice: New refuses a nil device with ErrInvalidOptions instead
// of panicking (issue 21).
func TestNilDevice(t *testing.T) {
	if _, err := bindless.New[string](nil, bindless.Options{}); !errors.Is(err, bindless.ErrInvalidOptions) {
		t.Fatalf("New(nil): %v, want ErrInvalidOptions", err)
	}
}
