package bindless

// Sized textures: images of any size in size-class pages.
//
// An exact bucket holds textures of one Key; an image whose size nobody
// else shares (a text label sized to its text) would get a page of its
// own. RegisterSized files an image of W x H texels instead under its
// size class: the key whose width and height are W and H rounded up to
// powers of two, each axis on its own (a 2378x111 label goes in the
// 4096x128 class). The image lies in the layer's top-left corner; the
// texels right of it and below it repeat its last column and row, and
// the texel right of and below its corner repeats that corner texel.
//
// Why powers of two, one texture per layer:
//
//  1. A layer holds less than twice the image on each axis, so less than
//     four times its texels; every mip of the class halves exactly, so
//     the image keeps the same scale (W/classW, H/classH) at every mip.
//  2. The device writes and copies whole layers (WriteTexture,
//     CopyTextureLayer), so a layer shared by several images could not
//     be written, moved by Compact or trimmed without the others' texels
//     in host memory. One image a layer keeps every path of the exact
//     buckets: a sized bucket is a bucket, its pages pages.
//  3. Classes are few (a handful per axis), so a mixed set of labels and
//     photos spreads over tens of pages, not one per texture.
//
// Padding by repeating the edge, not zeros: a shader that samples the
// image bilinearly at its right or bottom edge (texture coordinate 1,
// scaled) reads half a texel beyond it, and a box-filtered mip reads the
// texels beyond it whole. With the edge repeated both see what
// clamp-to-edge sampling of the image alone sees; zeros would darken or
// fade every edge, and more at every mip.
//
// Mips: a class carries min(key.Mips, 1 + the fewer trailing zero bits
// of its two sides) mips: down to where one side of the class is one
// texel, where the image covers between half a texel and one on that
// axis. A bucket is a class key, mips included, so images asking for
// their full chain (device.MaxMips) share one bucket per class.
//
// Pages of a sized bucket start at one layer and double (grow) as they
// fill, up to LayersPerPage: a class of a few textures holds a few
// layers, not LayersPerPage. A page that only gained textures holds
// fewer than twice the layers in use.

import (
	"fmt"
	"math/bits"

	"github.com/gpumem/gpumem/device"
)

// extent is the image size of a sized texture in its layer.
type extent struct{ w, h uint32 }

// extentAt returns the image size at layer l of p, zero in an exact
// bucket's page.
func (p *page[K]) extentAt(l uint32) extent {
	if p.extent == nil {
		return extent{}
	}
	return p.extent[l]
}

// setExtent records the image size at layer l of a sized page; an exact
// page has none.
func (p *page[K]) setExtent(l uint32, e extent) {
	if p.extent != nil {
		p.extent[l] = e
	}
}

// Region is where a texture lies in its layer: its image is texels
// 0..Width-1 x 0..Height-1 of mip 0, from the layer's top-left corner,
// of a layer of LayerWidth x LayerHeight. An exact texture fills its
// layer; a sized one (RegisterSized) fills the top-left of its class.
type Region struct {
	Width, Height           uint32 // the image's size, in texels of mip 0
	LayerWidth, LayerHeight uint32 // the layer's: its bucket's key
	Mips                    uint32 // mips of the layer
}

// Scale returns the factors a shader multiplies a texture coordinate of
// the image ([0, 1] on each axis) by to sample its layer:
// Width/LayerWidth and Height/LayerHeight, 1 for an exact texture. They
// hold at every mip. Texel coordinates (textureLoad) need no scale: texel
// (x, y) of the image is texel (x, y) of the layer.
func (g Region) Scale() (u, v float32) {
	return float32(g.Width) / float32(g.LayerWidth), float32(g.Height) / float32(g.LayerHeight)
}

// ClassOf returns the key of the size class an image of key's format,
// width, height and mips is placed in by RegisterSized: width and height
// each rounded up to a power of two (to the device's MaxTextureSize2D
// where that is no power of two and the power would exceed it), mips at
// most 1 + the fewer trailing zero bits of the two sides. It fails with
// ErrInvalidKey for a key no texture can have: an unknown format, a zero
// side, a side over MaxTextureSize2D, more mips than the image allows
// (device.MaxMips), more than one sample. O(1).
func (r *Registry[K]) ClassOf(key Key) (Key, error) {
	key = key.Normalized()
	limit := r.dev.Limits().MaxTextureSize2D
	img := device.TextureDesc{Format: key.Format, Width: key.Width, Height: key.Height, Mips: key.Mips, Usage: device.TextureBinding}
	if err := img.Validate(r.dev.Limits()); err != nil {
		return Key{}, fmt.Errorf("image %v: %w: %w", key, ErrInvalidKey, err)
	}
	if key.Samples != 1 {
		return Key{}, fmt.Errorf("image %v: a sized texture has one sample: %w", key, ErrInvalidKey)
	}
	w, h := classSide(key.Width, limit), classSide(key.Height, limit)
	mips := 1 + uint32(min(bits.TrailingZeros32(w), bits.TrailingZeros32(h)))
	return Key{Format: key.Format, Width: w, Height: h, Mips: min(key.Mips, mips), Samples: 1}, nil
}

// classSide returns n (1 to limit) rounded up to a power of two, or limit
// when that power exceeds it.
func classSide(n, limit uint32) uint32 {
	p := uint32(1) << bits.Len32(n-1)
	if p > limit || p == 0 {
		return limit
	}
	return p
}

