package memory

import (
	"slices"
	"strconv"

	"github.com/gpumem/gpumem/device"
)

// ChangeKind is what a Change says happened.
type ChangeKind uint8

// The kinds of change.
const (
	// Moved: one allocation of Owner (its Part) moved: its bytes were at
	// FromBytes in Old and are at ToBytes in Buffer, SizeBytes of them
	// (a texture: from layer FromLayer of OldTexture to ToLayer of
	// Texture). Sweeps and compactions move allocations. A manager that
	// re-places an allocation with new contents of a new size (a mesh
	// modified to new sizes) reports it as Moved too, SizeBytes the new
	// size: read its place again from the manager.
	Moved ChangeKind = iota + 1
	// Replaced: the buffer Old (or texture array OldTexture) was replaced
	// by Buffer (Texture), offsets and layers kept: growth, a shrink, a
	// trim. Rebuild what binds Old. Old is released as Released says.
	Replaced
	// Released: the buffer Old (or texture array OldTexture) was released
	// without a replacement: a slab, page or block given back.
	Released
	// Overflowed: more changes happened than the pending list holds
	// (MaxPendingChanges) and the list was dropped: treat every buffer,
	// texture and placement of the manager as changed, and read them
	// again. Nothing more is recorded until the next Changes call.
	Overflowed
)

// String returns the kind's name ("moved").
func (k ChangeKind) String() string {
	switch k {
	case Moved:
		return "moved"
	case Replaced:
		return "replaced"
	case Released:
		return "released"
	case Overflowed:
		return "overflowed"
	}
	return "ChangeKind(" + strconv.Itoa(int(k)) + ")"
}

// Change is one thing that changed in a manager's memory since its
// consumer last asked: an allocation moved, a buffer replaced, a buffer
// released. Every manager reports changes in this one shape, through a
// method of one signature:
//
//	Changes(dst []memory.Change) []memory.Change
//
// which appends everything that changed since its previous call, in the
// order it happened, and forgets it. The rules every manager keeps:
//
//   - Coalesced: one Moved per allocation (the place the consumer last
//     knew, the place now), one Replaced per buffer (the buffer the
//     consumer last knew, the one now); a buffer replaced and then
//     released between two calls is one Released of the first. An
//     allocation freed before the call is not reported.
//   - Bounded: at most MaxPendingChanges are kept; past that the list is
//     dropped for one Overflowed. A consumer that never asks holds at
//     most that much.
//   - Lifetime: a released or replaced Old stays valid, contents intact,
//     until a fence marked after its release completes (see
//     device/webgpu's "Old buffers and textures"): a frame that ends with
//     a Fence may still draw from it.
//   - Cost: O(changes); no allocation when dst has room.
//
// What is not a change: a new allocation (its manager's lookup says where
// it is), a new buffer (met through a placement), a write.
//
// Units: offsets and sizes in bytes, layers in layers.
type Change struct {
	Kind ChangeKind
	// Owner names who moved, in the manager's terms (its handle, packed;
	// see the manager's Changes). 0 for Replaced and Released.
	Owner uint64
	// Part is which of the owner's allocations moved, in the manager's
	// terms (mesh: vertex or index array; meshlet: data or rows).
	Part uint8
	// Old and Buffer: the buffer before and now.
	Old, Buffer device.Buffer
	// OldTexture and Texture: the texture array before and now.
	OldTexture, Texture device.Texture
	// FromBytes, ToBytes and SizeBytes: a Moved allocation's offset
	// before and now, and its size, in bytes.
	FromBytes, ToBytes, SizeBytes uint64
	// FromLayer and ToLayer: a Moved texture's layer before and now.
	FromLayer, ToLayer uint32
}

// MaxPendingChanges bounds a manager's pending list: past it the list
// becomes one Overflowed change. 4096 changes are about 450 KiB; a
// consumer that asks every frame meets the bound only when most of its
// allocations moved at once, which costs it a full rebind anyway.
const MaxPendingChanges = 4096

// ChangeLog is the pending list of a manager's changes, coalesced and
// bounded as Change says. Managers embed one and give their Changes
// method its Take. The zero ChangeLog is empty and ready.
//
// Pending changes are kept without pointers, buffers and textures named
// by index into a short table, so recording one costs an append of a few
// words and the garbage collector never scans the list; Take builds the
// Changes.
//
// A ChangeLog is not safe for concurrent use.
type ChangeLog struct {
	list []entry
	refs []ref // the buffers and textures entries name
	// moved maps a coalescing key (the manager's name for an allocation)
	// to its Moved entry in list; an entry of another key there is stale.
	moved map[uint64]int32
	// buffers lists the indices in list of Replaced entries.
	buffers []int32
	over    bool
}

// entry is a pending Change, buffers and textures as indices into refs.
type entry struct {
	key, owner         uint64
	from, to, size     uint64
	fromLayer, toLayer uint32
	old, now           int32 // refs index; none for no buffer or texture
	kind               ChangeKind
	part               uint8
}

