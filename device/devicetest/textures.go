package devicetest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/device"
)

var formats = []device.TextureFormat{
	device.R8Unorm, device.RGBA8Unorm, device.RGBA8UnormSrgb, device.BGRA8Unorm,
	device.BGRA8UnormSrgb, device.R32Float, device.RGBA16Float, device.RGBA32Float,
}

const texRW = device.TextureCopySrc | device.TextureCopyDst | device.TextureBinding

func mustTexture(t *testing.T, d device.Device, desc device.TextureDesc) device.Texture {
	t.Helper()
	if desc.Label == "" {
		desc.Label = t.Name()
	}
	tex, err := d.CreateTexture(desc)
	if err != nil {
		t.Fatalf("CreateTexture(%+v): %v", desc, err)
	}
	return tex
}

// texels returns random data for n bytes of format f: any bytes for 8-bit
// formats, finite normal values in [-2, 2) for float formats.
func texels(r *rand.Rand, f device.TextureFormat, n uint64) []byte {
	b := make([]byte, n)
	switch f {
	case device.R32Float, device.RGBA32Float:
		for i := uint64(0); i < n; i += 4 {
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(float32(r.Float64()*4-2)))
		}
	case device.RGBA16Float:
		for i := uint64(0); i < n; i += 2 {
			binary.LittleEndian.PutUint16(b[i:], toHalf(float32(r.Float64()*4-2)))
		}
	default:
		return randBytes(r, n)
	}
	return b
}

func readTex(t *testing.T, d device.Device, tex device.Texture, layer, mip uint32) []byte {
	t.Helper()
	got := make([]byte, tex.Desc().MipBytes(mip))
	if err := d.ReadTexture(tex, layer, mip, got); err != nil {
		t.Fatalf("ReadTexture(layer %d, mip %d): %v", layer, mip, err)
	}
	return got
}

// fillTex writes random texels to every layer and mip of tex and returns
// them, indexed [layer][mip].
func fillTex(t *testing.T, d device.Device, r *rand.Rand, tex device.Texture) [][][]byte {
	t.Helper()
	desc := tex.Desc()
	data := make([][][]byte, desc.Layers)
	for l := range desc.Layers {
		data[l] = make([][]byte, desc.Mips)
		for m := range desc.Mips {
			data[l][m] = texels(r, desc.Format, desc.MipBytes(m))
			must(t, d.WriteTexture(tex, l, m, data[l][m]))
		}
	}
	return data
}

func checkTex(t *testing.T, d device.Device, tex device.Texture, want [][][]byte) {
	t.Helper()
	for l, mips := range want {
		for m, w := range mips {
			equal(t, fmt.Sprintf("layer %d mip %d", l, m), readTex(t, d, tex, uint32(l), uint32(m)), w)
		}
	}
}

