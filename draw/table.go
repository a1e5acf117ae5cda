package draw

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/invariant"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
)

// minRecords is the capacity of a table's first buffer: 20 KiB.
const minRecords = 1024

// recordUsage is what the records buffer is used for: written and grown
// (CopyDst, CopySrc, read back by Check), patched and read by compute
// (Storage), and drawn from where a renderer wants (Indirect).
const recordUsage = device.CopySrc | device.CopyDst | device.Storage | device.Indirect

// ID names one mesh a Table tracks, for the table's life or until Remove.
// IDs are comparable; the zero ID names nothing.
type ID struct {
	slot, gen uint32
}

// Slot returns the index of id's record in the table's buffer: its Args
// are at byte Slot()*ArgsBytes.
func (id ID) Slot() uint32 { return id.slot }

// Group is the buffers one run of draws binds: the vertex buffer (nil for
// a mesh without vertices; the first stream's of a mesh with separate
// attribute arrays, the further streams' in More, bound to the next
// vertex buffer slots) and the index buffer with its format. Meshes share
// a group when their arrays share buffers, which is what the mesh
// allocator's slabs are for.
type Group struct {
	Vertex, Index device.Buffer
	More          [mesh.MaxStreams - 1]device.Buffer
	Format        mesh.IndexFormat
}

// Streams returns the vertex buffers to bind, slot by slot: Vertex, then
// More up to its first nil.
func (g *Group) Streams() []device.Buffer {
	n := 0
	for n < len(g.More) && g.More[n] != nil {
		n++
	}
	return append([]device.Buffer{g.Vertex}, g.More[:n]...)
}

// Table keeps the draw arguments of the meshes it tracks, in a device
// buffer and in memory; see the package doc for the frame loop and the
// invariants. It is not safe for concurrent use.
type Table struct {
	dev    device.Device
	meshes *mesh.Allocator
	label  string

	// buf holds capRecords records; nil before the first Apply that has
	// one to write. Record slot s is at byte s*ArgsBytes.
	buf        device.Buffer
	capRecords uint32
	maxRecords uint32

	// recs is indexed by slot; a free slot has the zero Handle. For a
	// live slot that is not dirty, args is what the device holds at its
	// slot once the recorded writes and patches have run.
	recs     []record
	keys     []key    // indexed by slot, as recs
	free     []uint32 // free slots, reused last in first out
	byHandle map[mesh.Handle]uint32
	live     int

	// groups is indexed by a record's group; a free group has no members
	// and is in freeGroups. byGroup maps a live group's buffers to it.
	groups     []group
	freeGroups []uint32
	byGroup    map[Group]uint32
	streams    []mesh.Slice // place's scratch

	dirty   []uint32 // slots to write whole at the next Apply
	patches []device.Patch
	epoch   uint64 // counts Applies: a record's mark dedupes it per Apply
	// changes counts the calls that may have changed a slot's liveness,
	// a group or a record on the device: Track, Remove, and an Apply with
	// changes to take or records to write (List.Version reads it).
	changes uint64
	scratch []byte
	stats   Stats
	gone    bool
	// rewrite is a test hook (export_test.go): moved records are written
	// instead of patched, one write a run (rewriteRuns) or one write
	// over their whole span (rewriteSpan), for BenchmarkApply's
	// comparison.
	rewrite int
}

const (
	rewriteRuns = 1 + iota
	rewriteSpan
)

type record struct {
	h     mesh.Handle // zero for a free slot
	args  Args
	dirty bool   // in Table.dirty
	mark  uint64 // the epoch of the Apply that last refreshed it
}

// key is what checking an ID and grouping a draw read of a slot, kept
// apart from its record so that a list's passes over its draws read 8
// bytes a draw: the generation of the slot's ID (from 1; a free slot
// keeps the one its next ID gets) and the group of its record, noGroup
// for a free slot.
type key struct {
	gen, group uint32
}

const noGroup = ^uint32(0)

type group struct {
	Group
	members int
}

