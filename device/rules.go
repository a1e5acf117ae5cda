package device

import "fmt"

// Checks shared by backends, so that every backend rejects the same calls
// with the same sentinel. Each returns nil or an error wrapping one
// sentinel; none allocates unless it fails.

// Validate checks d against the rules of CreateBuffer and the limits l.
func (d BufferDesc) Validate(l Limits) error {
	switch {
	case d.Size == 0:
		return fmt.Errorf("buffer %q: zero size: %w", d.Label, ErrInvalidDescriptor)
	case d.Size%CopyAlignment != 0:
		return fmt.Errorf("buffer %q: size %d not a multiple of %d: %w", d.Label, d.Size, CopyAlignment, ErrInvalidAlignment)
	case d.Size > l.MaxBufferSize:
		return fmt.Errorf("buffer %q: size %d over MaxBufferSize %d: %w", d.Label, d.Size, l.MaxBufferSize, ErrTooLarge)
	}
	if err := d.Usage.Validate(); err != nil {
		return fmt.Errorf("buffer %q: %w", d.Label, err)
	}
	return nil
}

// Validate checks d, normalized, against the rules of CreateTexture and the
// limits l.
func (d TextureDesc) Validate(l Limits) error {
	d = d.Normalize()
	msg, err := d.check(l)
	if err != nil {
		return fmt.Errorf("texture %q: %s: %w", d.Label, msg, err)
	}
	return nil
}

func (d TextureDesc) check(l Limits) (string, error) {
	switch {
	case !d.Format.Valid():
		return fmt.Sprintf("unknown format %v", d.Format), ErrInvalidDescriptor
	case d.Width == 0 || d.Height == 0:
		return fmt.Sprintf("size %dx%d", d.Width, d.Height), ErrInvalidDescriptor
	case d.Width > l.MaxTextureSize2D || d.Height > l.MaxTextureSize2D:
		return fmt.Sprintf("size %dx%d over MaxTextureSize2D %d", d.Width, d.Height, l.MaxTextureSize2D), ErrTooLarge
	case d.Layers > l.MaxArrayLayers:
		return fmt.Sprintf("%d layers over MaxArrayLayers %d", d.Layers, l.MaxArrayLayers), ErrTooLarge
	case d.Mips > MaxMips(d.Width, d.Height):
		return fmt.Sprintf("%d mips for %dx%d", d.Mips, d.Width, d.Height), ErrInvalidDescriptor
	case d.Samples != 1 && d.Samples != 4:
		return fmt.Sprintf("sample count %d", d.Samples), ErrInvalidDescriptor
	case d.Samples > 1 && (d.Mips > 1 || d.Layers > 1):
		return fmt.Sprintf("multisampled with %d mips, %d layers", d.Mips, d.Layers), ErrInvalidDescriptor
	case d.Usage == 0:
		return "empty usage", ErrInvalidUsage
	case d.Usage&^AllTextureUsage != 0:
		return fmt.Sprintf("unknown usage bits in %v", d.Usage), ErrInvalidUsage
	case d.Usage.Has(TextureStorage) && !formatInfo[d.Format].storage:
		return fmt.Sprintf("format %v cannot be a storage texture", d.Format), ErrInvalidUsage
	case d.Samples > 1 && !formatInfo[d.Format].multisample:
		return fmt.Sprintf("format %v cannot be multisampled", d.Format), ErrInvalidUsage
	case d.Samples > 1 && (!d.Usage.Has(TextureRenderAttachment) || d.Usage.Has(TextureStorage)):
		return fmt.Sprintf("multisampled with usage %v", d.Usage), ErrInvalidUsage
	}
	return "", nil
}

// CheckRange checks a range of n bytes at offset in a buffer of size bytes:
// offset and n multiples of CopyAlignment (ErrInvalidAlignment), the range
// inside the buffer without overflow (ErrOutOfBounds).
func CheckRange(size, offset, n uint64) error {
	if offset%CopyAlignment != 0 || n%CopyAlignment != 0 {
		return fmt.Errorf("range [%d, +%d): not a multiple of %d: %w", offset, n, CopyAlignment, ErrInvalidAlignment)
	}
	if offset > size || n > size-offset {
		return fmt.Errorf("range [%d, +%d) outside buffer of %d bytes: %w", offset, n, size, ErrOutOfBounds)
	}
	return nil
}

// CheckMoves checks every move of a batch against a buffer of size bytes.
// O(len(moves)).
func CheckMoves(size uint64, moves []Move) error {
	for i, m := range moves {
		if err := CheckRange(size, m.Src, m.Size); err != nil {
			return fmt.Errorf("move %d source: %w", i, err)
		}
		if err := CheckRange(size, m.Dst, m.Size); err != nil {
			return fmt.Errorf("move %d destination: %w", i, err)
		}
	}
	return nil
}

// CheckPatches checks every patch of a batch against a buffer of size
// bytes: each index below size/4. O(len(patches)).
func CheckPatches(size uint64, patches []Patch) error {
	words := size / 4
	for i, p := range patches {
		if uint64(p.Index) >= words {
			return fmt.Errorf("patch %d: word %d of %d: %w", i, p.Index, words, ErrOutOfBounds)
		}
	}
	return nil
}

// CheckSubresource checks that layer and mip exist in a texture described
// by d (normalized).
func CheckSubresource(d TextureDesc, layer, mip uint32) error {
	if layer >= d.Layers || mip >= d.Mips {
		return fmt.Errorf("layer %d mip %d of %d layers, %d mips: %w", layer, mip, d.Layers, d.Mips, ErrOutOfBounds)
	}
	return nil
}

// CheckBufferTexture checks a copy between a buffer of srcSize bytes and
// one layer's mip level of a texture described by d, as
// Device.CopyBufferToTexture states its rules: the rows of the mip start
// at offset, bytesPerRow apart. It returns the bytes the rows span, from
// offset to the end of the last row.
func CheckBufferTexture(srcSize, offset uint64, bytesPerRow uint32, d TextureDesc, layer, mip uint32) (uint64, error) {
	if d.Samples != 1 {
		return 0, fmt.Errorf("texture of %d samples: %w", d.Samples, ErrInvalidUsage)
	}
	if err := CheckSubresource(d, layer, mip); err != nil {
		return 0, err
	}
	w, h := d.MipSize(mip)
	texel := max(uint64(d.Format.BytesPerTexel()), 1)
	row := uint64(w) * texel
	if bytesPerRow%BytesPerRowAlignment != 0 || uint64(bytesPerRow) < row || offset%CopyAlignment != 0 || offset%texel != 0 {
		return 0, fmt.Errorf("rows of %d bytes every %d bytes from offset %d: want a multiple of %d, at least the row, from a multiple of %d and of %d: %w",
			row, bytesPerRow, offset, BytesPerRowAlignment, CopyAlignment, texel, ErrInvalidAlignment)
	}
	n := uint64(bytesPerRow)*uint64(h-1) + row
	if offset > srcSize || n > srcSize-offset {
		return 0, fmt.Errorf("rows [%d, +%d) outside buffer of %d bytes: %w", offset, n, srcSize, ErrOutOfBounds)
	}
	return n, nil
}