func testCreateTexture(t *testing.T, s *suite) {
	d := s.device(t)
	l := d.Limits()
	ok := device.TextureDesc{Format: device.RGBA8Unorm, Width: 16, Height: 8, Layers: 2, Mips: 5, Usage: texRW}
	mod := func(f func(*device.TextureDesc)) device.TextureDesc { c := ok; f(&c); return c }
	for _, c := range []struct {
		what string
		desc device.TextureDesc
		want error
	}{
		{"valid", ok, nil},
		{"defaults", device.TextureDesc{Format: device.R8Unorm, Width: 3, Height: 5, Usage: device.TextureCopyDst}, nil},
		{"zero format", mod(func(d *device.TextureDesc) { d.Format = 0 }), device.ErrInvalidDescriptor},
		{"unknown format", mod(func(d *device.TextureDesc) { d.Format = 200 }), device.ErrInvalidDescriptor},
		{"zero width", mod(func(d *device.TextureDesc) { d.Width = 0 }), device.ErrInvalidDescriptor},
		{"zero height", mod(func(d *device.TextureDesc) { d.Height = 0 }), device.ErrInvalidDescriptor},
		{"too many mips", mod(func(d *device.TextureDesc) { d.Mips = 6 }), device.ErrInvalidDescriptor},
		{"2 samples", mod(func(d *device.TextureDesc) { d.Samples = 2 }), device.ErrInvalidDescriptor},
		{"multisampled with mips", mod(func(d *device.TextureDesc) {
			d.Samples, d.Layers, d.Usage = 4, 1, device.TextureRenderAttachment
		}), device.ErrInvalidDescriptor},
		{"multisampled with layers", mod(func(d *device.TextureDesc) {
			d.Samples, d.Mips, d.Usage = 4, 1, device.TextureRenderAttachment
		}), device.ErrInvalidDescriptor},
		{"multisampled without RenderAttachment", mod(func(d *device.TextureDesc) { d.Samples, d.Mips, d.Layers = 4, 1, 1 }), device.ErrInvalidUsage},
		{"wider than MaxTextureSize2D", mod(func(d *device.TextureDesc) { d.Width, d.Mips = l.MaxTextureSize2D+1, 1 }), device.ErrTooLarge},
		{"taller than MaxTextureSize2D", mod(func(d *device.TextureDesc) { d.Height, d.Mips = l.MaxTextureSize2D+1, 1 }), device.ErrTooLarge},
		{"more layers than MaxArrayLayers", mod(func(d *device.TextureDesc) { d.Layers = l.MaxArrayLayers + 1 }), device.ErrTooLarge},
		{"empty usage", mod(func(d *device.TextureDesc) { d.Usage = 0 }), device.ErrInvalidUsage},
		{"unknown usage", mod(func(d *device.TextureDesc) { d.Usage |= 0x100 }), device.ErrInvalidUsage},
		{"storage sRGB", mod(func(d *device.TextureDesc) { d.Format, d.Usage = device.RGBA8UnormSrgb, device.TextureStorage }), device.ErrInvalidUsage},
		{"storage RGBA8Unorm", mod(func(d *device.TextureDesc) { d.Usage |= device.TextureStorage }), nil},
	} {
		tex, err := d.CreateTexture(c.desc)
		if c.want != nil {
			wantErr(t, "CreateTexture "+c.what, err, c.want)
			continue
		}
		if err != nil {
			t.Errorf("CreateTexture %s: %v", c.what, err)
			continue
		}
		if got := tex.Desc(); got != c.desc.Normalize() {
			t.Errorf("CreateTexture %s: Desc %+v, want %+v", c.what, got, c.desc.Normalize())
		}
		tex.Release()
	}
	// New textures are zeroed, and the layer limit itself is allowed.
	tex := mustTexture(t, d, device.TextureDesc{Format: device.RGBA8Unorm, Width: 4, Height: 4, Layers: l.MaxArrayLayers, Mips: 3, Usage: texRW})
	for _, lm := range [][2]uint32{{0, 0}, {l.MaxArrayLayers - 1, 2}} {
		equal(t, fmt.Sprintf("new texture layer %d mip %d", lm[0], lm[1]), readTex(t, d, tex, lm[0], lm[1]), make([]byte, tex.Desc().MipBytes(lm[1])))
	}
}

func testWriteReadTexture(t *testing.T, s *suite) {
	d := s.device(t)
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			r := newRand(t.Name())
			// Odd sizes: rows of any byte length, mips that round down.
			tex := mustTexture(t, d, device.TextureDesc{Format: f, Width: 13, Height: 7, Layers: 3, Mips: 4, Usage: texRW})
			want := fillTex(t, d, r, tex)
			checkTex(t, d, tex, want)
			// Overwriting one subresource leaves the others alone.
			want[1][2] = texels(r, f, tex.Desc().MipBytes(2))
			must(t, d.WriteTexture(tex, 1, 2, want[1][2]))
			checkTex(t, d, tex, want)
		})
	}
}

