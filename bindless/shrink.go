package bindless

import (
	"fmt"
	"slices"
)

// Shrink gives memory back now: it releases the texture of every page
// that holds no registered or default texture (its layers all free or
// never used), and returns the bytes those textures held: every layer
// with its mips, times the samples (what package budget charges for
// them). What a budget's reclaimer calls:
//
//	ta.SetReclaimer(func(uint64) { _, _ = textures.Shrink() })
//
// A released page keeps its index, its binding slot, and its bucket: the
// page is vacant, Pages has nil there, Memory leaves it out, and the next
// registration in its bucket that finds no free layer gives it a texture
// again, at the same index, before any new page is added (Version
// changes then, as when a page is added). Vacant pages at the end of the
// page list are dropped from it: NumPages falls, and their indices go to
// the next pages added, of any bucket. Handles of registered textures
// never change. Page 0, which holds the default textures, is never
// released.
//
// Version changes when Shrink released anything: rebuild bind groups
// built before. The textures are released as Release does: the device
// frees them once the GPU has finished the work already recorded on
// them. O(layers + free layers). It fails only with ErrReleased.
func (r *Registry[K]) Shrink() (uint64, error) {
	if r.released {
		return 0, fmt.Errorf("bindless: Shrink: %w", ErrReleased)
	}
	var freed uint64
	changed := false
	for i, p := range r.pages {
		if p.tex == nil || !p.empty() {
			continue
		}
		freed += p.tex.Desc().Bytes()
		r.vacate(i)
		changed = true
	}
	for n := len(r.pages); n > 0 && r.pages[n-1].tex == nil; n-- {
		r.drop(n - 1)
		changed = true
	}
	if changed {
		r.version++
	}
	r.bytesReleased += freed
	return freed, nil
}

// empty reports whether no layer of p is registered or a default.
func (p *page[K]) empty() bool {
	for _, s := range p.state {
		if s == layerRegistered || s == layerBuiltin {
			return false
		}
	}
	return true
}

// vacate releases the texture of live page index, which holds no texture
// in use: its free layers leave the bucket's free list, its unused ones
// (when it is the bucket's last live page) go with it, and it joins the
// bucket's vacant pages.
func (r *Registry[K]) vacate(index int) {
	p := r.pages[index]
	b := p.b
	b.free = slices.DeleteFunc(b.free, func(h Handle) bool { return h.Page() == index })
	k := slices.Index(b.pages, index)
	if k == len(b.pages)-1 {
		b.next = b.layers // the pages before the last have no unused layer
	}
	b.pages = slices.Delete(b.pages, k, k+1)
	b.vacant = append(b.vacant, index)
	clear(p.state) // layerUnused
	p.tex.Release()
	p.tex = nil
	r.pagesReleased++
}

// drop removes vacant page index, the last of the page list, from it and
// from its bucket, and the bucket when it has no page left.
func (r *Registry[K]) drop(index int) {
	p := r.pages[index]
	b := p.b
	b.vacant = slices.DeleteFunc(b.vacant, func(i int) bool { return i == index })
	r.pages[index] = nil
	r.pages = r.pages[:index]
	if len(b.pages)+len(b.vacant) == 0 {
		delete(r.buckets, b.key)
	}
}
