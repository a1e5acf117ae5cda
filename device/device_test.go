package device_test

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/gpumem/gpumem/device"
)

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		u    device.Usage
		str  string
		want error
	}{
		{0, "0", device.ErrInvalidUsage},
		{device.CopySrc | device.Storage, "CopySrc|Storage", nil},
		{device.MapRead | device.CopyDst, "MapRead|CopyDst", nil},
		{device.MapRead | device.CopySrc, "MapRead|CopySrc", device.ErrInvalidUsage},
		{device.MapWrite | device.CopySrc, "MapWrite|CopySrc", nil},
		{device.MapWrite | device.Uniform, "MapWrite|Uniform", device.ErrInvalidUsage},
		{device.Vertex | 0x8000, "Vertex|0x8000", device.ErrInvalidUsage},
		{device.AllUsage &^ (device.MapRead | device.MapWrite), "CopySrc|CopyDst|Index|Vertex|Uniform|Storage|Indirect|QueryResolve", nil},
	} {
		if got := c.u.String(); got != c.str {
			t.Errorf("String(%#x) = %q, want %q", uint32(c.u), got, c.str)
		}
		if err := c.u.Validate(); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("Validate(%v) = %v, want %v", c.u, err, c.want)
		}
	}
	if !(device.CopySrc | device.CopyDst).Has(device.CopyDst) || device.CopySrc.Has(device.CopySrc|device.CopyDst) {
		t.Error("Has")
	}
	if got := (device.TextureCopySrc | 0x40).String(); got != "TextureCopySrc|0x40" {
		t.Errorf("TextureUsage.String: %q", got)
	}
}

func TestFormats(t *testing.T) {
	want := map[device.TextureFormat]uint32{
		device.R8Unorm: 1, device.RGBA8Unorm: 4, device.RGBA8UnormSrgb: 4, device.BGRA8Unorm: 4,
		device.BGRA8UnormSrgb: 4, device.R32Float: 4, device.RGBA16Float: 8, device.RGBA32Float: 16,
	}
	for f, n := range want {
		if !f.Valid() || f.BytesPerTexel() != n || f.String() == "" {
			t.Errorf("%v: Valid %v, BytesPerTexel %d, want %d", f, f.Valid(), f.BytesPerTexel(), n)
		}
	}
	for _, f := range []device.TextureFormat{0, 100} {
		if f.Valid() || f.BytesPerTexel() != 0 {
			t.Errorf("%v valid", f)
		}
	}
	if got := device.TextureFormat(100).String(); got != "TextureFormat(100)" {
		t.Errorf("String: %q", got)
	}
}

func TestTextureDesc(t *testing.T) {
	for _, c := range []struct{ w, h, mips uint32 }{{0, 4, 0}, {1, 1, 1}, {2, 1, 2}, {13, 7, 4}, {8192, 1, 14}, {8191, 8191, 13}} {
		if got := device.MaxMips(c.w, c.h); got != c.mips {
			t.Errorf("MaxMips(%d, %d) = %d, want %d", c.w, c.h, got, c.mips)
		}
	}
	d := device.TextureDesc{Format: device.RGBA16Float, Width: 13, Height: 7}.Normalize()
	if d.Layers != 1 || d.Mips != 1 || d.Samples != 1 {
		t.Errorf("Normalize: %+v", d)
	}
	d.Mips = 4
	for m, wh := range [][2]uint32{{13, 7}, {6, 3}, {3, 1}, {1, 1}} {
		if w, h := d.MipSize(uint32(m)); w != wh[0] || h != wh[1] {
			t.Errorf("MipSize(%d) = %dx%d, want %dx%d", m, w, h, wh[0], wh[1])
		}
	}
	if w, h := d.MipSize(40); w != 1 || h != 1 {
		t.Errorf("MipSize(40) = %dx%d", w, h)
	}
	if got := d.MipBytes(1); got != 6*3*8 {
		t.Errorf("MipBytes(1) = %d", got)
	}
	for m, want := range []uint32{256, 256, 256} { // rows of 104, 48 and 24 bytes
		if got := d.PaddedRow(uint32(m)); got != want {
			t.Errorf("PaddedRow(%d) = %d, want %d", m, got, want)
		}
	}
	if got := (device.TextureDesc{Format: device.RGBA32Float, Width: 40}).PaddedRow(0); got != 768 { // a row of 640 bytes
		t.Errorf("PaddedRow of 40 RGBA32Float texels = %d, want 768", got)
	}
	if got := d.LayerBytes(); got != (91+18+3+1)*8 {
		t.Errorf("LayerBytes = %d", got)
	}
	d.Layers, d.Samples = 3, 0
	if got := d.Bytes(); got != 3*(91+18+3+1)*8 {
		t.Errorf("Bytes of 3 layers = %d", got)
	}
	d.Mips, d.Samples = 1, 4
	if got := d.Bytes(); got != 4*3*91*8 {
		t.Errorf("Bytes of 3 layers of 4 samples = %d", got)
	}
}