func testTextureErrors(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	tex := mustTexture(t, d, device.TextureDesc{Format: device.RGBA8Unorm, Width: 8, Height: 8, Layers: 2, Mips: 4, Usage: texRW})
	want := fillTex(t, d, r, tex)
	mip0 := make([]byte, 8*8*4)
	for _, c := range []struct {
		what       string
		layer, mip uint32
		n          int
		want       error
	}{
		{"short data", 0, 0, len(mip0) - 4, device.ErrInvalidSize},
		{"long data", 0, 0, len(mip0) + 4, device.ErrInvalidSize},
		{"mip 1 with mip 0's size", 0, 1, len(mip0), device.ErrInvalidSize},
		{"layer past the last", 2, 0, len(mip0), device.ErrOutOfBounds},
		{"mip past the last", 0, 4, 4, device.ErrOutOfBounds},
	} {
		wantErr(t, "WriteTexture "+c.what, d.WriteTexture(tex, c.layer, c.mip, make([]byte, c.n)), c.want)
		wantErr(t, "ReadTexture "+c.what, d.ReadTexture(tex, c.layer, c.mip, make([]byte, c.n)), c.want)
	}
	wantErr(t, "GenerateMips on a layer past the last", d.GenerateMips(tex, 2), device.ErrOutOfBounds)
	checkTex(t, d, tex, want)

	desc := device.TextureDesc{Format: device.RGBA8Unorm, Width: 8, Height: 8, Mips: 2}
	desc.Usage = device.TextureCopySrc | device.TextureBinding
	noDst := mustTexture(t, d, desc)
	desc.Usage = device.TextureCopyDst | device.TextureBinding
	noSrc := mustTexture(t, d, desc)
	wantErr(t, "WriteTexture without TextureCopyDst", d.WriteTexture(noDst, 0, 0, mip0), device.ErrInvalidUsage)
	wantErr(t, "ReadTexture without TextureCopySrc", d.ReadTexture(noSrc, 0, 0, mip0), device.ErrInvalidUsage)
	wantErr(t, "GenerateMips without TextureCopyDst", d.GenerateMips(noDst, 0), device.ErrInvalidUsage)
	wantErr(t, "GenerateMips without TextureCopySrc", d.GenerateMips(noSrc, 0), device.ErrInvalidUsage)
}

func testCopyTextureLayer(t *testing.T, s *suite) {
	d := s.device(t)
	for _, f := range []device.TextureFormat{device.RGBA8Unorm, device.RGBA16Float, device.RGBA32Float, device.R8Unorm} {
		t.Run(f.String(), func(t *testing.T) {
			r := newRand(t.Name())
			desc := device.TextureDesc{Format: f, Width: 24, Height: 10, Layers: 4, Mips: 5, Usage: texRW}
			a, b := mustTexture(t, d, desc), mustTexture(t, d, desc)
			wa, wb := fillTex(t, d, r, a), fillTex(t, d, r, b)
			must(t, d.CopyTextureLayer(a, 2, b, 0))
			wb[0] = append([][]byte(nil), wa[2]...)
			must(t, d.CopyTextureLayer(a, 3, a, 1)) // within one texture
			wa[1] = append([][]byte(nil), wa[3]...)
			must(t, d.CopyTextureLayer(b, 0, a, 3))
			wa[3] = append([][]byte(nil), wb[0]...)
			checkTex(t, d, a, wa)
			checkTex(t, d, b, wb)
		})
	}
	r := newRand(t.Name())
	base := device.TextureDesc{Format: device.RGBA8Unorm, Width: 8, Height: 8, Layers: 2, Mips: 2, Usage: texRW}
	a := mustTexture(t, d, base)
	wa := fillTex(t, d, r, a)
	other := func(f func(*device.TextureDesc)) device.Texture { c := base; f(&c); return mustTexture(t, d, c) }
	for _, c := range []struct {
		what string
		dst  device.Texture
	}{
		{"another format", other(func(d *device.TextureDesc) { d.Format = device.BGRA8Unorm })},
		{"another width", other(func(d *device.TextureDesc) { d.Width = 16 })},
		{"another height", other(func(d *device.TextureDesc) { d.Height = 4 })},
		{"another mip count", other(func(d *device.TextureDesc) { d.Mips = 1 })},
	} {
		wantErr(t, "CopyTextureLayer to "+c.what, d.CopyTextureLayer(a, 0, c.dst, 0), device.ErrIncompatible)
	}
	b := other(func(*device.TextureDesc) {})
	wantErr(t, "CopyTextureLayer from a layer past the last", d.CopyTextureLayer(a, 2, b, 0), device.ErrOutOfBounds)
	wantErr(t, "CopyTextureLayer to a layer past the last", d.CopyTextureLayer(a, 0, b, 2), device.ErrOutOfBounds)
	wantErr(t, "CopyTextureLayer of a layer onto itself", d.CopyTextureLayer(a, 1, a, 1), device.ErrInvalidUsage)
	noSrc := other(func(d *device.TextureDesc) { d.Usage = device.TextureCopyDst })
	noDst := other(func(d *device.TextureDesc) { d.Usage = device.TextureCopySrc })
	wantErr(t, "CopyTextureLayer from a texture without TextureCopySrc", d.CopyTextureLayer(noSrc, 0, b, 0), device.ErrInvalidUsage)
	wantErr(t, "CopyTextureLayer to a texture without TextureCopyDst", d.CopyTextureLayer(a, 0, noDst, 0), device.ErrInvalidUsage)
	checkTex(t, d, a, wa)
}

