package mesh

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gpumem/gpumem/handle"
)

// Loader stages meshes from a goroutine other than the one that owns the
// Allocator: a loader decodes a mesh, calls Add, gets its handle at once
// (reserved without a lock, from package handle's Remote), wires it into
// its scene, and goes on; the owner's next Flush takes what every Loader
// staged, in each Loader's order, and places it with the rest.
//
// Loader methods are safe for concurrent use with each other and with
// every Allocator method. Make one Loader per loading goroutine: each has
// its own queue and stripe of free handles, so loaders do not contend.
// A Loader's Add, Modify and Remove take effect at the owner's next Flush
// (Flush applies them before it places anything); until then Slices and
// Resident of a Loader's new mesh report it not resident. Modify and
// Remove of a mesh that is no longer live when Flush applies them are
// dropped, and counted in Stats.LoaderDropped.
type Loader struct {
	a  *Allocator // immutable fields only: maxBuffer, ids' Remote
	id handle.Remote

	mu  sync.Mutex
	ops []loaderOp // staged, in order; Flush swaps them out
}

// loaderOp is one staged call of a Loader.
type loaderOp struct {
	verb uint8 // opAdd, opModify, opRemove
	h    Handle
	m    Mesh // checked by the Loader
}

const (
	opAdd = iota + 1
	opModify
	opRemove
)

// NewLoader returns a Loader of a's meshes. Call it on a's goroutine.
func (a *Allocator) NewLoader() *Loader {
	l := &Loader{a: a, id: a.ids.Remote()}
	a.loaders = append(a.loaders, l)
	return l
}

// Add stages mesh m and returns its handle, as Allocator.Add does; the
// owner's next Flush takes it. Errors: ErrInvalidMesh, device.ErrReleased,
// handle.ErrExhausted. Lock-free but for one uncontended lock of the
// Loader's queue; it allocates only to grow the queue.
func (l *Loader) Add(m Mesh) (Handle, error) {
	if _, err := l.a.parse(&m); err != nil {
		return Handle{}, err
	}
	id, err := l.id.Allocate()
	if err != nil {
		if errors.Is(err, handle.ErrReleased) {
			err = errReleased
		}
		return Handle{}, fmt.Errorf("mesh: loader add: %w", err)
	}
	h := Handle{idx: id.Index(), gen: id.Generation()}
	l.push(loaderOp{verb: opAdd, h: h, m: m})
	return h, nil
}

// Modify stages new data for h, as Allocator.Modify does, at the owner's
// next Flush. Errors: ErrInvalidMesh (checked now), device.ErrReleased.
func (l *Loader) Modify(h Handle, m Mesh) error {
	if _, err := l.a.parse(&m); err != nil {
		return err
	}
	if l.id.Released() {
		return errReleased
	}
	l.push(loaderOp{verb: opModify, h: h, m: m})
	return nil
}

// Remove removes h, as Allocator.Remove does, at the owner's next Flush.
// Errors: device.ErrReleased.
func (l *Loader) Remove(h Handle) error {
	if l.id.Released() {
		return errReleased
	}
	l.push(loaderOp{verb: opRemove, h: h})
	return nil
}

func (l *Loader) push(op loaderOp) {
	l.mu.Lock()
	l.ops = append(l.ops, op)
	l.mu.Unlock()
}

// takeLoaders applies what every Loader staged, Loader by Loader, each
// in its order. The queues swap with the owner's scratch, so neither side
// allocates once both have grown.
func (a *Allocator) takeLoaders() {
	for _, l := range a.loaders {
		l.mu.Lock()
		ops := l.ops
		l.ops = a.loaderOps[:0]
		l.mu.Unlock()
		for i := range ops {
			op := &ops[i]
			ps, err := a.parse(&op.m) // checked by the Loader: no error
			switch op.verb {
			case opAdd:
				a.take(op.h, ps, &op.m)
			case opModify:
				var r *record
				if r, err = a.record(op.h); err == nil {
					a.modify(r, op.h, ps, op.m)
				}
			case opRemove:
				var r *record
				if r, err = a.record(op.h); err == nil {
					a.remove(r, op.h)
				}
			}
			if err != nil {
				a.stats.LoaderDropped++
			}
			a.stats.LoaderOps++
		}
		clear(ops) // no mesh data kept past its Flush
		a.loaderOps = ops[:0]
	}
}