// RegisterSized registers the texture of id from an image of any size:
// key is the image's format, width, height and mips wished for, pixels
// its mip 0 in tightly packed rows (ErrInvalidSize). It goes in a layer of
// its size class (ClassOf; the package doc says how the layer is filled),
// with the mips the class allows, generated. Region(h) gives its size and
// the scale a shader applies. An id registered already returns its handle
// and writes nothing, or ErrMismatch if it was registered otherwise (by
// Register, or with another size or format). Bad keys fail with
// ErrInvalidKey.
//
// O(1) lookups; it allocates the padded layer (when the image is not its
// class's size), writes it and generates its mips on the device, and
// grows, recreates or creates a page (Version changes) when the class
// has no free layer. On error nothing is registered.
func (r *Registry[K]) RegisterSized(id K, key Key, pixels []byte) (Handle, error) {
	if r.released {
		return 0, fmt.Errorf("bindless: RegisterSized: %w", errReleased)
	}
	class, err := r.ClassOf(key)
	if err != nil {
		return 0, fmt.Errorf("bindless: RegisterSized %v: %w", id, err)
	}
	e := extent{key.Width, key.Height}
	if h, ok := r.bySource[id]; ok {
		p := r.pages[h.Page()]
		if !p.b.sized || p.b.key != class || p.extent[h.Layer()] != e {
			return 0, fmt.Errorf("bindless: RegisterSized %v: registered as %v, asked as %v: %w", id, r.describe(h), key.Normalized(), ErrMismatch)
		}
		return h, nil
	}
	if err := r.validKey(class); err != nil {
		return 0, fmt.Errorf("bindless: RegisterSized: %w", err)
	}
	if err := checkPixels(Key{Format: key.Format, Width: e.w, Height: e.h}, pixels); err != nil {
		return 0, fmt.Errorf("bindless: RegisterSized: %w", err)
	}
	return r.register(id, class, e, func(tex device.Texture, layer uint32) error {
		return r.writeLayer(tex, layer, class, padImage(class, e, pixels))
	})
}

// describe returns what h holds, for errors: its bucket's key, and the
// image size of a sized texture.
func (r *Registry[K]) describe(h Handle) string {
	p := r.pages[h.Page()]
	if !p.b.sized {
		return p.b.key.String()
	}
	e := p.extent[h.Layer()]
	return fmt.Sprintf("%dx%d in class %v", e.w, e.h, p.b.key)
}

// Region returns where the texture of h lies in its layer, for a
// registered or a default texture, and ok false for any other handle.
// O(1), no allocation.
func (r *Registry[K]) Region(h Handle) (Region, bool) {
	p := r.page(h)
	if p == nil {
		return Region{}, false
	}
	l := h.Layer()
	if s := p.state[l]; s != layerRegistered && s != layerBuiltin {
		return Region{}, false
	}
	k := p.b.key
	g := Region{Width: k.Width, Height: k.Height, LayerWidth: k.Width, LayerHeight: k.Height, Mips: k.Mips}
	if p.b.sized {
		e := p.extent[l]
		g.Width, g.Height = e.w, e.h
	}
	return g, true
}

// padImage returns mip 0 of a layer of class holding the image e in
// pixels (its mip 0, tightly packed): the image at the top-left, each row
// continued by its last texel, the last row repeated below. It returns
// pixels itself when the image fills the class.
func padImage(class Key, e extent, pixels []byte) []byte {
	if e.w == class.Width && e.h == class.Height {
		return pixels
	}
	bpt := uint64(class.Format.BytesPerTexel())
	row, crow := uint64(e.w)*bpt, uint64(class.Width)*bpt
	out := make([]byte, crow*uint64(class.Height))
	for y := range uint64(e.h) {
		dst := out[y*crow : (y+1)*crow]
		copy(dst, pixels[y*row:(y+1)*row])
		last := dst[row-bpt : row]
		for x := row; x < crow; x += bpt {
			copy(dst[x:x+bpt], last)
		}
	}
	last := out[(uint64(e.h)-1)*crow : uint64(e.h)*crow]
	for y := uint64(e.h); y < uint64(class.Height); y++ {
		copy(out[y*crow:(y+1)*crow], last)
	}
	return out
}

// imageBytes returns the bytes the texture at layer l of p would hold as
// a texture of its own: its image with the layer's mips (an exact
// texture's layer, times its samples).
func (p *page[K]) imageBytes(l uint32) uint64 {
	k := p.b.key
	d := device.TextureDesc{Format: k.Format, Width: k.Width, Height: k.Height, Mips: k.Mips, Samples: k.Samples}
	if p.extent != nil {
		d.Width, d.Height = p.extent[l].w, p.extent[l].h
	}
	return d.Bytes()
}

// checkExtent verifies the image size at layer l of p: in a sized
// bucket's page, a registered layer's image has the bucket's key for its
// class (ClassOf), and every other layer has none.
func (r *Registry[K]) checkExtent(p *page[K], l uint32) error {
	e := p.extentAt(l)
	if p.state[l] != layerRegistered || !p.b.sized {
		if e != (extent{}) {
			return fmt.Errorf("state %d, image %dx%d", p.state[l], e.w, e.h)
		}
		return nil
	}
	k := p.b.key
	// The class's mips are the image's, as ClassOf capped them: ask for
	// those, so ClassOf must give the key back.
	class, err := r.ClassOf(Key{Format: k.Format, Width: e.w, Height: e.h, Mips: k.Mips})
	if err != nil || class != k {
		return fmt.Errorf("image %dx%d in class %v, its class is %v (%v)", e.w, e.h, k, class, err)
	}
	return nil
}