func testGenerateMips(t *testing.T, s *suite) {
	d := s.device(t)
	for _, f := range formats {
		for _, sz := range [][2]uint32{{16, 16}, {13, 7}, {1, 8}, {64, 2}} {
			t.Run(fmt.Sprintf("%v/%dx%d", f, sz[0], sz[1]), func(t *testing.T) {
				r := newRand(t.Name())
				desc := device.TextureDesc{Format: f, Width: sz[0], Height: sz[1], Layers: 2, Mips: device.MaxMips(sz[0], sz[1]), Usage: texRW}
				tex := mustTexture(t, d, desc)
				want := fillTex(t, d, r, tex)
				must(t, d.GenerateMips(tex, 1))
				checkTex(t, d, tex, want[:1]) // layer 0 untouched
				equal(t, "layer 1 mip 0", readTex(t, d, tex, 1, 0), want[1][0])
				// Each level against the filter applied to the level the
				// device holds above it, so a last-place difference in
				// RGBA16Float does not compound.
				for m := uint32(1); m < desc.Mips; m++ {
					sw, sh := desc.MipSize(m - 1)
					dw, dh := desc.MipSize(m)
					ref := refMip(f, readTex(t, d, tex, 1, m-1), sw, sh, dw, dh)
					got := readTex(t, d, tex, 1, m)
					compareMip(t, f, m, got, ref)
				}
			})
		}
	}
	one := mustTexture(t, d, device.TextureDesc{Format: device.RGBA8Unorm, Width: 4, Height: 4, Usage: texRW})
	must(t, d.GenerateMips(one, 0)) // one mip: nothing to do
}

// compareMip compares a generated mip with the reference: exactly for
// 8-bit formats; within 2 units in the last place for float32 channels
// (a shader compiler may reassociate the sum) and 1 for half channels.
func compareMip(t *testing.T, f device.TextureFormat, mip uint32, got, want []byte) {
	t.Helper()
	switch f {
	case device.R32Float, device.RGBA32Float:
		for i := 0; i < len(want); i += 4 {
			g, w := binary.LittleEndian.Uint32(got[i:]), binary.LittleEndian.Uint32(want[i:])
			if diff := int64(g) - int64(w); diff < -2 || diff > 2 || g>>31 != w>>31 {
				t.Fatalf("mip %d, float %d: %#08x (%g), want %#08x (%g)", mip, i/4, g, math.Float32frombits(g), w, math.Float32frombits(w))
			}
		}
	case device.RGBA16Float:
		for i := 0; i < len(want); i += 2 {
			g, w := binary.LittleEndian.Uint16(got[i:]), binary.LittleEndian.Uint16(want[i:])
			if diff := int(g) - int(w); diff < -1 || diff > 1 || g&0x8000 != w&0x8000 {
				t.Fatalf("mip %d, half %d: %#04x (%g), want %#04x (%g)", mip, i/2, g, fromHalf(g), w, fromHalf(w))
			}
		}
	default:
		equal(t, fmt.Sprintf("mip %d", mip), got, want)
	}
}

