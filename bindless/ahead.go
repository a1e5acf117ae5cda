package bindless

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// Pages made ahead of need (Options.PageAhead). Creating a page can cost
// the caller milliseconds (the driver allocates and clears a texture
// array of many layers), and a bucket that is full creates one in the
// middle of the registration that needs it. With PageAhead, an exact
// bucket whose available layers fall below that fraction of a page's
// layers (checked after each registration) starts making the page it
// will take next, a new page or a vacant page's texture again, through
// device.PrepareTexture: off the caller's goroutine on a device that
// can, at the registration that needs it on others. That registration
// takes it, waiting only for what is left of its creation; one whose
// creation failed is given up, and the registration makes its own (and
// reports the device's error if that fails too). Shrink, Compact and
// Release give it up. Until taken it holds its memory beside the pages
// (Stats.PreparedBytes; Memory shows it).
//
// Sized buckets are left out: their pages start at one layer and grow
// by doubling, each growth a copy. So is a bucket with a live page below
// full capacity: the next registration grows that page, as alloc does.
//
// The page's index is known only when it is taken (other buckets may add
// pages first), so the texture's own label names none: it is the page's
// label without its index, " (made ahead)" added; the registry's label of
// the page, which Memory shows, has the index as every page's does.

// prepareAhead starts making b's next page when Options.PageAhead asks
// for it, b has room for one, and none is being made. O(b's pages).
func (r *Registry[K]) prepareAhead(b *bucket) {
	if r.opts.PageAhead == 0 || b.ahead != nil || b.sized {
		return
	}
	avail, vacant := 0, false
	for _, gi := range b.pages {
		switch p := r.pages[gi]; {
		case p.tex == nil:
			vacant = true
		case p.capacity < b.layers:
			return // the next registration grows this page
		default:
			avail += p.avail.n
		}
	}
	if float64(avail) >= r.opts.PageAhead*float64(b.layers) {
		return
	}
	if !vacant && (len(r.pages) >= r.opts.MaxPages || len(b.pages) >= r.opts.MaxPagesPerBucket) {
		return // no page to come: the bucket is full for good
	}
	desc := r.desc(b.key, false, 0, b.layers)
	desc.Label = fmt.Sprintf("%sbindless page (%v) (made ahead)", r.opts.Label, b.key)
	b.ahead = device.PrepareTexture(r.dev, desc)
	if b.ahead.Ahead() {
		b.aheadBytes = desc.Bytes()
	}
}

// createPage returns a texture of desc for a page of b (nil for a new
// bucket): the page made ahead for b when there is one, its creation
// succeeded and desc is what it was made as (but for the label), else a
// new one. None is made ahead after it. (A device that makes textures at the take made none ahead:
// the registration creates the page, with its label.)
func (r *Registry[K]) createPage(b *bucket, desc device.TextureDesc) (device.Texture, error) {
	if pend := r.takeAhead(b); pend != nil && pend.Ahead() {
		tex, err := pend.Take()
		if err == nil {
			got := tex.Desc()
			got.Label = desc.Label
			if got == desc.Normalize() {
				return tex, nil
			}
			tex.Release()
		}
	} else {
		pend.Release()
	}
	return r.dev.CreateTexture(desc)
}

// takeAhead returns b's page being made ahead, nil if none (or b is
// nil), and forgets it: the caller takes or releases it.
func (r *Registry[K]) takeAhead(b *bucket) *device.PendingTexture {
	if b == nil {
		return nil
	}
	p := b.ahead
	b.ahead, b.aheadBytes = nil, 0
	return p
}

// dropAhead gives up the pages being made ahead, and returns the bytes
// they held.
func (r *Registry[K]) dropAhead() uint64 {
	var n uint64
	for _, b := range r.buckets {
		n += b.aheadBytes
		r.takeAhead(b).Release()
	}
	return n
}
