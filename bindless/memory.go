package bindless

import (
	"fmt"

	"github.com/gpumem/gpumem/internal/invariant"
	"github.com/gpumem/gpumem/memory"
)

// builtinNames name the default textures in Memory, as r.builtin orders
// them.
var builtinNames = [3]string{"white (default)", "black (default)", "flat normal (default)"}

// Memory returns the registry's pages as they are now, read-only (a
// memory.Holder), in binding order: each page a texture array (kind
// memory.TexturePage, Layers layers of ElemBytes bytes, named by its label),
// with a region of kind "texture" per layer in use, named by its source
// id (fmt's %v) or, for a default texture, "white (default)" and so on.
// Free layers are free regions. A vacant page (Shrink released its
// texture) holds no memory and has no buffer here: its index is missing
// from the labels ("bindless page 3 (...)"), as it is nil in Pages.
// After the pages come those being made ahead of need (Options.PageAhead)
// where the device makes them ahead, of kind memory.PreparedBuffer, all
// free, named by the bucket's first page label + " (next page)", in the
// order of the buckets' first pages. O(layers); it allocates the
// snapshot.
func (r *Registry[K]) Memory() []memory.Buffer {
	if r.released {
		return nil
	}
	bufs := make([]memory.Buffer, 0, len(r.pages))
	for i, p := range r.pages {
		if p.tex == nil {
			continue
		}
		d := p.tex.Desc()
		lb := d.LayerBytes()
		var used []memory.Region
		for l, s := range p.state {
			var name string
			switch s {
			case layerRegistered:
				name = fmt.Sprint(p.owner[l])
			case layerBuiltin:
				h := Handle(uint32(i)<<16 | uint32(l))
				for k, b := range r.builtin {
					if b == h {
						name = builtinNames[k]
					}
				}
			default:
				continue
			}
			used = append(used, memory.Region{Offset: uint64(l) * lb, Size: lb, Kind: "texture", Name: name})
		}
		b, err := memory.NewBuffer(p.label, memory.TexturePage, uint64(d.Layers)*lb, used)
		if err != nil {
			invariant.Broken("bindless", "page %d's layers: %v", i, err)
		}
		b.ElemBytes, b.Layers, b.TextureUsage = uint32(lb), d.Layers, d.Usage
		bufs = append(bufs, b)
	}
	for i, p := range r.pages {
		if b := p.b; b.pages[0] == i && b.aheadBytes > 0 {
			bufs = append(bufs, r.preparedPage(p.label, b))
		}
	}
	return bufs
}

// preparedPage is Memory's block for the page made ahead of need for
// bucket b, whose first page is named first.
func (r *Registry[K]) preparedPage(first string, b *bucket) memory.Buffer {
	d := r.desc(b.key, false, 0, b.layers)
	lb := d.LayerBytes()
	m := memory.Block(first+" (next page)", memory.PreparedBuffer, uint64(d.Layers)*lb, 0, memory.Region{}, 0)
	m.ElemBytes, m.Layers, m.TextureUsage = uint32(lb), d.Layers, d.Usage
	return m
}
