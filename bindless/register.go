package bindless

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Register registers the texture of id in key's bucket from pixels, mip 0
// in tightly packed rows (exactly key's mip 0 bytes, ErrInvalidSize); with
// more than one mip, the others are generated (device.Device.GenerateMips).
// An id registered already returns its handle and writes nothing, or
// ErrMismatch if it was registered with another key. Multisampled keys
// cannot take pixels (ErrInvalidKey); use RegisterCopy.
//
// O(1) lookups; it writes mip 0 (and generates mips) on the device, and
// grows, recreates or creates a page (Version changes) when the bucket
// has no free layer. On error nothing is registered.
func (r *Registry[K]) Register(id K, key Key, pixels []byte) (Handle, error) {
	key = key.Normalized()
	if h, ok, err := r.existing("Register", id, key); ok || err != nil {
		return h, err
	}
	if err := r.validKey(key); err != nil {
		return 0, fmt.Errorf("bindless: Register: %w", err)
	}
	if key.Samples != 1 {
		return 0, fmt.Errorf("bindless: Register: key %v: pixels for a multisampled texture: %w", key, ErrInvalidKey)
	}
	if err := checkPixels(key, pixels); err != nil {
		return 0, fmt.Errorf("bindless: Register: %w", err)
	}
	return r.register(id, key, extent{}, func(tex device.Texture, layer uint32) error {
		return r.writeLayer(tex, layer, key, pixels)
	})
}

// RegisterCopy registers the texture of id as a copy of layer of src,
// every mip, in the bucket of src's key (KeyOf(src.Desc())). src needs
// TextureCopySrc. An id registered already returns its handle and copies
// nothing, or ErrMismatch if it was registered with another key. On error
// nothing is registered.
func (r *Registry[K]) RegisterCopy(id K, src device.Texture, layer uint32) (Handle, error) {
	if src == nil {
		return 0, fmt.Errorf("bindless: RegisterCopy: nil source texture: %w", device.ErrInvalidObject)
	}
	key := KeyOf(src.Desc())
	if h, ok, err := r.existing("RegisterCopy", id, key); ok || err != nil {
		return h, err
	}
	if err := r.validKey(key); err != nil {
		return 0, fmt.Errorf("bindless: RegisterCopy: %w", err)
	}
	return r.register(id, key, extent{}, func(tex device.Texture, dst uint32) error {
		return r.dev.CopyTextureLayer(src, layer, tex, dst)
	})
}

// existing returns id's handle when it is registered with key, ok false
// when it is not registered, or an error.
func (r *Registry[K]) existing(op string, id K, key Key) (Handle, bool, error) {
	if r.released {
		return 0, false, fmt.Errorf("bindless: %s: %w", op, errReleased)
	}
	h, ok := r.bySource[id]
	if !ok {
		return 0, false, nil
	}
	if b := r.pages[h.Page()].b; b.key != key || b.sized {
		return 0, false, fmt.Errorf("bindless: %s %v: registered as %v, asked as %v: %w", op, id, r.describe(h), key, ErrMismatch)
	}
	return h, true, nil
}

// register takes a layer of key's bucket (the sized bucket of key, a
// class, when e is an image size), fills it with fill and records id as
// its owner; when fill fails it gives the layer back.
func (r *Registry[K]) register(id K, key Key, e extent, fill func(tex device.Texture, layer uint32) error) (Handle, error) {
	s, err := r.alloc(key, e != extent{})
	if err != nil {
		return 0, fmt.Errorf("bindless: register %v: %w", id, err)
	}
	h := s.h
	p := r.pages[h.Page()]
	if err := fill(p.tex, h.Layer()); err != nil {
		r.unalloc(s)
		return 0, fmt.Errorf("bindless: register %v: %w", id, err)
	}
	r.commit(s)
	r.own(id, h, e)
	r.prepareAhead(p.b)
	return h, nil
}

// own records id as the owner of layer h, which alloc took and which
// holds id's texels (an image of e in a sized bucket).
func (r *Registry[K]) own(id K, h Handle, e extent) {
	p := r.pages[h.Page()]
	p.state[h.Layer()] = layerRegistered
	p.owner[h.Layer()] = id
	p.setExtent(h.Layer(), e)
	r.bySource[id] = h
	r.usedBytes += p.imageBytes(h.Layer())
}

func checkPixels(key Key, pixels []byte) error {
	want := device.TextureDesc{Format: key.Format, Width: key.Width, Height: key.Height}.MipBytes(0)
	if uint64(len(pixels)) != want {
		return fmt.Errorf("%d bytes of pixels for %v, want %d: %w", len(pixels), key, want, ErrInvalidSize)
	}
	return nil
}