func testMultisampled(t *testing.T, s *suite) {
	d := s.device(t)
	desc := device.TextureDesc{Format: device.RGBA8Unorm, Width: 16, Height: 16, Samples: 4,
		Usage: device.TextureRenderAttachment | device.TextureCopySrc | device.TextureCopyDst}
	a, b := mustTexture(t, d, desc), mustTexture(t, d, desc)
	must(t, d.CopyTextureLayer(a, 0, b, 0))
	mip := make([]byte, desc.MipBytes(0))
	wantErr(t, "WriteTexture to a multisampled texture", d.WriteTexture(a, 0, 0, mip), device.ErrInvalidUsage)
	wantErr(t, "ReadTexture from a multisampled texture", d.ReadTexture(a, 0, 0, mip), device.ErrInvalidUsage)
	wantErr(t, "GenerateMips on a multisampled texture", d.GenerateMips(a, 0), device.ErrInvalidUsage)
	single := mustTexture(t, d, device.TextureDesc{Format: device.RGBA8Unorm, Width: 16, Height: 16, Usage: desc.Usage})
	wantErr(t, "CopyTextureLayer between sample counts", d.CopyTextureLayer(a, 0, single, 0), device.ErrIncompatible)
}

// testTextureOrder checks call order across texture operations: a copy
// recorded before a write sees the old texels, mips generated after a write
// see the new ones.
func testTextureOrder(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	desc := device.TextureDesc{Format: device.RGBA8Unorm, Width: 16, Height: 16, Layers: 2, Mips: 5, Usage: texRW}
	a, b := mustTexture(t, d, desc), mustTexture(t, d, desc)
	old := texels(r, desc.Format, desc.MipBytes(0))
	must(t, d.WriteTexture(a, 0, 0, old))
	must(t, d.CopyTextureLayer(a, 0, b, 0))
	fresh := texels(r, desc.Format, desc.MipBytes(0))
	must(t, d.WriteTexture(a, 0, 0, fresh))
	must(t, d.GenerateMips(a, 0))
	must(t, d.CopyTextureLayer(a, 0, b, 1))
	must(t, d.WriteTexture(a, 0, 0, old))
	equal(t, "layer copied before the write", readTex(t, d, b, 0, 0), old)
	equal(t, "layer copied after the write", readTex(t, d, b, 1, 0), fresh)
	mip1 := refMip(desc.Format, fresh, 16, 16, 8, 8)
	equal(t, "mip 1 generated after the write", readTex(t, d, b, 1, 1), mip1)
	equal(t, "source after the last write", readTex(t, d, a, 0, 0), old)
}