// ref is a buffer or a texture array (or neither) an entry names.
type ref struct {
	buf device.Buffer
	tex device.Texture
}

const none = -1

// Len returns the number of pending changes. O(1).
func (l *ChangeLog) Len() int { return len(l.list) }

// Grow makes room for n more pending changes (up to the bound), so that
// a manager about to record a batch allocates once, before it starts.
func (l *ChangeLog) Grow(n int) {
	if k := min(n, MaxPendingChanges-len(l.list)); k > 0 {
		l.list = slices.Grow(l.list, k)
	}
}

// ref returns the index in refs of (buf, tex), adding it if it is not
// among the last few: a manager's moves name the same buffer run after
// run. none for neither.
func (l *ChangeLog) ref(buf device.Buffer, tex device.Texture) int32 {
	if buf == nil && tex == nil {
		return none
	}
	for i := len(l.refs) - 1; i >= 0 && i >= len(l.refs)-4; i-- {
		if r := l.refs[i]; r.buf == buf && r.tex == tex {
			return int32(i)
		}
	}
	l.refs = append(l.refs, ref{buf, tex})
	return int32(len(l.refs) - 1)
}

// is reports whether refs index i names old (a buffer) or, old nil,
// oldTex.
func (l *ChangeLog) is(i int32, old device.Buffer, oldTex device.Texture) bool {
	if i == none {
		return false
	}
	if old != nil {
		return l.refs[i].buf == old
	}
	return oldTex != nil && l.refs[i].tex == oldTex
}

// full reports whether nothing more is recorded, and turns the list into
// one Overflowed change when it just reached the bound.
func (l *ChangeLog) full() bool {
	if l.over {
		return true
	}
	if len(l.list) < MaxPendingChanges {
		return false
	}
	l.reset()
	l.over = true
	l.list = append(l.list, entry{kind: Overflowed, old: none, now: none})
	return true
}

// reset empties the list in O(entries): it deletes the keys it filed
// rather than clearing the map, whose cost is its peak size.
func (l *ChangeLog) reset() {
	if len(l.moved) > 0 {
		for i := range l.list {
			if l.list[i].kind == Moved {
				delete(l.moved, l.list[i].key)
			}
		}
	}
	clear(l.refs) // drop the buffers they name
	l.list, l.refs, l.buffers = l.list[:0], l.refs[:0], l.buffers[:0]
}

// Moved records that allocation key moved from fromBytes in old to
// toBytes in buf. key is the manager's coalescing name for the
// allocation (unique among its live ones); c's Owner and Part are
// reported. An earlier pending move of key keeps its From. O(1);
// allocates only to grow the list.
func (l *ChangeLog) Moved(key uint64, c Change) {
	if l.over {
		return
	}
	if i, ok := l.moved[key]; ok && l.pending(i, key) {
		l.update(i, &c)
		return
	}
	if l.full() {
		return
	}
	if l.moved == nil {
		l.moved = make(map[uint64]int32)
	}
	l.moved[key] = int32(len(l.list))
	l.add(key, &c)
}

// MovedAt is Moved with the index of key's entry kept by the caller in
// *at, one int32 per allocation beside its other bookkeeping (any value at
// first), instead of in the log's map: O(1) with no hashing, for managers
// whose moves come by the thousand. A key is recorded with MovedAt and
// ForgetAt only, or with Moved and Forget only.
func (l *ChangeLog) MovedAt(at *int32, key uint64, c Change) {
	if l.over {
		return
	}
	if i := *at; l.pending(i, key) {
		l.update(i, &c)
		return
	}
	if l.full() {
		return
	}
	*at = int32(len(l.list))
	l.add(key, &c)
}

// Within is a buffer (or texture array) named once for a batch of moves
// that stay in it; see ChangeLog.Within.
type Within struct{ ref int32 }

// Within names buf (or tex) for a batch of moves within it, recorded
// with MovedWithin: a manager that moves allocations by the thousand
// names the buffer once, not once a move. The Within is valid until the
// log's next call other than MovedWithin.
func (l *ChangeLog) Within(buf device.Buffer, tex device.Texture) Within {
	return Within{l.ref(buf, tex)}
}

// MovedWithin is MovedAt for a move from fromBytes to toBytes inside in,
// sizeBytes long, of owner's part.
func (l *ChangeLog) MovedWithin(at *int32, key uint64, in Within, owner uint64, part uint8, fromBytes, toBytes, sizeBytes uint64) {
	if l.over {
		return
	}
	if i := *at; l.pending(i, key) {
		e := &l.list[i]
		e.owner, e.part, e.to, e.size, e.now = owner, part, toBytes, sizeBytes, in.ref
		return
	}
	if l.full() {
		return
	}
	*at = int32(len(l.list))
	l.list = append(l.list, entry{key: key, owner: owner, from: fromBytes, to: toBytes, size: sizeBytes,
		old: in.ref, now: in.ref, kind: Moved, part: part})
}