// Stats counts what a Table holds and did.
type Stats struct {
	Records         int    // meshes tracked
	Groups          int    // groups with a tracked mesh
	CapacityRecords uint32 // records the buffer holds
	Growths         int    // buffers replaced by a larger one
	Written         uint64 // records written whole
	Patched         uint64 // records patched on the GPU for a move within their group
	Moved           uint64 // records Apply refreshed for a change
}

// NewTable returns an empty table of meshes' draw arguments on dev, the
// allocator's device. label names its buffer. It creates no buffer until
// Apply has a record to write.
func NewTable(dev device.Device, meshes *mesh.Allocator, label string) (*Table, error) {
	if dev == nil || meshes == nil {
		return nil, fmt.Errorf("draw: a table needs a device and a mesh allocator: %w", ErrInvalidOptions)
	}
	lim := dev.Limits()
	maxBytes := min(lim.MaxBufferSize, lim.MaxStorageBufferBindingSize)
	if maxBytes < ArgsBytes*minRecords {
		return nil, fmt.Errorf("draw: the device's largest storage binding holds %d bytes: %w", maxBytes, ErrInvalidOptions)
	}
	return &Table{
		dev: dev, meshes: meshes, label: label,
		maxRecords: uint32(min(maxBytes/ArgsBytes, 1<<31)),
		byHandle:   map[mesh.Handle]uint32{},
		byGroup:    map[Group]uint32{},
	}, nil
}

// MaxRecords returns the most records the table holds: as many as one
// storage binding of the device takes.
func (t *Table) MaxRecords() uint32 { return t.maxRecords }

// Track starts keeping the draw arguments of mesh h, whose indices are of
// format f, and returns its ID. h must be resident (placed by a Flush);
// its record reaches the device at the next Apply. Errors:
// ErrInvalidFormat, ErrTracked, ErrNoIndices, ErrFull, and the mesh
// allocator's mesh.ErrInvalidHandle and mesh.ErrNotResident. O(1).
func (t *Table) Track(h mesh.Handle, f mesh.IndexFormat) (ID, error) {
	if err := t.usable(); err != nil {
		return ID{}, err
	}
	if f != mesh.Uint16 && f != mesh.Uint32 {
		return ID{}, fmt.Errorf("draw: track %v: format %d: %w", h, f, ErrInvalidFormat)
	}
	if _, ok := t.byHandle[h]; ok {
		return ID{}, fmt.Errorf("draw: track %v: %w", h, ErrTracked)
	}
	if len(t.free) == 0 && uint32(len(t.recs)) >= t.maxRecords {
		return ID{}, fmt.Errorf("draw: track %v: %d records: %w", h, t.maxRecords, ErrFull)
	}
	args, g, err := t.place(h, f)
	if err != nil {
		return ID{}, fmt.Errorf("draw: track: %w", err)
	}
	var slot uint32
	if n := len(t.free); n > 0 {
		slot, t.free = t.free[n-1], t.free[:n-1]
	} else {
		slot = uint32(len(t.recs))
		t.recs = append(t.recs, record{})
		t.keys = append(t.keys, key{gen: 1, group: noGroup})
	}
	r, k := &t.recs[slot], &t.keys[slot]
	r.h, r.args, k.group = h, args, t.join(g)
	t.markDirty(slot)
	t.byHandle[h] = slot
	t.live++
	t.changes++
	return ID{slot: slot, gen: k.gen}, nil
}

// Remove stops tracking id's mesh; its slot may be reused by the next
// Track. Draws already packed that name it must not be drawn. Errors:
// ErrInvalidID. O(1).
func (t *Table) Remove(id ID) error {
	if err := t.valid(id); err != nil {
		return fmt.Errorf("draw: remove: %w", err)
	}
	r, k := &t.recs[id.slot], &t.keys[id.slot]
	t.leave(k.group)
	delete(t.byHandle, r.h)
	r.h, k.group = mesh.Handle{}, noGroup
	k.gen++
	if k.gen == 0 { // after 2^32 reuses: skip the zero generation
		k.gen = 1
	}
	t.free = append(t.free, id.slot)
	t.live--
	t.changes++
	return nil
}

