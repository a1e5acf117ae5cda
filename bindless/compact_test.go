package bindless_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
)

// copyRefuser is a device that lets allow more layer copies through and
// refuses the others with device.ErrOutOfMemory; allow < 0 refuses none.
type copyRefuser struct {
	device.Device
	allow int
}

func (d *copyRefuser) CopyTextureLayer(src device.Texture, srcLayer uint32, dst device.Texture, dstLayer uint32) error {
	if d.allow == 0 {
		return fmt.Errorf("copy refused by the test: %w", device.ErrOutOfMemory)
	}
	if d.allow > 0 {
		d.allow--
	}
	return d.Device.CopyTextureLayer(src, srcLayer, dst, dstLayer)
}

// moveOf is one move Compact reports.
type moveOf struct {
	id       string
	from, to bindless.Handle
}

// plannedMoves returns the moves Compact must make, in its order: bucket
// by bucket in the order of their first pages, the registered texture at
// the highest layer of the highest live page into the lowest available
// layer below the pages' capacities, while that lies below it. The
// defaults never move.
func (m *model) plannedMoves() []moveOf {
	pages := m.r.Pages()
	byHandle := map[bindless.Handle]string{}
	for id, e := range m.want {
		byHandle[e.h] = id
	}
	used := m.inUse()
	var moves []moveOf
	done := map[bucketOf]bool{}
	for first := range pages {
		key, _ := m.pageBucket(first)
		if done[key] {
			continue
		}
		done[key] = true
		var free, regs []bindless.Handle // ascending
		for i, p := range pages {
			if k, _ := m.pageBucket(i); p == nil || k != key {
				continue
			}
			for l := range p.Desc().Layers {
				h := bindless.Handle(uint32(i)<<16 | l)
				if _, reg := byHandle[h]; reg {
					regs = append(regs, h)
				} else if !used[i][l] {
					free = append(free, h)
				}
			}
		}
		for k := 0; k < len(free) && k < len(regs) && free[k] < regs[len(regs)-1-k]; k++ {
			from := regs[len(regs)-1-k]
			moves = append(moves, moveOf{byHandle[from], from, free[k]})
		}
	}
	return moves
}

// compact calls Compact with the first allow copies let through (allow <
// 0: all; m.copies refuses them) and every page creation refused when
// refused, and checks it against the model: it moves exactly the
// planned textures (plannedMoves), those before the refused copy when
// one is, reports each once with its old and new handle, gives back what
// giveBack says of the layout after the moves (pages trimmed exactly),
// changes Version when it moved or the pages changed, counts the moves
// in Stats, and every mip of every texture reads back through its new
// handle as it did through its old one.
func (m *model) compact(allow int, refused bool) error {
	mips, err := m.allMips()
	if err != nil {
		return err
	}
	before, version, moved := m.r.Pages(), m.r.Version(), m.r.Stats().TexturesMoved
	plan := m.plannedMoves()
	planned := len(plan)
	wantErr := allow >= 0 && allow < planned
	if wantErr {
		plan = plan[:allow]
	}
	for _, mv := range plan {
		e := m.want[mv.id]
		e.h = mv.to
		m.want[mv.id] = e
	}
	if m.copies != nil {
		m.copies.allow = allow
		defer func() { m.copies.allow = -1 }()
	} else if allow >= 0 {
		return fmt.Errorf("compact: no copyRefuser to refuse copies")
	}
	var got []moveOf
	var n int
	var cerr error
	// The trims copy their layers in use through what allowance the
	// moves left: a trim short of it copies what it can and is refused.
	left := allow - len(plan)
	trimOK := func(n int) bool {
		switch {
		case refused:
			return false
		case allow < 0 || left >= n:
			left -= n
			return true
		}
		left = 0
		return false
	}
	err = m.giveBack(before, trimOK, true, func() (uint64, error) {
		if refused {
			m.dev.(*host.Device).FailNextCreates(1 << 20)
			defer m.dev.(*host.Device).FailNextCreates(0)
		}
		var freed uint64
		m.r.Changes(nil)
		n, freed, cerr = m.r.Compact()
		for _, c := range m.r.Changes(nil) {
			if c.Kind == memory.Moved {
				from, to := bindless.Moved(c)
				id, _ := m.r.Source(to)
				got = append(got, moveOf{id, from, to})
			}
		}
		return freed, nil
	})
	if err != nil {
		return fmt.Errorf("Compact: %w", err)
	}
	if wantErr != (cerr != nil) || (wantErr && !errors.Is(cerr, device.ErrOutOfMemory)) {
		return fmt.Errorf("Compact with %d of %d copies allowed: %v", allow, planned, cerr)
	}
	if n != len(plan) || !slices.Equal(got, plan) {
		return fmt.Errorf("Compact moved %d, reported %v; planned %v", n, got, plan)
	}
	if st := m.r.Stats(); st.TexturesMoved != moved+uint64(n) {
		return fmt.Errorf("Stats count %d moves, were %d, %d more made", st.TexturesMoved, moved, n)
	}
	if changed := n > 0 || !slices.Equal(before, m.r.Pages()); changed != (m.r.Version() != version) {
		return fmt.Errorf("Compact: %d moves, pages %v -> %v, version %d -> %d", n, before, m.r.Pages(), version, m.r.Version())
	}
	after, err := m.allMips()
	if err != nil {
		return err
	}
	for id, want := range mips {
		if !slices.EqualFunc(after[id], want, bytes.Equal) {
			return fmt.Errorf("Compact: %q's mips changed", id)
		}
	}
	return m.verify()
}

