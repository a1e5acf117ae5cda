package trace

// Allocator is what a Recorder wraps: anything that hands out handles of
// type H for sizes in units and takes them back. *offset.Allocator is one,
// with H = offset.Allocation.
type Allocator[H any] interface {
	Allocate(size uint32) (H, error)
	Free(h H) error
}

// Recorder wraps an Allocator and writes every call made through it to a
// Writer, so a program can capture its own allocation pattern and replay it
// offline. It is itself an Allocator[H], so it drops in where the wrapped
// one was used.
//
// The Recorder gives each Allocate its own id (1, 2, 3, ... never reused)
// and writes "a id size" whatever the outcome: a request the allocator
// refuses is in the trace too, so a replay counts it as a failure (or, under
// a better policy, serves it; since the program never frees what it was
// refused, such an allocation then stays live to the end of the replay). A
// successful Free of a handle the Recorder handed out writes "f id"; any
// other Free (a handle from elsewhere, or one freed already) is passed to
// the allocator and not written. A failed Free writes nothing.
//
// H values must be comparable and identify one allocation while it is live.
// The Recorder keeps a map from live handles to ids. Write errors do not
// fail Allocate or Free: they stay in the Writer and surface at its Flush
// or Close. A Recorder is not safe for concurrent use.
type Recorder[H comparable] struct {
	a    Allocator[H]
	w    *Writer
	ids  map[H]uint64
	last uint64
}

// NewRecorder returns a Recorder that passes calls on to a and writes them
// to w. The Recorder does not close w.
func NewRecorder[H comparable](a Allocator[H], w *Writer) *Recorder[H] {
	return &Recorder[H]{a: a, w: w, ids: make(map[H]uint64)}
}

// Allocate writes "a id size" and allocates size units from the wrapped
// allocator, returning what it returns.
func (r *Recorder[H]) Allocate(size uint32) (H, error) {
	r.last++
	r.w.Alloc(r.last, size)
	h, err := r.a.Allocate(size)
	if err == nil {
		r.ids[h] = r.last
	}
	return h, err
}

// Free frees h in the wrapped allocator, and writes "f id" if it succeeds
// and h came from this Recorder.
func (r *Recorder[H]) Free(h H) error {
	if err := r.a.Free(h); err != nil {
		return err
	}
	if id, ok := r.ids[h]; ok {
		delete(r.ids, h)
		r.w.Free(id)
	}
	return nil
}

// Live returns the number of allocations made through r not yet freed.
func (r *Recorder[H]) Live() int { return len(r.ids) }