// writeLayer writes mip 0 of layer, through Options.Belt if set, and
// generates the other mips.
func (r *Registry[K]) writeLayer(tex device.Texture, layer uint32, key Key, pixels []byte) error {
	var err error
	if r.opts.Belt != nil {
		err = r.opts.Belt.UploadTexture(tex, layer, 0, pixels)
	} else {
		err = r.dev.WriteTexture(tex, layer, 0, pixels)
	}
	if err != nil {
		return err
	}
	if key.Mips > 1 {
		return r.dev.GenerateMips(tex, layer)
	}
	return nil
}

// lookup returns the page and layer of id.
func (r *Registry[K]) lookup(op string, id K) (*page[K], uint32, error) {
	if r.released {
		return nil, 0, fmt.Errorf("bindless: %s: %w", op, errReleased)
	}
	h, ok := r.bySource[id]
	if !ok {
		return nil, 0, fmt.Errorf("bindless: %s %v: %w", op, id, ErrNotRegistered)
	}
	return r.pages[h.Page()], h.Layer(), nil
}

// Update rewrites the texels of id from an image of width x height (its
// size: its bucket's, or the image's of a sized texture; else
// ErrMismatch) in pixels (ErrInvalidSize), and regenerates its mips. The
// handle stays.
func (r *Registry[K]) Update(id K, width, height uint32, pixels []byte) error {
	p, layer, err := r.lookup("Update", id)
	if err != nil {
		return err
	}
	key := p.b.key
	e := extent{key.Width, key.Height}
	if p.b.sized {
		e = p.extent[layer]
	}
	if width != e.w || height != e.h {
		return fmt.Errorf("bindless: Update %v: image %dx%d, texture %dx%d: %w", id, width, height, e.w, e.h, ErrMismatch)
	}
	if key.Samples != 1 {
		return fmt.Errorf("bindless: Update %v: pixels for a multisampled texture: %w", id, ErrInvalidKey)
	}
	if err := checkPixels(Key{Format: key.Format, Width: e.w, Height: e.h}, pixels); err != nil {
		return fmt.Errorf("bindless: Update %v: %w", id, err)
	}
	if err := r.writeLayer(p.tex, layer, key, padImage(key, e, pixels)); err != nil {
		return fmt.Errorf("bindless: Update %v: %w", id, err)
	}
	return nil
}

// UpdateCopy rewrites id, every mip, as a copy of layer of src, whose key
// must be id's bucket's (ErrMismatch). A sized texture cannot be updated
// by copy (ErrMismatch): use Update.
func (r *Registry[K]) UpdateCopy(id K, src device.Texture, layer uint32) error {
	p, dst, err := r.lookup("UpdateCopy", id)
	if err != nil {
		return err
	}
	if src == nil {
		return fmt.Errorf("bindless: UpdateCopy %v: nil source texture: %w", id, device.ErrInvalidObject)
	}
	if p.b.sized {
		return fmt.Errorf("bindless: UpdateCopy %v: a sized texture (%v): %w", id, r.describe(r.bySource[id]), ErrMismatch)
	}
	if key := KeyOf(src.Desc()); key != p.b.key {
		return fmt.Errorf("bindless: UpdateCopy %v: source %v, texture %v: %w", id, key, p.b.key, ErrMismatch)
	}
	if err := r.dev.CopyTextureLayer(src, layer, p.tex, dst); err != nil {
		return fmt.Errorf("bindless: UpdateCopy %v: %w", id, err)
	}
	return nil
}

// GenerateMips recomputes mips 1 and up of id from its mip 0; a texture
// with one mip is left alone.
func (r *Registry[K]) GenerateMips(id K) error {
	p, layer, err := r.lookup("GenerateMips", id)
	if err != nil {
		return err
	}
	if p.b.key.Mips == 1 {
		return nil
	}
	if err := r.dev.GenerateMips(p.tex, layer); err != nil {
		return fmt.Errorf("bindless: GenerateMips %v: %w", id, err)
	}
	return nil
}

// Unregister frees the layer of id for reuse (registrations take the
// lowest free layer first); its handle is invalid from now on. O(1). It
// fails with ErrNotRegistered.
func (r *Registry[K]) Unregister(id K) error {
	if _, _, err := r.lookup("Unregister", id); err != nil {
		return err
	}
	r.freeLayer(r.bySource[id])
	return nil
}

// freeLayer frees registered layer h for reuse: its owner no longer maps
// to it.
func (r *Registry[K]) freeLayer(h Handle) {
	p, l := r.pages[h.Page()], h.Layer()
	r.usedBytes -= p.imageBytes(l)
	delete(r.bySource, p.owner[l])
	var zero K
	p.owner[l] = zero
	if p.extent != nil {
		p.extent[l] = extent{}
	}
	p.state[l] = layerFree
	p.b.free++
	r.open(h.Page(), l, l+1)
}
