package draw

import (
	"fmt"
	"slices"
)

// Draw is one draw of a List: the record at Slot, with Instances
// instances from instance index Object (the draw's first instance, which
// is how a shader reaches its object's data).
type Draw struct {
	Slot, Instances, Object uint32
}

// Span is a run of a packed List's draws that bind one Group: draws
// [First, First+Count).
type Span struct {
	Group        Group
	First, Count uint32
}

// List is a frame's draws over a Table's records: the renderer fills it
// (Reset, then Add per draw) and packs it by group (Pack). It is not safe
// for concurrent use, nor concurrently with its table.
type List struct {
	t        *Table
	maxDraws int
	// version names the list's draws and its table's state (Table.changes,
	// last seen as seen); packed is the version the last Pack's spans and
	// draws are of (zero: none). The draws version names are its base: the
	// first baseLen entries of added's array. same reports that added's
	// array still holds the base and that the draws added since the last
	// Reset are its first ones: the list holds its base again when it is
	// as long. A list filled again alike so keeps its version.
	version, seen, packed uint64
	baseLen               int
	same                  bool
	added                 []added
	draws                 []Draw   // packed by Pack
	counts                []uint32 // per table group, Pack's counting sort
	groups                []uint32 // per added draw, its record's group, for Pack
	spans                 []Span
}

type added struct {
	id               ID
	instances, first uint32
}

// NewList returns an empty list of at most maxDraws draws over t's
// records. ErrInvalidOptions for a maxDraws below 1. It allocates its
// tables as draws are added.
func NewList(t *Table, maxDraws int) (*List, error) {
	if t == nil || maxDraws < 1 {
		return nil, fmt.Errorf("draw: list of %d draws: %w", maxDraws, ErrInvalidOptions)
	}
	return &List{t: t, maxDraws: maxDraws, version: 1, seen: t.changes, same: true}, nil
}

// Reset empties the list. O(1).
func (l *List) Reset() { l.added = l.added[:0] }

// Len returns the number of draws added since the last Reset. O(1).
func (l *List) Len() int { return len(l.added) }

// MaxDraws returns the most draws the list holds.
func (l *List) MaxDraws() int { return l.maxDraws }

// Add adds a draw of instances instances of id's mesh, from instance index
// object. Errors: ErrInvalidID, ErrFull. O(1); it allocates only to grow
// the list.
func (l *List) Add(id ID, instances, object uint32) error {
	if !l.t.holds(id) || l.t.gone || len(l.added) >= l.maxDraws {
		return l.addErr(id)
	}
	a := added{id: id, instances: instances, first: object}
	if n := len(l.added); n < l.baseLen && l.same {
		// The entry this Add overwrites is the base's.
		l.same = l.added[:n+1][n] == a
	}
	l.added = append(l.added, a)
	return nil
}

// addErr returns the error of an Add of id that failed.
func (l *List) addErr(id ID) error {
	if err := l.t.valid(id); err != nil {
		return fmt.Errorf("draw: add: %w", err)
	}
	return fmt.Errorf("draw: add: %d draws: %w", l.maxDraws, ErrFull)
}

// Version returns a number that changes whenever what Pack returns, or
// the records its draws name, may have changed since the last call: when
// the list holds other draws than then (a list Reset and filled again
// with the same draws in the same order holds the same), and at every
// Track and Remove of the list's table and every Apply of it with changes
// to take or records to write. While it stays the same, the last Pack's
// spans and draws hold: Pack and a renderer's upload of them can be
// skipped. O(1).
func (l *List) Version() uint64 {
	if l.seen != l.t.changes || !l.same || len(l.added) != l.baseLen {
		l.seen, l.same, l.baseLen = l.t.changes, true, len(l.added)
		l.version++
	}
	return l.version
}

// Pack orders the draws by group, keeping their order within a group,
// and returns one Span per group drawn, in the table's group order. Draws
// then returns them in that order. Every draw's ID must still be tracked
// (ErrInvalidID otherwise: a Remove since its Add). The spans and draws
// are the list's, valid until its next Pack or Reset. O(draws + groups),
// O(1) when Version has not changed since the last Pack; it allocates
// only to grow its tables.
func (l *List) Pack() ([]Span, error) {
	t := l.t
	if err := t.usable(); err != nil {
		return nil, fmt.Errorf("draw: pack: %w", err)
	}
	v := l.Version()
	if l.packed == v {
		return l.spans, nil
	}
	l.packed = 0
	l.counts = l.counts[:0]
	for range t.groups {
		l.counts = append(l.counts, 0)
	}
	// One pass reads the slots' keys, checking the IDs as valid does and
	// noting each draw's group; the second places the draws by those
	// groups, or copies them as they are when they were added in group
	// order (sorted).
	l.groups = slices.Grow(l.groups[:0], len(l.added))[:len(l.added)]
	sorted, prev := true, uint32(0)
	for i, a := range l.added {
		if !t.holds(a.id) {
			return nil, fmt.Errorf("draw: pack: %w", t.valid(a.id))
		}
		g := t.keys[a.id.slot].group
		l.groups[i] = g
		l.counts[g]++
		sorted = sorted && g >= prev
		prev = g
	}
	// Prefix sums: counts[k] becomes where group k's run starts.
	l.spans = l.spans[:0]
	start := uint32(0)
	for k, n := range l.counts {
		if n > 0 {
			l.spans = append(l.spans, Span{Group: t.groups[k].Group, First: start, Count: n})
		}
		l.counts[k] = start
		start += n
	}
	if cap(l.draws) < len(l.added) {
		l.draws = make([]Draw, len(l.added), max(len(l.added), 2*cap(l.draws)))
	}
	l.draws = l.draws[:len(l.added)]
	if sorted {
		for i, a := range l.added {
			l.draws[i] = Draw{Slot: a.id.slot, Instances: a.instances, Object: a.first}
		}
	} else {
		for i, a := range l.added {
			k := l.groups[i]
			l.draws[l.counts[k]] = Draw{Slot: a.id.slot, Instances: a.instances, Object: a.first}
			l.counts[k]++
		}
	}
	l.packed = v
	return l.spans, nil
}

// Draws returns the draws as the last Pack ordered them. The slice is the
// list's, valid until its next Pack or Reset.
func (l *List) Draws() []Draw { return l.draws }

// Args returns the arguments of packed draw i from its table's records:
// what a device that draws from the CPU (no indirect draws) issues. i must
// be below len(Draws()). O(1).
func (l *List) Args(i int) Args {
	d := l.draws[i]
	a := l.t.recs[d.Slot].args
	a.InstanceCount, a.FirstInstance = d.Instances, d.Object
	return a
}

// AppendArgs appends the arguments of every packed draw, as Args.Append
// writes them, to b: the indirect buffer a device without a GPU expansion
// of the list (or a test) uploads. O(draws).
func (l *List) AppendArgs(b []byte) []byte {
	for i := range l.draws {
		b = l.Args(i).Append(b)
	}
	return b
}