// allMips reads every mip of every id through its handle.
func (m *model) allMips() (map[string][][]byte, error) {
	out := map[string][][]byte{}
	for id, e := range m.want {
		tex, layer, ok := m.r.Locate(e.h)
		if !ok {
			return nil, fmt.Errorf("%q: Locate(%v) found nothing", id, e.h)
		}
		d := tex.Desc()
		for mip := range d.Mips {
			b := make([]byte, d.MipBytes(mip))
			if err := m.dev.ReadTexture(tex, layer, mip, b); err != nil {
				return nil, fmt.Errorf("%q: mip %d: %w", id, mip, err)
			}
			out[id] = append(out[id], b)
		}
	}
	return out, nil
}

// compactScene registers 48 textures of three buckets (one with mips) on
// pages of 8 layers, interleaved so the buckets' pages interleave, and
// unregisters all but every fifth and seventh, leaving holes below live
// textures on every page: what a zone unload leaves.
func compactScene(t *testing.T, dev device.Device) (*model, *copyRefuser) {
	t.Helper()
	cr := &copyRefuser{Device: dev, allow: -1}
	r := newRegistry(t, cr, bindless.Options{Label: "c/", LayersPerPage: 8, MaxPages: 32})
	m := newModel(dev, r)
	m.full, m.copies = 8, cr
	keys := []bindless.Key{rgba4, mipped, r32x2}
	for i := range 48 {
		_, err := m.register(fmt.Sprint("t", i), keys[i%3], i)
		must(t, err)
	}
	must(t, m.verify())
	for i := range 48 {
		if i%5 != 4 && i%7 != 0 {
			must(t, m.unregister(fmt.Sprint("t", i)))
		}
	}
	must(t, m.verify())
	return m, cr
}

// TestCompact: after the scene's unload Shrink gives back nothing but
// page 0's unused layers (a texture in use stays at the top of every
// other page), Compact moves the
// textures down, gives back the emptied pages and trims the rest to
// exactly their textures, every texture reads back intact through its
// new handle, Changes reports exactly the handles that changed, a
// second Compact moves nothing, and registrations after it grow the
// trimmed pages back; on every backend.
func TestCompact(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		m, _ := compactScene(t, dev)
		r := m.r
		must(t, m.shrink()) // trims page 0 to the defaults, no other
		if freed, err := r.Shrink(); err != nil || freed != 0 {
			t.Fatalf("Shrink again before Compact: %d bytes, %v", freed, err)
		}
		before := r.Stats()
		handles := map[string]bindless.Handle{}
		for id, e := range m.want {
			handles[id] = e.h
		}
		if len(m.plannedMoves()) < 5 {
			t.Fatalf("the scene plans %d moves", len(m.plannedMoves()))
		}
		must(t, m.compact(-1, false))
		st := r.Stats()
		changed := 0
		for id, e := range m.want {
			if e.h != handles[id] {
				changed++
			}
		}
		if changed == 0 || st.TexturesMoved != uint64(changed) {
			t.Fatalf("%d handles changed, Stats count %d moves", changed, st.TexturesMoved)
		}
		if st.Layers >= before.Layers || st.Layers != st.Registered+st.Builtin || st.FreeLayers != 0 || st.BytesReleased == 0 || st.Pages >= before.Pages {
			t.Fatalf("Compact did not pack and give back: %+v, before %+v", st, before)
		}
		t.Logf("%d of %d textures moved; layers %d -> %d, pages %d -> %d (%d vacant), %d bytes given back",
			changed, len(m.want), before.Layers, st.Layers, before.Pages, st.Pages, st.Vacant, st.BytesReleased)
		version := r.Version()
		r.Changes(nil)
		n, freed, err := r.Compact()
		for _, c := range r.Changes(nil) {
			if c.Kind == memory.Moved {
				t.Errorf("second Compact moved %v", c)
			}
		}
		if n != 0 || freed != 0 || err != nil || r.Version() != version {
			t.Fatalf("second Compact: %d moves, %d bytes, %v, version %d -> %d", n, freed, err, version, r.Version())
		}
		for i := range 10 {
			_, err := m.register(fmt.Sprint("u", i), rgba4, 100+i)
			must(t, err)
		}
		must(t, m.verify())
		if r.Stats().PagesGrown == 0 {
			t.Fatalf("no trimmed page grew back: %+v", r.Stats())
		}
		r.Release()
		if _, _, err := r.Compact(); !errors.Is(err, device.ErrReleased) {
			t.Fatalf("Compact after Release: %v", err)
		}
	})
}

// TestCompactRefused: a copy the device refuses midway (after 0, 1 and 4
// moves) ends Compact with the error: the moves before it are made and
// reported, the refused texture stays where it was, every texture reads
// back, and a Compact after moves the rest. On the host, Compact with
// every page creation refused moves everything but trims nothing; the
// next Compact trims.
func TestCompactRefused(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		for _, allow := range []int{0, 1, 4} {
			t.Run(fmt.Sprint("copies=", allow), func(t *testing.T) {
				m, _ := compactScene(t, dev)
				must(t, m.compact(allow, false))
				must(t, m.compact(-1, false))
				if st := m.r.Stats(); st.FreeLayers != 0 || st.Layers != st.Registered+st.Builtin {
					t.Fatalf("not packed after the second Compact: %+v", st)
				}
			})
		}
		if _, ok := dev.(*host.Device); ok {
			t.Run("creations", func(t *testing.T) {
				m, _ := compactScene(t, dev)
				must(t, m.compact(-1, true))
				if st := m.r.Stats(); st.PagesTrimmed != 0 || st.TexturesMoved == 0 {
					t.Fatalf("Compact with creations refused: %+v", st)
				}
				must(t, m.compact(-1, false))
				if st := m.r.Stats(); st.PagesTrimmed == 0 || st.Layers != st.Registered+st.Builtin {
					t.Fatalf("Compact after: %+v", st)
				}
			})
		}
	})
}