// testCopyBufferToTexture uploads every mip of a layer from rows spread out
// in a buffer (rows padded to BytesPerRowAlignment and wider, after an
// offset), in several formats, from a plain buffer and from a MapWrite
// one, and checks the texels, that the other layers are untouched, and
// every refusal.
func testCopyBufferToTexture(t *testing.T, s *suite) {
	d := s.device(t)
	for _, f := range []device.TextureFormat{device.RGBA8Unorm, device.R8Unorm, device.RGBA16Float, device.RGBA32Float} {
		t.Run(f.String(), func(t *testing.T) {
			r := newRand(t.Name())
			tex := mustTexture(t, d, device.TextureDesc{Format: f, Width: 60, Height: 9, Layers: 3, Mips: 4, Usage: texRW})
			want := fillTex(t, d, r, tex)
			for _, usage := range []device.Usage{rw, device.MapWrite | device.CopySrc} {
				for m := range uint32(4) {
					w, h := tex.Desc().MipSize(m)
					row := uint64(w) * uint64(f.BytesPerTexel())
					pitch := (row + 255) &^ 255
					if m == 1 {
						pitch += 512 // rows further apart than they need
					}
					const off = 64
					src := mustBuffer(t, d, off+pitch*uint64(h), usage)
					raw := randBytes(r, src.Size()) // garbage between the rows
					data := texels(r, f, tex.Desc().MipBytes(m))
					for y := range uint64(h) {
						copy(raw[off+y*pitch:], data[y*row:(y+1)*row])
					}
					must(t, d.WriteBuffer(src, 0, raw))
					must(t, d.CopyBufferToTexture(src, off, uint32(pitch), tex, 1, m))
					want[1][m] = data
					src.Release()
				}
				checkTex(t, d, tex, want)
			}
		})
	}
	tex := mustTexture(t, d, device.TextureDesc{Format: device.RGBA8Unorm, Width: 8, Height: 8, Layers: 2, Mips: 2, Usage: texRW})
	want := fillTex(t, d, newRand(t.Name()), tex)
	src := mustBuffer(t, d, 4096, rw)
	for _, c := range []struct {
		what        string
		off         uint64
		bytesPerRow uint32
		layer, mip  uint32
		want        error
	}{
		{"rows not 256 apart", 0, 128, 0, 0, device.ErrInvalidAlignment},
		{"an offset not a multiple of 4", 2, 256, 0, 0, device.ErrInvalidAlignment},
		{"rows past the buffer's end", 4096 - 7*256, 256, 0, 0, device.ErrOutOfBounds},
		{"an offset past the buffer's end", 8192, 256, 0, 0, device.ErrOutOfBounds},
		{"a layer past the last", 0, 256, 2, 0, device.ErrOutOfBounds},
		{"a mip past the last", 0, 256, 0, 2, device.ErrOutOfBounds},
	} {
		wantErr(t, "CopyBufferToTexture with "+c.what, d.CopyBufferToTexture(src, c.off, c.bytesPerRow, tex, c.layer, c.mip), c.want)
	}
	// The last row needs only its own bytes, not a whole pitch.
	wide := mustTexture(t, d, device.TextureDesc{Format: device.RGBA8Unorm, Width: 16, Height: 2, Usage: texRW})
	must(t, d.CopyBufferToTexture(src, 4096-256-64, 256, wide, 0, 0))
	noSrc := mustBuffer(t, d, 4096, device.CopyDst)
	wantErr(t, "CopyBufferToTexture from a buffer without CopySrc", d.CopyBufferToTexture(noSrc, 0, 256, tex, 0, 0), device.ErrInvalidUsage)
	noDst := mustTexture(t, d, device.TextureDesc{Format: device.RGBA8Unorm, Width: 8, Height: 8, Usage: device.TextureCopySrc})
	wantErr(t, "CopyBufferToTexture to a texture without TextureCopyDst", d.CopyBufferToTexture(src, 0, 256, noDst, 0, 0), device.ErrInvalidUsage)
	wantErr(t, "CopyBufferToTexture to a nil texture", d.CopyBufferToTexture(src, 0, 256, nil, 0, 0), device.ErrInvalidObject)
	wantErr(t, "CopyBufferToTexture from a nil buffer", d.CopyBufferToTexture(nil, 0, 256, tex, 0, 0), device.ErrInvalidObject)
	checkTex(t, d, tex, want)
}

// testCopyBufferToTextureLayers uploads layers one by one from
// consecutive stretches of one buffer (as a staging belt fills a texture
// array), broken by a layer out of turn, another mip, another buffer, a
// write into the source between two copies, and a read of the texture
// between two others; every layer must read back as copied, in the order
// of the calls. A device may join consecutive copies into one (webgpu
// does): this checks that the joins keep the calls' results.
func testCopyBufferToTextureLayers(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	desc := device.TextureDesc{Format: device.RGBA8Unorm, Width: 16, Height: 8, Layers: 12, Mips: 2, Usage: texRW}
	tex := mustTexture(t, d, desc)
	want := fillTex(t, d, r, tex)
	const pitch = 256
	layerBytes := uint64(pitch * desc.Height)
	for _, usage := range []device.Usage{rw, device.MapWrite | device.CopySrc} {
		src := mustBuffer(t, d, 16*layerBytes, usage)
		other := mustBuffer(t, d, 16*layerBytes, rw)
		// stage writes layer l's texels at slot k of buf and returns
		// them.
		stage := func(buf device.Buffer, k uint64, mip uint32) []byte {
			w, h := desc.MipSize(mip)
			data := texels(r, desc.Format, desc.MipBytes(mip))
			raw := make([]byte, pitch*uint64(h))
			for y := range uint64(h) {
				copy(raw[y*pitch:], data[y*uint64(w)*4:(y+1)*uint64(w)*4])
			}
			must(t, device.FillBuffer(d, buf, k*layerBytes, uint64(len(raw)), func(dst []byte) { copy(dst, raw) }))
			return data
		}
		copyIn := func(buf device.Buffer, k uint64, layer, mip uint32) {
			want[layer][mip] = stage(buf, k, mip)
			must(t, d.CopyBufferToTexture(buf, k*layerBytes, pitch, tex, layer, mip))
		}
		for l := range uint32(4) { // slots 0..3 into layers 2..5: one run
			copyIn(src, uint64(l), 2+l, 0)
		}
		copyIn(src, 4, 7, 0)   // a layer skipped
		copyIn(src, 5, 8, 1)   // another mip
		copyIn(other, 6, 9, 0) // another buffer
		copyIn(src, 7, 10, 0)  // a run again
		copyIn(src, 8, 11, 0)
		copyIn(src, 10, 0, 0) // back to layer 0
		equal(t, "layer 0 read between two copies", readTex(t, d, tex, 0, 0), want[0][0])
		copyIn(src, 11, 1, 0) // after the read
		// The source rewritten after the copies of a run: they keep
		// what they read.
		copyIn(src, 12, 6, 0)
		copyIn(src, 13, 7, 0)
		stage(src, 12, 0)
		stage(src, 13, 0)
		checkTex(t, d, tex, want)
		src.Release()
		other.Release()
	}
}

