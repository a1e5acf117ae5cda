package mesh

import (
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/internal/invariant"
)

// CheckGuards returns the meshes one of whose arrays has had its margin
// written over (Options.GuardBytes): something wrote past the array's end.
// It waits for the device. Each mesh is listed once, in slab order; nil
// without GuardBytes.
func (a *Allocator) CheckGuards() ([]Handle, error) {
	if a.released {
		return nil, errReleased
	}
	var out []Handle
	for _, s := range a.slabs {
		bad, err := s.ar.CheckGuards()
		if err != nil {
			return nil, fmt.Errorf("mesh: check guards of %v: %w", s.layout, err)
		}
		for _, h := range bad {
			tag, err := s.ar.Owner(h)
			if err != nil {
				invariant.Broken("mesh", "check guards of %v: a bad guard's range is not live: %v", s.layout, err)
			}
			idx, _ := ownerOf(tag)
			if mh := (Handle{idx: idx, gen: a.recs[idx].gen}); !slices.Contains(out, mh) {
				out = append(out, mh)
			}
		}
	}
	return out, nil
}
