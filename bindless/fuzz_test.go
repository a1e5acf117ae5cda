package bindless_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
)

var fuzzKeys = []bindless.Key{
	rgba4,
	rgba8,
	r32x2,
	{Format: device.RGBA8Unorm, Width: 1, Height: 1},
	{Format: device.RGBA8Unorm, Width: 4, Height: 4, Mips: 3},
}

// runRegistry drives a registry with a command stream and checks it
// against the model after every command. Commands are byte pairs (op,
// arg); ids are "0" to "15" (arg%16), keys arg%5 of fuzzKeys.
//
//	0-2: register an id with a key (an id registered with another key must
//	     fail with ErrMismatch, with the same key return the same handle)
//	3:   unregister an id
//	4:   update an id
//	5:   refuse the next page creation, then register
//	6:   register a copy of another device's texture: it fails, and Stats
//	     are exactly as before
//	7:   Shrink (with every page creation refused when arg is odd):
//	     exactly the pages with no texture in use lose their textures,
//	     trailing vacant pages are dropped, the pages whose layers in use
//	     lie in their lower half are trimmed to them (none when refused),
//	     every other page keeps its texture, and the bytes returned are
//	     the released and trimmed ones
//	8:   Compact (with every page creation refused when arg is odd, and
//	     copies refused after arg/2%4-1 of them, none when that is -1):
//	     exactly the planned textures move (model.plannedMoves; those
//	     before a refused copy), each reported once, every mip of every
//	     texture reads back through its new handle, and it gives back as
//	     Shrink does, pages trimmed to exactly their layers in use
//
// Every registration of a new id takes the lowest available layer of its
// bucket (lowest page, then layer), else grows or recreates the bucket's
// lowest page below full capacity, else adds a page (model.next).
//
// After every command but a Compact (which changes Version when it
// moves a texture, as compact checks) Version has changed exactly when
// Pages has, and NumPages has fallen only at a Shrink or a Compact.
func runRegistry(data []byte) error {
	dev, err := host.New(host.Options{})
	if err != nil {
		return err
	}
	defer dev.Release()
	cr := &copyRefuser{Device: dev, allow: -1}
	r, err := bindless.New[string](cr, bindless.Options{LayersPerPage: 3, MaxPages: 6, MaxPagesPerBucket: 3, PageAhead: 0.5})
	if err != nil {
		return err
	}
	defer r.Release()
	m := newModel(dev, r)
	m.full, m.copies = 3, cr
	other, err := host.New(host.Options{})
	if err != nil {
		return err
	}
	defer other.Release()
	foreign := map[bindless.Key]device.Texture{}
	for i := 0; i+1 < len(data); i += 2 {
		op, arg := data[i]%9, data[i+1]
		id := fmt.Sprint(arg % 16)
		key := fuzzKeys[int(arg/16)%len(fuzzKeys)]
		pages, version := r.Pages(), r.Version()
		var err error
		switch op {
		case 0, 1, 2, 5:
			if op == 5 {
				dev.FailNextCreates(1)
			}
			e, had := m.want[id]
			_, err = m.register(id, key, i)
			dev.FailNextCreates(0)
			switch {
			case had && e.key != key.Normalized():
				if !errors.Is(err, bindless.ErrMismatch) {
					return fmt.Errorf("command %d: Register(%q) with another key: %v", i, id, err)
				}
				err = nil
			case errors.Is(err, bindless.ErrFull):
				err = nil
			}
		case 3:
			err = m.unregister(id)
			if _, had := m.want[id]; !had && errors.Is(err, bindless.ErrNotRegistered) {
				err = nil
			}
		case 6:
			src := foreign[key]
			if src == nil {
				k := key.Normalized()
				src, err = other.CreateTexture(device.TextureDesc{Format: k.Format, Width: k.Width, Height: k.Height,
					Mips: k.Mips, Usage: device.TextureCopySrc | device.TextureBinding})
				if err != nil {
					return err
				}
				foreign[key] = src
			}
			before := r.Stats()
			if _, had := m.want[id]; had {
				break // RegisterCopy returns the handle and copies nothing
			}
			if _, err := r.RegisterCopy(id, src, 0); err == nil {
				return fmt.Errorf("command %d: RegisterCopy from another device succeeded", i)
			}
			if after := r.Stats(); after != before {
				return fmt.Errorf("command %d: a failed RegisterCopy changed Stats: %+v, then %+v", i, before, after)
			}
		case 7:
			err = m.shrinkRefused(arg%2 == 1)
		case 8:
			err = m.compact(int(arg/2%4)-1, arg%2 == 1)
		case 4:
			if _, had := m.want[id]; had {
				err = m.update(id, i)
			} else if err = r.Update(id, 4, 4, pixels(rgba4, 0)); errors.Is(err, bindless.ErrNotRegistered) {
				err = nil
			}
		}
		if err != nil {
			return fmt.Errorf("command %d (op %d, id %s, key %v): %w", i, op, id, key, err)
		}
		if now := r.Pages(); op != 8 && (!slices.Equal(now, pages) != (r.Version() != version) || (len(now) < len(pages) && op != 7)) {
			return fmt.Errorf("command %d (op %d): pages %v -> %v, version %d -> %d", i, op, pages, now, version, r.Version())
		}
		if err := m.verify(); err != nil {
			return fmt.Errorf("command %d (op %d, id %s): %w", i, op, id, err)
		}
	}
	return nil
}