// Record returns the draw arguments and group of id's mesh as the table
// holds them: what the device holds once Apply has run. O(1).
func (t *Table) Record(id ID) (Args, Group, error) {
	if err := t.valid(id); err != nil {
		return Args{}, Group{}, fmt.Errorf("draw: record: %w", err)
	}
	return t.recs[id.slot].args, t.groups[t.keys[id.slot].group].Group, nil
}

// Lookup returns the ID of mesh h, or false when the table does not track
// it. O(1).
func (t *Table) Lookup(h mesh.Handle) (ID, bool) {
	slot, ok := t.byHandle[h]
	if !ok {
		return ID{}, false
	}
	return ID{slot: slot, gen: t.keys[slot].gen}, true
}

// Len returns the number of meshes tracked. O(1).
func (t *Table) Len() int { return t.live }

// Buffer returns the device buffer of the records, nil before the first
// Apply that wrote one. It is valid until the next Apply: growth replaces
// it (the old one is released as device.Buffer.Release says, so draws
// recorded in this frame stay right).
func (t *Table) Buffer() device.Buffer { return t.buf }

// Apply brings the records up to date with the mesh allocator: it takes
// the allocator's changes cs (the renderer takes them from
// mesh.Allocator.Changes, once, and hands them on), refreshes the record
// of every tracked mesh a change names, and records on the device the
// writes of every record new or refreshed since the last Apply and one
// patch for the meshes that moved within their group. Call it once a
// frame, after the allocator's Flush, Sweep and Changes and the frame's
// Track and Remove calls, and before drawing.
//
// What each change does: Moved refreshes its mesh from Slices; Replaced
// renames the buffer in every group that binds it; Released refreshes the
// meshes of the groups that bound it (a mesh re-placed by Modify);
// Overflowed refreshes every record. A tracked mesh that is no longer
// resident is ErrStale, and its record is left as it was; the others are
// brought up to date all the same. Device errors leave the records to be
// written again at the next Apply. O(changes + records written).
func (t *Table) Apply(cs []memory.Change) error {
	if err := t.usable(); err != nil {
		return err
	}
	t.epoch++
	if len(cs) > 0 || len(t.dirty) > 0 {
		t.changes++
	}
	t.patches = t.patches[:0]
	// Renames first: Slices say where meshes are now, so a group must
	// bind today's buffers before records are compared with it.
	for _, c := range cs {
		if c.Kind == memory.Replaced {
			t.rename(c.Old, c.Buffer)
		}
	}
	var errs []error
	for _, c := range cs {
		switch c.Kind {
		case memory.Moved:
			if slot, ok := t.byHandle[mesh.HandleOf(c)]; ok && t.recs[slot].mark != t.epoch {
				t.stats.Moved++
				errs = appendErr(errs, t.refresh(slot, true))
			}
		case memory.Released:
			errs = t.refreshGroups(errs, c.Old)
		case memory.Overflowed:
			for slot := range t.recs {
				if t.recs[slot].h != (mesh.Handle{}) && t.recs[slot].mark != t.epoch {
					t.stats.Moved++
					errs = appendErr(errs, t.refresh(uint32(slot), true))
				}
			}
		}
	}
	if err := t.flush(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func appendErr(errs []error, err error) []error {
	if err != nil {
		errs = append(errs, err)
	}
	return errs
}

// refresh brings slot's record to where its mesh is now. When patch is
// set and the mesh stayed in its group with its index count, the change
// is queued as a patch; otherwise the record is marked to be written.
func (t *Table) refresh(slot uint32, patch bool) error {
	r, k := &t.recs[slot], &t.keys[slot]
	r.mark = t.epoch
	old := t.groups[k.group]
	args, g, err := t.place(r.h, old.Format)
	if err != nil {
		if errors.Is(err, mesh.ErrNotResident) || errors.Is(err, mesh.ErrInvalidHandle) {
			err = fmt.Errorf("%w: %w", ErrStale, err)
		}
		return err
	}
	if g == old.Group && args.IndexCount == r.args.IndexCount && patch && !r.dirty && t.rewrite == 0 {
		base := slot * (ArgsBytes / 4)
		if d := args.FirstIndex - r.args.FirstIndex; d != 0 {
			t.patches = append(t.patches, device.Patch{Index: base + wordFirstIndex, Delta: d})
		}
		if d := uint32(args.BaseVertex - r.args.BaseVertex); d != 0 {
			t.patches = append(t.patches, device.Patch{Index: base + wordBaseVertex, Delta: d})
		}
		r.args = args
		t.stats.Patched++
		return nil
	}
	if g != old.Group {
		t.leave(k.group)
		k.group = t.join(g)
	}
	r.args = args
	t.markDirty(slot)
	return nil
}

// place returns the record and group of mesh h from its slices.
func (t *Table) place(h mesh.Handle, f mesh.IndexFormat) (Args, Group, error) {
	v, i, err := t.meshes.Slices(h)
	if err != nil {
		return Args{}, Group{}, fmt.Errorf("mesh %v: %w", h, err)
	}
	if i.Buffer == nil {
		return Args{}, Group{}, fmt.Errorf("mesh %v: %w", h, ErrNoIndices)
	}
	args := Args{IndexCount: i.Len(), InstanceCount: 1, FirstIndex: i.StartElem, BaseVertex: int32(v.StartElem)}
	g := Group{Vertex: v.Buffer, Index: i.Buffer, Format: f}
	if t.streams, err = t.meshes.Streams(h, t.streams[:0]); err != nil {
		return Args{}, Group{}, fmt.Errorf("mesh %v: %w", h, err)
	}
	for k := 1; k < len(t.streams); k++ {
		g.More[k-1] = t.streams[k].Buffer
	}
	return args, g, nil
}

// join returns g's index, making the group if it has no members yet, and
// counts one member more.
func (t *Table) join(g Group) uint32 {
	k, ok := t.byGroup[g]
	if !ok {
		if n := len(t.freeGroups); n > 0 {
			k, t.freeGroups = t.freeGroups[n-1], t.freeGroups[:n-1]
		} else {
			k = uint32(len(t.groups))
			t.groups = append(t.groups, group{})
		}
		t.groups[k] = group{Group: g}
		t.byGroup[g] = k
	}
	t.groups[k].members++
	return k
}

// leave counts one member less of group k, and frees it at none.
func (t *Table) leave(k uint32) {
	g := &t.groups[k]
	invariant.Check(g.members > 0, "draw", "a record left a group without members")
	if g.members--; g.members == 0 {
		delete(t.byGroup, g.Group)
		*g = group{}
		t.freeGroups = append(t.freeGroups, k)
	}
}

// rename puts buffer now in the place of old in every group that binds
// it. A group whose new buffers are another's already (a mesh tracked
// after the growth and before this Apply) merges into that one: O(records)
// then, once per growth.
func (t *Table) rename(old, now device.Buffer) {
	if old == nil || now == nil {
		return
	}
	for k := range t.groups {
		g := &t.groups[k]
		if g.members == 0 || (g.Vertex != old && g.Index != old && !slices.Contains(g.More[:], old)) {
			continue
		}
		delete(t.byGroup, g.Group)
		key := g.Group
		if key.Vertex == old {
			key.Vertex = now
		}
		if key.Index == old {
			key.Index = now
		}
		for s := range key.More {
			if key.More[s] == old {
				key.More[s] = now
			}
		}
		j, ok := t.byGroup[key]
		if !ok {
			g.Group = key
			t.byGroup[key] = uint32(k)
			continue
		}
		for slot := range t.keys {
			if t.keys[slot].group == uint32(k) {
				t.keys[slot].group = j
			}
		}
		t.groups[j].members += g.members
		*g = group{}
		t.freeGroups = append(t.freeGroups, uint32(k))
	}
}

// refreshGroups refreshes every record whose group binds buf, a buffer
// released.
func (t *Table) refreshGroups(errs []error, buf device.Buffer) []error {
	if buf == nil {
		return errs
	}
	hit := false
	for k := range t.groups {
		g := &t.groups[k]
		hit = hit || (g.members > 0 && (g.Vertex == buf || g.Index == buf))
	}
	if !hit {
		return errs
	}
	for slot := range t.recs {
		r := &t.recs[slot]
		if r.h == (mesh.Handle{}) || r.mark == t.epoch {
			continue
		}
		if g := t.groups[t.keys[slot].group]; g.Vertex == buf || g.Index == buf {
			t.stats.Moved++
			errs = appendErr(errs, t.refresh(uint32(slot), false))
		}
	}
	return errs
}

func (t *Table) markDirty(slot uint32) {
	if r := &t.recs[slot]; !r.dirty {
		r.dirty = true
		t.dirty = append(t.dirty, slot)
	}
}

// flush grows the buffer to hold every slot, writes the dirty records in
// runs of adjacent slots, then records the queued patches. On an error
// the dirty records stay dirty; queued patches of a failed Patch are lost
// with the device's state (the device failed), and the records they
// named are marked dirty so the next Apply writes them whole.
func (t *Table) flush() error {
	if err := t.grow(uint32(len(t.recs))); err != nil {
		t.dirtyPatched()
		return err
	}
	slices.Sort(t.dirty)
	if t.rewrite == rewriteSpan && len(t.dirty) > 0 {
		lo, hi := t.dirty[0], t.dirty[len(t.dirty)-1]
		for s := lo; s <= hi; s++ {
			t.markDirty(s)
		}
		slices.Sort(t.dirty)
	}
	for i := 0; i < len(t.dirty); {
		j, b := i, t.scratch[:0]
		for ; j < len(t.dirty) && t.dirty[j]-t.dirty[i] == uint32(j-i); j++ {
			b = t.recs[t.dirty[j]].args.Append(b)
		}
		t.scratch = b
		if err := t.dev.WriteBuffer(t.buf, uint64(t.dirty[i])*ArgsBytes, b); err != nil {
			t.dirty = t.dirty[i:]
			t.dirtyPatched()
			return fmt.Errorf("draw: write %d records: %w", j-i, err)
		}
		for _, s := range t.dirty[i:j] {
			t.recs[s].dirty = false
		}
		t.stats.Written += uint64(j - i)
		i = j
	}
	t.dirty = t.dirty[:0]
	if len(t.patches) == 0 {
		return nil
	}
	if err := t.dev.Patch(t.buf, t.patches); err != nil {
		t.dirtyPatched()
		return fmt.Errorf("draw: patch %d record words: %w", len(t.patches), err)
	}
	t.patches = t.patches[:0]
	return nil
}

// dirtyPatched marks the records of the queued patches dirty and drops
// the patches.
func (t *Table) dirtyPatched() {
	for _, p := range t.patches {
		t.markDirty(p.Index / (ArgsBytes / 4))
	}
	t.patches = t.patches[:0]
}

// grow makes the buffer hold n records, doubling it; the records it held
// are copied over on the device.
func (t *Table) grow(n uint32) error {
	if n <= t.capRecords {
		return nil
	}
	c := max(t.capRecords, minRecords)
	for c < n {
		c = min(2*c, t.maxRecords)
	}
	buf, err := t.dev.CreateBuffer(device.BufferDesc{Label: t.label + " draw records", Size: uint64(c) * ArgsBytes, Usage: recordUsage})
	if err != nil {
		return fmt.Errorf("draw: grow the records to %d: %w", c, err)
	}
	if t.buf != nil {
		if err := t.dev.CopyBuffer(t.buf, 0, buf, 0, uint64(t.capRecords)*ArgsBytes); err != nil {
			buf.Release()
			return fmt.Errorf("draw: grow the records to %d: %w", c, err)
		}
		t.buf.Release()
		t.stats.Growths++
	}
	t.buf, t.capRecords = buf, c
	return nil
}

// Stats returns the table's statistics. O(1).
func (t *Table) Stats() Stats {
	s := t.stats
	s.Records, s.Groups, s.CapacityRecords = t.live, len(t.byGroup), t.capRecords
	return s
}

// Check verifies the invariants: every tracked mesh's record and group
// are what Slices says, in memory and, read back, on the device. It waits
// for the device. A mismatch of the device's records is an error; a
// tracked mesh that is not resident is ErrStale. Meant for tests. O(records).
func (t *Table) Check() error {
	if err := t.usable(); err != nil {
		return err
	}
	if len(t.dirty) > 0 || len(t.patches) > 0 {
		return fmt.Errorf("draw: check: %d records not applied", len(t.dirty)+len(t.patches))
	}
	var dev []byte
	if t.buf != nil && len(t.recs) > 0 {
		dev = make([]byte, len(t.recs)*ArgsBytes)
		if err := t.dev.ReadBuffer(t.buf, 0, dev); err != nil {
			return fmt.Errorf("draw: check: %w", err)
		}
	}
	members := make([]int, len(t.groups))
	live := 0
	for slot := range t.recs {
		r, k := &t.recs[slot], t.keys[slot]
		if (r.h == mesh.Handle{}) != (k.group == noGroup) {
			return fmt.Errorf("draw: check slot %d (%v): group %d", slot, r.h, k.group)
		}
		if r.h == (mesh.Handle{}) {
			continue
		}
		live++
		members[k.group]++
		g := t.groups[k.group]
		args, want, err := t.place(r.h, g.Format)
		if err != nil {
			return fmt.Errorf("draw: check slot %d: %w: %w", slot, ErrStale, err)
		}
		if args != r.args || want != g.Group {
			return fmt.Errorf("draw: check slot %d (%v): record %+v in %v, the mesh is at %+v in %v", slot, r.h, r.args, g.Group, args, want)
		}
		if got := ParseArgs(dev[slot*ArgsBytes:]); got != args {
			return fmt.Errorf("draw: check slot %d (%v): the device holds %+v, want %+v", slot, r.h, got, args)
		}
		if t.byHandle[r.h] != uint32(slot) {
			return fmt.Errorf("draw: check slot %d (%v): indexed at slot %d", slot, r.h, t.byHandle[r.h])
		}
	}
	for k, g := range t.groups {
		if g.members != members[k] {
			return fmt.Errorf("draw: check group %d: %d members counted, %d hold it", k, g.members, members[k])
		}
		if g.members > 0 && t.byGroup[g.Group] != uint32(k) {
			return fmt.Errorf("draw: check group %d: not indexed by its buffers", k)
		}
	}
	if live != t.live || live != len(t.byHandle) || len(t.byGroup)+len(t.freeGroups) != len(t.groups) {
		return fmt.Errorf("draw: check: %d live records, %d counted, %d indexed; %d groups, %d indexed, %d free",
			live, t.live, len(t.byHandle), len(t.groups), len(t.byGroup), len(t.freeGroups))
	}
	return nil
}

// Release releases the records buffer, once the device is done with it.
// IDs die with it. Idempotent and nil-safe; later calls return
// device.ErrReleased.
func (t *Table) Release() {
	if t == nil || t.gone {
		return
	}
	t.gone = true
	if t.buf != nil {
		t.buf.Release()
		t.buf = nil
	}
}

func (t *Table) usable() error {
	if t.gone {
		return fmt.Errorf("draw: table: %w", device.ErrReleased)
	}
	return nil
}

// holds reports whether id names a tracked mesh.
func (t *Table) holds(id ID) bool {
	if id.slot >= uint32(len(t.keys)) {
		return false
	}
	k := t.keys[id.slot]
	return k.gen == id.gen && k.group != noGroup && id.gen != 0
}

// valid returns nil if id names a tracked mesh.
func (t *Table) valid(id ID) error {
	if err := t.usable(); err != nil {
		return err
	}
	if !t.holds(id) {
		return fmt.Errorf("id %d.%d: %w", id.slot, id.gen, ErrInvalidID)
	}
	return nil
}
