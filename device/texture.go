package device

import (
	"fmt"
	"math/bits"
)

// TextureFormat is the texel format of a texture. The zero value is invalid.
type TextureFormat uint8

// Texture formats. 8-bit formats store one byte per channel in the order of
// their name; RGBA16Float stores IEEE half floats, R32Float and RGBA32Float
// IEEE single floats; all little-endian.
const (
	R8Unorm        TextureFormat = iota + 1 // 1 byte per texel
	RGBA8Unorm                              // 4 bytes per texel
	RGBA8UnormSrgb                          // 4 bytes per texel, sRGB-encoded color
	BGRA8Unorm                              // 4 bytes per texel
	BGRA8UnormSrgb                          // 4 bytes per texel, sRGB-encoded color
	R32Float                                // 4 bytes per texel
	RGBA16Float                             // 8 bytes per texel
	RGBA32Float                             // 16 bytes per texel
	formatEnd
)

var formatInfo = [formatEnd]struct {
	name        string
	bytes       uint32
	storage     bool // usable as a storage texture in core WebGPU
	multisample bool // multisampling allowed (conservative: stricter than WebGPU for some)
}{
	R8Unorm:        {"R8Unorm", 1, false, true},
	RGBA8Unorm:     {"RGBA8Unorm", 4, true, true},
	RGBA8UnormSrgb: {"RGBA8UnormSrgb", 4, false, true},
	BGRA8Unorm:     {"BGRA8Unorm", 4, false, true},
	BGRA8UnormSrgb: {"BGRA8UnormSrgb", 4, false, true},
	R32Float:       {"R32Float", 4, true, false},
	RGBA16Float:    {"RGBA16Float", 8, true, true},
	RGBA32Float:    {"RGBA32Float", 16, true, false},
}

// Valid reports whether f is one of the formats defined above.
func (f TextureFormat) Valid() bool { return f > 0 && f < formatEnd }

// BytesPerTexel returns the size of one texel of f in bytes, or 0 for an
// invalid format.
func (f TextureFormat) BytesPerTexel() uint32 {
	if !f.Valid() {
		return 0
	}
	return formatInfo[f].bytes
}

// String returns the format's name, as in the constant's identifier.
func (f TextureFormat) String() string {
	if !f.Valid() {
		return fmt.Sprintf("TextureFormat(%d)", uint8(f))
	}
	return formatInfo[f].name
}

// TextureUsage is a set of texture usage flags, with WebGPU's numeric values
// (GPUTextureUsage).
type TextureUsage uint32

// Texture usage flags.
const (
	TextureCopySrc          TextureUsage = 0x01 // source of copies, mip generation and read-back
	TextureCopyDst          TextureUsage = 0x02 // destination of writes, copies and mip generation
	TextureBinding          TextureUsage = 0x04 // sampled in shaders
	TextureStorage          TextureUsage = 0x08 // storage texture; not every format allows it
	TextureRenderAttachment TextureUsage = 0x10 // render target; required when multisampled

	// AllTextureUsage is every flag defined above; any other bit is invalid.
	AllTextureUsage = TextureCopySrc | TextureCopyDst | TextureBinding |
		TextureStorage | TextureRenderAttachment
)

// Has reports whether u contains every flag of want.
func (u TextureUsage) Has(want TextureUsage) bool { return u&want == want }

// String returns the flags joined by "|".
func (u TextureUsage) String() string {
	return flagString(uint64(u), uint64(AllTextureUsage), "TextureCopySrc", "TextureCopyDst", "TextureBinding",
		"TextureStorage", "TextureRenderAttachment")
}

// TextureDesc describes a 2D-array texture to create.
//
// Zero Layers, Mips and Samples mean 1; Normalize fills them in, and a
// Texture's Desc is always normalized.
type TextureDesc struct {
	Label  string
	Format TextureFormat
	// Width and Height of mip 0 in texels: nonzero, at most
	// Limits.MaxTextureSize2D.
	Width, Height uint32
	// Layers is the array size, at most Limits.MaxArrayLayers.
	Layers uint32
	// Mips is the number of mip levels, at most MaxMips(Width, Height).
	Mips uint32
	// Samples is 1, or 4 for a multisampled texture (then Layers and Mips
	// are 1, Usage has TextureRenderAttachment and not TextureStorage, and
	// the texture cannot be written, read or have mips generated).
	Samples uint32
	Usage   TextureUsage
}

// Normalize returns d with zero Layers, Mips and Samples set to 1.
func (d TextureDesc) Normalize() TextureDesc {
	if d.Layers == 0 {
		d.Layers = 1
	}
	if d.Mips == 0 {
		d.Mips = 1
	}
	if d.Samples == 0 {
		d.Samples = 1
	}
	return d
}

// MaxMips returns the most mip levels a texture of width w and height h can
// have: floor(log2(max(w, h))) + 1, or 0 when w or h is 0.
func MaxMips(w, h uint32) uint32 {
	if w == 0 || h == 0 {
		return 0
	}
	return uint32(bits.Len32(max(w, h)))
}

// MipSize returns the width and height of mip level mip: each halved mip
// times, rounded down, and at least 1.
func (d TextureDesc) MipSize(mip uint32) (w, h uint32) {
	if mip >= 32 {
		return 1, 1
	}
	return max(d.Width>>mip, 1), max(d.Height>>mip, 1)
}

// MipBytes returns the size in bytes of one layer's mip level mip with
// tightly packed rows: the length of the data WriteTexture takes and
// ReadTexture fills.
func (d TextureDesc) MipBytes(mip uint32) uint64 {
	w, h := d.MipSize(mip)
	return uint64(w) * uint64(h) * uint64(d.Format.BytesPerTexel())
}

// PaddedRow returns the bytes from one row of mip level mip to the next
// in a copy between a buffer and the texture with rows as close as they
// may be: a row's bytes rounded up to BytesPerRowAlignment.
func (d TextureDesc) PaddedRow(mip uint32) uint32 {
	w, _ := d.MipSize(mip)
	return (w*d.Format.BytesPerTexel() + BytesPerRowAlignment - 1) &^ (BytesPerRowAlignment - 1)
}

// LayerBytes returns the size in bytes of one layer with all its mips, as
// MipBytes counts them. Multisampled textures hold Samples times that.
func (d TextureDesc) LayerBytes() uint64 {
	d = d.Normalize()
	var n uint64
	for m := range d.Mips {
		n += d.MipBytes(m)
	}
	return n
}

// Bytes returns what a texture of d holds: every layer with all its mips,
// times its samples. It is what a budget charges for the texture.
func (d TextureDesc) Bytes() uint64 {
	d = d.Normalize()
	return d.LayerBytes() * uint64(d.Layers) * uint64(max(d.Samples, 1))
}

// Texture is a 2D-array texture created by Device.CreateTexture. Its
// contents start zeroed. A Texture belongs to its device and is used through
// the device's methods.
type Texture interface {
	// Desc returns the normalized descriptor the texture was created with.
	Desc() TextureDesc
	// Release ends gpumem's use of the texture as Buffer.Release does a
	// buffer's: its memory is freed once a fence marked after the call
	// has completed.
	Release()
}