func TestTextureDescValidate(t *testing.T) {
	l := device.DefaultLimits()
	ok := device.TextureDesc{Format: device.RGBA8Unorm, Width: 8, Height: 8, Usage: device.TextureCopyDst}
	if err := ok.Validate(l); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    func(*device.TextureDesc)
		want error
	}{
		{func(d *device.TextureDesc) { d.Format = device.BGRA8Unorm; d.Usage = device.TextureStorage }, device.ErrInvalidUsage},
		{func(d *device.TextureDesc) {
			d.Format = device.RGBA32Float
			d.Samples = 4
			d.Usage = device.TextureRenderAttachment
		}, device.ErrInvalidUsage},
		{func(d *device.TextureDesc) {
			d.Samples = 4
			d.Usage = device.TextureRenderAttachment | device.TextureStorage
		}, device.ErrInvalidUsage},
		{func(d *device.TextureDesc) { d.Samples = 4; d.Usage = device.TextureRenderAttachment }, nil},
		{func(d *device.TextureDesc) { d.Width = 8193 }, device.ErrTooLarge},
		{func(d *device.TextureDesc) { d.Layers = 257 }, device.ErrTooLarge},
		{func(d *device.TextureDesc) { d.Mips = 5 }, device.ErrInvalidDescriptor},
	} {
		d := ok
		c.f(&d)
		if err := d.Validate(l); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("Validate(%+v) = %v, want %v", d, err, c.want)
		}
	}
}

func TestBufferDescValidate(t *testing.T) {
	l := device.DefaultLimits()
	for _, c := range []struct {
		d    device.BufferDesc
		want error
	}{
		{device.BufferDesc{Size: 4, Usage: device.CopyDst}, nil},
		{device.BufferDesc{Size: l.MaxBufferSize, Usage: device.CopyDst}, nil},
		{device.BufferDesc{Size: l.MaxBufferSize + 4, Usage: device.CopyDst}, device.ErrTooLarge},
		{device.BufferDesc{Size: 0, Usage: device.CopyDst}, device.ErrInvalidDescriptor},
		{device.BufferDesc{Size: 2, Usage: device.CopyDst}, device.ErrInvalidAlignment},
		{device.BufferDesc{Size: 4}, device.ErrInvalidUsage},
	} {
		if err := c.d.Validate(l); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("Validate(%+v) = %v, want %v", c.d, err, c.want)
		}
	}
}

func TestChecks(t *testing.T) {
	if err := device.CheckMoves(64, []device.Move{{Src: 0, Dst: 4, Size: 60}, {Src: 60, Dst: 0, Size: 4}}); err != nil {
		t.Error(err)
	}
	if err := device.CheckMoves(64, []device.Move{{Src: 0, Dst: 4, Size: 60}, {Src: 64, Dst: 0, Size: 4}}); !errors.Is(err, device.ErrOutOfBounds) {
		t.Errorf("CheckMoves: %v", err)
	}
	if err := device.CheckPatches(64, []device.Patch{{Index: 15}}); err != nil {
		t.Error(err)
	}
	if err := device.CheckPatches(64, []device.Patch{{Index: 16}}); !errors.Is(err, device.ErrOutOfBounds) {
		t.Errorf("CheckPatches: %v", err)
	}
	d := device.TextureDesc{Layers: 2, Mips: 3}
	if device.CheckSubresource(d, 1, 2) != nil || !errors.Is(device.CheckSubresource(d, 2, 0), device.ErrOutOfBounds) ||
		!errors.Is(device.CheckSubresource(d, 0, 3), device.ErrOutOfBounds) {
		t.Error("CheckSubresource")
	}
}

// FuzzCheckRange compares CheckRange with exact arithmetic.
func FuzzCheckRange(f *testing.F) {
	f.Add(uint64(64), uint64(0), uint64(64))
	f.Add(uint64(64), uint64(60), uint64(8))
	f.Add(uint64(64), uint64(math.MaxUint64&^3), uint64(8))
	f.Fuzz(func(t *testing.T, size, off, n uint64) {
		err := device.CheckRange(size, off, n)
		end := new(big.Int).Add(new(big.Int).SetUint64(off), new(big.Int).SetUint64(n))
		var want error
		switch {
		case off%4 != 0 || n%4 != 0:
			want = device.ErrInvalidAlignment
		case end.Cmp(new(big.Int).SetUint64(size)) > 0:
			want = device.ErrOutOfBounds
		}
		if !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Fatalf("CheckRange(%d, %d, %d) = %v, want %v", size, off, n, err, want)
		}
	})
}
