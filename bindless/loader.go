package bindless

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Loader stages registrations from a goroutine other than the one that
// owns the Registry: a loader decodes a texture, stages it under its id
// and goes on; the owner's next TakeLoaded registers what every Loader
// staged, in each Loader's order, and Handle(id) gives its handle from
// then on. Ids are the caller's (handle.Remote reserves them without a
// lock, see ExampleRegistry_loader), so a loader can wire an id into its
// materials at once.
//
// Loader methods are safe for concurrent use with each other and with
// every Registry method. Make one Loader per loading goroutine: each has
// its own queue, so loaders do not contend. The Loader keeps pixels until
// TakeLoaded copies them to the device.
type Loader[K comparable] struct {
	released *atomic.Bool // the registry's

	mu  sync.Mutex
	ops []loadOp[K]
}

// loadOp is one staged call of a Loader.
type loadOp[K comparable] struct {
	verb   uint8 // loadRegister, loadSized, loadUnregister
	id     K
	key    Key
	pixels []byte
}

const (
	loadRegister = iota + 1
	loadSized
	loadUnregister
)

// Failed is a staged call that TakeLoaded could not carry out: its id
// and why (Register's, RegisterSized's or Unregister's error).
type Failed[K comparable] struct {
	ID  K
	Err error
}

// NewLoader returns a Loader of r. Call it on r's goroutine.
func (r *Registry[K]) NewLoader() *Loader[K] {
	l := &Loader[K]{released: &r.closed}
	r.loaders = append(r.loaders, l)
	return l
}

// Register stages Registry.Register(id, key, pixels). Errors:
// device.ErrReleased; the rest are TakeLoaded's to report.
func (l *Loader[K]) Register(id K, key Key, pixels []byte) error {
	return l.push(loadOp[K]{verb: loadRegister, id: id, key: key, pixels: pixels})
}

// RegisterSized stages Registry.RegisterSized(id, key, pixels).
func (l *Loader[K]) RegisterSized(id K, key Key, pixels []byte) error {
	return l.push(loadOp[K]{verb: loadSized, id: id, key: key, pixels: pixels})
}

// Unregister stages Registry.Unregister(id).
func (l *Loader[K]) Unregister(id K) error {
	return l.push(loadOp[K]{verb: loadUnregister, id: id})
}

func (l *Loader[K]) push(op loadOp[K]) error {
	if l.released.Load() {
		return errReleased
	}
	l.mu.Lock()
	l.ops = append(l.ops, op)
	l.mu.Unlock()
	return nil
}

// TakeLoaded carries out what every Loader staged, Loader by Loader, each
// in its order, and appends to dst the calls that failed. Call it on the
// owner's goroutine, once a frame before drawing. O(staged calls) plus
// their uploads.
func (r *Registry[K]) TakeLoaded(dst []Failed[K]) []Failed[K] {
	for _, l := range r.loaders {
		l.mu.Lock()
		ops := l.ops
		l.ops = r.loadOps[:0]
		l.mu.Unlock()
		for i := range ops {
			op := &ops[i]
			var err error
			switch op.verb {
			case loadRegister:
				_, err = r.Register(op.id, op.key, op.pixels)
			case loadSized:
				_, err = r.RegisterSized(op.id, op.key, op.pixels)
			case loadUnregister:
				err = r.Unregister(op.id)
			}
			if err != nil {
				dst = append(dst, Failed[K]{op.id, fmt.Errorf("bindless: loaded: %w", err)})
			}
		}
		clear(ops) // no pixels kept past their upload
		r.loadOps = ops[:0]
	}
	return dst
}