// add appends c as key's pending move.
func (l *ChangeLog) add(key uint64, c *Change) {
	old := l.ref(c.Old, c.OldTexture)
	now := old
	if c.Buffer != c.Old || c.Texture != c.OldTexture {
		now = l.ref(c.Buffer, c.Texture)
	}
	l.list = append(l.list, entry{key: key, owner: c.Owner, from: c.FromBytes, to: c.ToBytes, size: c.SizeBytes,
		fromLayer: c.FromLayer, toLayer: c.ToLayer, old: old, now: now, kind: Moved, part: c.Part})
}

// update makes list[i], a pending move, end where c ends.
func (l *ChangeLog) update(i int32, c *Change) {
	e := &l.list[i]
	e.owner, e.part, e.to, e.toLayer, e.size = c.Owner, c.Part, c.ToBytes, c.ToLayer, c.SizeBytes
	e.now = l.ref(c.Buffer, c.Texture)
}

// ForgetAt is Forget for a key recorded with MovedAt.
func (l *ChangeLog) ForgetAt(at *int32, key uint64) {
	if i := *at; l.pending(i, key) {
		l.list[i].kind = 0 // skipped by Take
	}
}

// pending reports whether list[i] is key's pending move: a key has one
// Moved entry at most, so a stale index names another key's, or none.
func (l *ChangeLog) pending(i int32, key uint64) bool {
	return i >= 0 && int(i) < len(l.list) && l.list[i].key == key && l.list[i].kind == Moved
}

// Forward records the buffer changes of cs, a lower layer's (a manager's
// arenas'), as its own: each Replaced and Released. Other kinds are the
// caller's to translate (moves name the lower layer's allocations).
func (l *ChangeLog) Forward(cs []Change) {
	for _, c := range cs {
		switch c.Kind {
		case Replaced:
			l.Replaced(c.Old, c.Buffer, c.OldTexture, c.Texture)
		case Released:
			l.Released(c.Old, c.OldTexture)
		}
	}
}

// Forget drops the pending move of allocation key, freed: its consumer
// has nothing to move. O(1).
func (l *ChangeLog) Forget(key uint64) {
	if len(l.moved) == 0 {
		return // no move pending: no map lookup
	}
	if i, ok := l.moved[key]; ok {
		delete(l.moved, key)
		if l.pending(i, key) {
			l.list[i].kind = 0 // skipped by Take
		}
	}
}

// Replaced records that buffer old (or texture array oldTex) was
// replaced by buf (tex), offsets kept. A pending replacement whose new
// buffer is old becomes old's replacement, and pending moves into old
// now name buf. O(pending replacements + moves into old).
func (l *ChangeLog) Replaced(old, buf device.Buffer, oldTex, tex device.Texture) {
	if l.over {
		return
	}
	now := int32(none)
	for i := range l.list {
		if e := &l.list[i]; e.kind == Moved && l.is(e.now, old, oldTex) {
			if now == none {
				now = l.ref(buf, tex)
			}
			e.now = now
		}
	}
	for _, i := range l.buffers {
		if e := &l.list[i]; e.kind == Replaced && l.is(e.now, old, oldTex) {
			e.now = l.ref(buf, tex)
			return
		}
	}
	if l.full() {
		return
	}
	l.buffers = append(l.buffers, int32(len(l.list)))
	l.list = append(l.list, entry{kind: Replaced, old: l.ref(old, oldTex), now: l.ref(buf, tex)})
}

// Released records that buffer old (or texture array oldTex) was
// released. A pending replacement by old becomes the release of the
// buffer it replaced. O(pending replacements).
func (l *ChangeLog) Released(old device.Buffer, oldTex device.Texture) {
	if l.over {
		return
	}
	for _, i := range l.buffers {
		if e := &l.list[i]; e.kind == Replaced && l.is(e.now, old, oldTex) {
			e.kind, e.now = Released, none
			return
		}
	}
	if l.full() {
		return
	}
	l.list = append(l.list, entry{kind: Released, old: l.ref(old, oldTex), now: none})
}

// Take appends the pending changes to dst in the order they happened and
// empties the list. O(changes); it allocates only when dst lacks room.
func (l *ChangeLog) Take(dst []Change) []Change {
	for i := range l.list {
		e := &l.list[i]
		if e.kind == 0 {
			continue
		}
		c := Change{Kind: e.kind, Owner: e.owner, Part: e.part,
			FromBytes: e.from, ToBytes: e.to, SizeBytes: e.size, FromLayer: e.fromLayer, ToLayer: e.toLayer}
		if e.old != none {
			c.Old, c.OldTexture = l.refs[e.old].buf, l.refs[e.old].tex
		}
		if e.now != none {
			c.Buffer, c.Texture = l.refs[e.now].buf, l.refs[e.now].tex
		}
		dst = append(dst, c)
	}
	l.reset()
	l.over = false
	return dst
}