// testCopyBufferToTextureRandom runs random copies into the layers of
// two textures, from random slots of two buffers (a MapWrite one and a
// plain one), most of them continuing the previous copy (the next slot,
// the next layer: what a device may join into one copy), among rewrites
// of slots already copied from, reads and fences; every read, and every
// layer at the end, must hold what the last copy into it read when it
// was called.
func testCopyBufferToTextureRandom(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	desc := device.TextureDesc{Format: device.RGBA8Unorm, Width: 8, Height: 4, Layers: 10, Mips: 2, Usage: texRW}
	texs := []device.Texture{mustTexture(t, d, desc), mustTexture(t, d, desc)}
	want := [][][][]byte{fillTex(t, d, r, texs[0]), fillTex(t, d, r, texs[1])}
	const pitch, slots = 256, 24
	slot := uint64(pitch * desc.Height) // a mip 0 layer's stride
	bufs := []device.Buffer{mustBuffer(t, d, slots*slot, device.MapWrite|device.CopySrc), mustBuffer(t, d, slots*slot, rw)}
	stage := func(b device.Buffer, k uint64, mip uint32) []byte {
		w, h := desc.MipSize(mip)
		data := texels(r, desc.Format, desc.MipBytes(mip))
		must(t, device.FillBuffer(d, b, k*slot, slot, func(dst []byte) {
			clear(dst)
			for y := range uint64(h) {
				copy(dst[y*pitch:], data[y*uint64(w)*4:(y+1)*uint64(w)*4])
			}
		}))
		return data
	}
	var b, k, ti, layer, mip uint64 // the last copy
	for step := range 300 {
		switch op := r.IntN(10); {
		case op < 6: // a copy, mostly continuing the last one
			if r.IntN(4) == 0 || k+1 >= slots || layer+1 >= uint64(desc.Layers) {
				b, k, ti = uint64(r.IntN(2)), uint64(r.IntN(slots)), uint64(r.IntN(2))
				layer, mip = uint64(r.IntN(int(desc.Layers))), uint64(r.IntN(5)/4)
			} else {
				k, layer = k+1, layer+1
			}
			want[ti][layer][mip] = stage(bufs[b], k, uint32(mip))
			must(t, d.CopyBufferToTexture(bufs[b], k*slot, pitch, texs[ti], uint32(layer), uint32(mip)))
		case op < 8: // a slot rewritten, maybe one a copy read
			stage(bufs[r.IntN(2)], uint64(r.IntN(slots)), uint32(r.IntN(2)))
		case op < 9:
			i, l, m := r.IntN(2), uint32(r.IntN(int(desc.Layers))), uint32(r.IntN(2))
			equal(t, fmt.Sprintf("step %d: texture %d layer %d mip %d", step, i, l, m), readTex(t, d, texs[i], l, m), want[i][l][m])
		default:
			_, err := d.Fence()
			must(t, err)
		}
	}
	for i, tex := range texs {
		checkTex(t, d, tex, want[i])
	}
}