func FuzzRegistry(f *testing.F) {
	for _, s := range [][]byte{
		{0, 0, 0, 1, 0, 2, 0, 3, 3, 1, 0, 17, 0, 33, 4, 0},
		{0, 16, 0, 17, 0, 18, 0, 19, 0, 20, 0, 21, 0, 22, 0, 23, 0, 24, 0, 25, 3, 18, 5, 26, 0, 26},
		{0, 64, 0, 65, 4, 64, 3, 64, 0, 80, 0, 48, 0, 49, 0, 50, 0, 51},
		{5, 0, 5, 16, 0, 0, 1, 16},
		{0, 0, 6, 1, 6, 2, 3, 0, 6, 3, 0, 4, 0, 5, 6, 6},
		// Three pages of rgba4, the middle one emptied and released, then
		// recreated at its index (once refused first); all emptied, the
		// trailing ones dropped.
		{0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8, 3, 3, 3, 4, 3, 5, 7, 0,
			5, 9, 0, 9, 0, 10, 0, 11, 7, 0, 3, 0, 3, 1, 3, 2, 3, 6, 3, 7, 3, 8, 3, 9, 3, 10, 3, 11, 7, 0, 0, 12},
		// A page of rgba4 left with its layer 0 in use: a refused Shrink
		// keeps it, a Shrink trims it to one layer; the next registrations
		// grow it back (once refused), to 2 layers, then 3, then a page
		// follows.
		{0, 0, 0, 1, 0, 2, 3, 1, 3, 2, 7, 1, 7, 0, 5, 3, 0, 3, 0, 4, 0, 5, 0, 6, 7, 0, 3, 6, 3, 5, 3, 4, 3, 3, 7, 0},
		// Three pages of rgba4 and two of rgba8, interleaved, holes left
		// below live textures; Compact with a copy refused after one move
		// and creations refused, then again freely, then once more
		// (nothing to move); registrations grow the trimmed pages back.
		{0, 0, 0, 1, 0, 2, 0, 19, 0, 3, 0, 4, 0, 5, 0, 22, 0, 6, 0, 7, 0, 8, 0, 25,
			3, 0, 3, 2, 3, 4, 3, 6, 3, 7, 3, 19, 8, 3, 8, 0, 8, 0, 0, 9, 0, 10, 0, 11, 0, 12, 8, 0},
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := runRegistry(data); err != nil {
			t.Fatal(err)
		}
	})
}
