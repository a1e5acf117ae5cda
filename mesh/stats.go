package mesh

import "github.com/gpumem/gpumem/arena"

// Stats is a snapshot of an allocator's state and history.
type Stats struct {
	Meshes  int // live meshes
	Pending int // meshes staged for the next Flush

	Slabs      int    // shared slabs alive
	OwnBuffers int    // buffers of their own alive (large or NoBaseVertex arrays)
	SlabBytes  uint64 // the slabs' capacity
	UsedBytes  uint64 // of SlabBytes, what placed arrays hold (whole slots)
	OwnBytes   uint64 // the buffers of their own

	Flushes       uint64 // successful Flush calls
	BytesUploaded uint64 // array bytes written by them
	SlabsCreated  uint64
	SlabsReleased uint64
	Growths       uint64 // slab growths: new buffers, each one copy
	Shrinks       uint64 // slabs moved into smaller buffers (Options.ShrinkBelow, Shrink)
	BytesCopied   uint64 // bytes the copies of growths and shrinks moved
	Compactions   uint64 // full compactions, by Compact or on a refusal
	Moves         uint64 // ranges moved by sweeps and compactions
	BytesMoved    uint64 // bytes those moves moved
	MeshesMoved   uint64 // ranges reported moved (Moves, of live meshes)
	LoaderOps     uint64 // Loader calls Flush applied
	LoaderDropped uint64 // of those, Modify and Remove of a mesh no longer live
	// PreparedBytes is the bytes of the slabs' next buffers, made ahead of
	// their growth (Options.GrowAhead) and not taken yet.
	PreparedBytes uint64
}

// Buffers returns the device buffers the allocator holds: slabs and
// buffers of their own.
func (s Stats) Buffers() int { return s.Slabs + s.OwnBuffers }

// SlackBytes returns slab bytes no placed array holds.
func (s Stats) SlackBytes() uint64 { return s.SlabBytes - s.UsedBytes }

// Stats returns the allocator's statistics. O(slabs).
func (a *Allocator) Stats() Stats {
	s := a.stats
	s.Meshes = a.live
	s.Pending = a.staged
	s.Slabs, s.OwnBuffers, s.OwnBytes = len(a.slabs), a.own, a.ownBytes
	for _, sl := range a.slabs {
		st := sl.ar.Stats()
		var sb uint64 // every stream's
		for i := range sl.layout.Streams() {
			sb += uint64(sl.layout.StreamSlotBytes(i))
		}
		s.SlabBytes += uint64(st.CapacityElems) * sb
		s.UsedBytes += st.OccupiedElems * sb
		s.PreparedBytes += st.PreparedBytes
		s.add(st)
	}
	return s
}

// add adds an arena's history to s.
func (s *Stats) add(st arena.Stats) {
	s.Growths += st.Growths
	s.Shrinks += st.Shrinks
	s.BytesCopied += st.BytesCopied
	s.Compactions += st.FullCompactions
	s.Moves += st.Moves
	s.BytesMoved += st.BytesMoved
}

// retire releases s, keeping its history in the allocator's stats.
func (a *Allocator) retire(s *slab) {
	a.stats.add(s.ar.Stats())
	a.stats.SlabsReleased++
	a.forward(s)
	for i := range s.ar.Planes() {
		a.changes.Released(s.ar.PlaneBuffer(i), nil)
	}
	s.ar.Release()
}
