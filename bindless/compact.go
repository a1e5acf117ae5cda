package bindless

import (
	"fmt"

	"github.com/gpumem/gpumem/memory"
)

// Compact gives back the memory that Shrink cannot, by moving textures:
// the opt-in relocation. Shrink never moves a texture, so a page keeps
// its memory while one texture stays in use at its top, and after a
// zone unload the freed layers lie below the live ones. Compact
// moves, bucket by bucket, the registered texture at the highest layer
// of the highest page into the lowest available layer of the lowest page
// (the layer a registration would take), every mip and sample (a layer
// copy on the device), for as long as the lowest available layer lies
// below the highest registered one. The textures in use then fill the
// bottom of each bucket's live pages (a vacant page stays vacant and a
// trimmed one is not grown): pages whose textures all moved out hold
// none and the last one in use holds them in its layers 0..h. It then
// gives back as Shrink does, except that it trims every live page to
// exactly its layers 0..h, where Shrink trims only pages half empty: the
// empty pages are released, the trailing ones dropped, the rest trimmed.
// It returns the number of textures moved and the bytes given back
// (those Shrink would count).
//
// The default textures (White, Black, FlatNormal, on page 0) never move,
// and a registered texture only ever moves down, into a layer of its own
// bucket; no page is created or grown.
//
// Handles change: Changes reports a Moved per texture whose handle
// changed (Moved reads its old and new handle), in the order of the
// moves. The caller rewrites its materials' handles (or whatever table
// holds them) from them and rebuilds its bind groups: Version changes
// when a texture moved, as it does when pages change.
// Work submitted before Compact still reads the old layers (device work
// runs in call order); a frame recorded after it must use the new
// handles, since an old one names a free layer that the next
// registration rewrites. Page textures are released as Release does:
// the device frees them once a fence marked after the release has
// completed (device.Buffer.Release). Stats().TexturesMoved counts the moves.
//
// Each move is a copy, then a commit: a copy the device refuses leaves
// that texture where it was (its id, handle and texels unchanged), and
// Compact moves no more, still gives back as above (the pages the moves
// before it emptied released, every live page trimmed to its layers in
// use), and returns the error with the moves done (reported by Changes)
// and the bytes given back. A trim the device or a budget refuses leaves
// that page as it was, as in Shrink. Every id maps to a layer holding its
// texels whatever fails. O(layers) plus the copies; it does not allocate
// but to grow the change log. It fails with device.ErrReleased, or with the device's error.
func (r *Registry[K]) Compact() (moved int, freedBytes uint64, err error) {
	if r.released {
		return 0, 0, fmt.Errorf("bindless: Compact: %w", errReleased)
	}
	for i, p := range r.pages {
		if b := p.b; b.pages[0] == i { // each bucket once, in page order
			var n int
			n, err = r.compactBucket(b)
			moved += n
			if err != nil {
				break
			}
		}
	}
	if moved > 0 {
		r.version++
		r.texturesMoved += uint64(moved)
	}
	freedBytes = r.shrink(true)
	if err != nil {
		return moved, freedBytes, fmt.Errorf("bindless: Compact: %w", err)
	}
	return moved, freedBytes, nil
}

// compactBucket moves the registered textures of b from its highest
// layers into its lowest available ones, while the lowest available
// layer lies below the highest registered one, and returns how many it
// moved. It stops at the first copy the device refuses, with that
// texture where it was.
func (r *Registry[K]) compactBucket(b *bucket) (moved int, err error) {
	// The highest registered layer: a cursor walking down the bucket's
	// pages. Layers above it are free (moved out) or not registered;
	// destinations lie below it, so it meets them last.
	pi := len(b.pages) - 1
	l := int(r.pages[b.pages[pi]].capacity) - 1
	for pi >= 0 {
		gi := b.pages[pi]
		p := r.pages[gi]
		if l < 0 {
			if pi--; pi >= 0 {
				l = int(r.pages[b.pages[pi]].capacity) - 1
			}
			continue
		}
		if p.state[l] != layerRegistered {
			l--
			continue
		}
		from := makeHandle(gi, uint32(l))
		di, ok := b.avail.first()
		if !ok {
			break
		}
		if dl, _ := r.pages[di].avail.first(); makeHandle(int(di), dl) > from {
			break
		}
		s := r.take(int(di), takenLayer)
		if err := r.dev.CopyTextureLayer(p.tex, uint32(l), r.pages[di].tex, s.h.Layer()); err != nil {
			r.unalloc(s)
			return moved, fmt.Errorf("move %v (%v) to %v: %w", p.owner[l], from, s.h, err)
		}
		id, ext := p.owner[l], p.extentAt(uint32(l))
		r.changes.Moved(uint64(from)<<32|uint64(s.h), memory.Change{Owner: uint64(from)<<32 | uint64(s.h),
			OldTexture: p.tex, Texture: r.pages[di].tex, FromLayer: uint32(l), ToLayer: s.h.Layer()})
		r.freeLayer(from)
		r.own(id, s.h, ext)
		moved++
		l--
	}
	return moved, nil
}
