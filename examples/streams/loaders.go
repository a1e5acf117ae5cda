//go:build !js

package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/gpumem/gpumem/mesh"
)

// The loading goroutines. The scene is a grid of slots, each empty or
// holding one mesh; every loader owns the slots of its stripe (slot %
// loaders), and each tick adds, reshapes, recolours and removes meshes
// there through its own mesh.Loader, then reports what it did as events.
//
// Ticks keep the run reproducible while the loaders work beside the
// render loop: the loop starts tick f after frame f's Flush and Changes
// and collects its events at the start of frame f+1, before the Flush
// that applies the loaders' calls. So every event the loop reads names
// calls the next Flush takes, and the loaders build their meshes while
// the frame draws.

// op is what an event did to its slot.
type op uint8

const (
	added    op = iota + 1 // a new mesh, with its texture
	modified               // new data for the mesh: new sizes or the same
	removed                // the mesh and its texture leave
)

// event is one loader call on one slot, for the render loop.
type event struct {
	op    op
	slot  int
	mesh  mesh.Handle
	shape *shape // added, modified: the mesh's data as staged
	image bitmap // added: its texture's image
	texID uint64 // added, removed: its texture's source id
}

// loader is one loading goroutine and its mesh.Loader.
type loader struct {
	ml    *mesh.Loader
	id    int
	rng   *rand.Rand
	slots map[int]*event // the live mesh of each owned slot: its add
	next  uint64         // texture ids issued
	ticks chan struct{}
	done  chan tickResult
}

type tickResult struct {
	events []event
	err    error
}

// loaders is the set of loading goroutines.
type loaders struct {
	all   []*loader
	slots int
	wg    sync.WaitGroup
}

// startLoaders starts n loaders over slots slots, each with its own
// mesh.Loader of a. Call it on a's goroutine.
func startLoaders(a *mesh.Allocator, n, slots int, seed uint64) *loaders {
	ls := &loaders{slots: slots}
	for id := range n {
		l := &loader{ml: a.NewLoader(), id: id, rng: rand.New(rand.NewPCG(seed, uint64(id))),
			slots: map[int]*event{}, ticks: make(chan struct{}, 1), done: make(chan tickResult, 1)}
		ls.all = append(ls.all, l)
		ls.wg.Add(1)
		go func(ticks <-chan struct{}) {
			defer ls.wg.Done()
			for range ticks {
				evs, err := l.tick(slots, n)
				l.done <- tickResult{evs, err}
			}
		}(l.ticks)
	}
	return ls
}

// tick lets every loader run one tick.
func (ls *loaders) tick() {
	for _, l := range ls.all {
		l.ticks <- struct{}{}
	}
}

// collect waits for the tick and returns its events, loader by loader.
func (ls *loaders) collect(dst []event) ([]event, error) {
	var errs []error
	for _, l := range ls.all {
		r := <-l.done
		dst = append(dst, r.events...)
		errs = append(errs, r.err)
	}
	return dst, errors.Join(errs...)
}

// stop ends the goroutines, after the tick under way, and waits for
// them. Later calls do nothing.
func (ls *loaders) stop() {
	for _, l := range ls.all {
		if l.ticks != nil {
			close(l.ticks)
			l.ticks = nil
		}
	}
	ls.wg.Wait()
}

// tick makes one tick's calls on the loader's slots: an empty slot fills
// often at first, a live mesh now and then changes shape (new sizes),
// colour (the same sizes: rewritten in place) or leaves.
func (l *loader) tick(slots, stride int) ([]event, error) {
	var evs []event
	for s := l.id; s < slots; s += stride {
		live := l.slots[s]
		r := l.rng.Float64()
		var ev event
		var err error
		switch {
		case live == nil && r < 0.25:
			ev = event{op: added, slot: s, shape: newShape(l.rng), image: newBitmap(l.rng), texID: uint64(l.id)<<32 | l.next}
			l.next++
			ev.mesh, err = l.ml.Add(ev.shape.mesh())
			l.slots[s] = &ev
		case live == nil:
			continue
		case r < 0.03:
			ev = event{op: removed, slot: s, mesh: live.mesh, texID: live.texID}
			err = l.ml.Remove(live.mesh)
			delete(l.slots, s)
		case r < 0.07:
			ev = event{op: modified, slot: s, mesh: live.mesh, shape: newShape(l.rng)}
			err = l.ml.Modify(live.mesh, ev.shape.mesh())
		case r < 0.09:
			ev = event{op: modified, slot: s, mesh: live.mesh, shape: recolor(live.shape, l.rng)}
			err = l.ml.Modify(live.mesh, ev.shape.mesh())
		default:
			continue
		}
		if err != nil {
			return evs, fmt.Errorf("loader %d, slot %d: %w", l.id, s, err)
		}
		if ev.op == modified {
			live.shape = ev.shape
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// recolor returns s with a new colour stream: the same sizes, so the
// allocator rewrites the mesh in place.
func recolor(s *shape, rng *rand.Rand) *shape {
	c := *s
	c.streams[3] = nil
	k := [3]float32{0.5 + 0.5*rng.Float32(), 0.5 + 0.5*rng.Float32(), 0.5 + 0.5*rng.Float32()}
	for v := range s.vertices() {
		y := float32frombytes(s.streams[0][12*v+4:])
		t := 0.75 + 0.25*y
		c.streams[3] = appendFloats(c.streams[3], k[0]*t, k[1]*t, k[2]*t, 1)
	}
	return &c
}
