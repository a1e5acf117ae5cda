package draw_test

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/draw"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
)

// churnOptions are small slabs, so a few meshes grow them, fragment them,
// overflow into a second slab and get buffers of their own.
var churnOptions = mesh.Options{MinSlabBytes: 64, MaxSlabBytes: 2048, LargeThresholdBytes: 512, MaxMeshesPerSlab: 64}

// churn drives a mesh allocator and a table with the command stream cmds
// (add, remove, modify in place, modify with new sizes, flush, sweep,
// compact, shrink) and, after every command, hands the allocator's
// changes to the table and checks every record against mesh.Slices, in
// memory and on the device (Table.Check), and a packed list of every
// tracked mesh against the records.
func churn(t *testing.T, dev device.Device, cmds []byte) {
	meshes, tab := newTable(t, dev, churnOptions, "churn")
	list, err := draw.NewList(tab, 1000)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(len(cmds)), 7))
	type item struct {
		h       mesh.Handle
		strides []uint32 // one per vertex stream
		id      draw.ID  // zero until tracked
		format  mesh.IndexFormat
		indexed bool
	}
	var items []*item
	var cs []memory.Change
	pick := func(b byte) (int, *item) {
		if len(items) == 0 {
			return 0, nil
		}
		k := int(b) % len(items)
		return k, items[k]
	}
	for i := 0; i < len(cmds); i++ {
		arg := byte(0)
		if i+1 < len(cmds) {
			arg = cmds[i+1]
		}
		op := cmds[i] % 8
		switch op {
		case 0: // add
			i++
			m := randMesh(r, int(arg%40))
			h, err := meshes.Add(m)
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, &item{h: h, strides: strides(m), format: m.IndexFormat, indexed: len(m.Indices) > 0})
		case 1: // remove
			i++
			if k, it := pick(arg); it != nil {
				if it.id != (draw.ID{}) {
					if err := tab.Remove(it.id); err != nil {
						t.Fatal(err)
					}
					if err := tab.Remove(it.id); !errors.Is(err, draw.ErrInvalidID) {
						t.Fatalf("second remove: %v, want ErrInvalidID", err)
					}
					if err := list.Add(it.id, 1, 0); !errors.Is(err, draw.ErrInvalidID) {
						t.Fatalf("add of a removed id: %v, want ErrInvalidID", err)
					}
				}
				if err := meshes.Remove(it.h); err != nil {
					t.Fatal(err)
				}
				items = append(items[:k], items[k+1:]...)
			}
		case 2: // modify in place: same sizes, the record stays
			i++
			if _, it := pick(arg); it != nil && meshes.Resident(it.h) {
				v, ix, _ := meshes.Slices(it.h)
				m := mesh.Mesh{}
				for _, s := range it.strides {
					m.Streams = append(m.Streams, mesh.Stream{Stride: s, Data: make([]byte, int(v.Len())*int(s))})
				}
				m.Indices, m.IndexFormat = make([]byte, int(ix.Len())*int(it.format)), it.format
				if err := meshes.Modify(it.h, m); err != nil {
					t.Fatal(err)
				}
			}
		case 3, 4: // modify with new sizes (the format kept), then flush
			if op == 3 {
				i++
				if _, it := pick(arg); it != nil && it.indexed {
					m := randMesh(r, int(arg%40))
					if len(m.Indices) > 0 && m.IndexFormat == it.format {
						it.strides = strides(m)
						if err := meshes.Modify(it.h, m); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if err := meshes.Flush(); err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				switch {
				case it.id == (draw.ID{}) && !it.indexed:
					if _, err := tab.Track(it.h, mesh.Uint16); !errors.Is(err, draw.ErrNoIndices) {
						t.Fatalf("track of a mesh without indices: %v, want ErrNoIndices", err)
					}
				case it.id == (draw.ID{}):
					if it.id, err = tab.Track(it.h, it.format); err != nil {
						t.Fatal(err)
					}
					if _, err := tab.Track(it.h, it.format); !errors.Is(err, draw.ErrTracked) {
						t.Fatalf("second track: %v, want ErrTracked", err)
					}
				}
				// A re-placed mesh needs nothing here: the Flush reports
				// it Moved, and Apply rewrites its record.
			}
		case 5: // sweep
			i++
			if err := meshes.Sweep(arena.SweepLimits{Moves: 1 + int(arg%8)}); err != nil {
				t.Fatal(err)
			}
		case 6:
			if err := meshes.Compact(); err != nil {
				t.Fatal(err)
			}
		case 7:
			if _, err := meshes.Shrink(); err != nil {
				t.Fatal(err)
			}
		}
		cs = meshes.Changes(cs[:0])
		if err := tab.Apply(cs); err != nil {
			t.Fatalf("command %d (op %d): apply: %v", i, op, err)
		}
		if err := tab.Check(); err != nil {
			t.Fatalf("command %d (op %d): %v", i, op, err)
		}
		checkList(t, tab, list, r)
	}
	st := tab.Stats()
	t.Logf("%d commands: %+v; meshes %+v", len(cmds), st, meshes.Stats())
}

// checkList adds every tracked mesh to list in a random order, packs it,
// and checks the spans and arguments against the table's records.
func checkList(t *testing.T, tab *draw.Table, list *draw.List, r *rand.Rand) {
	t.Helper()
	list.Reset()
	ids := draw.TrackedIDs(tab)
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	objects := map[uint32]draw.ID{}
	for k, id := range ids {
		if err := list.Add(id, uint32(1+k%3), uint32(k)); err != nil {
			t.Fatal(err)
		}
		objects[uint32(k)] = id
	}
	spans, err := list.Pack()
	if err != nil {
		t.Fatal(err)
	}
	draws := list.Draws()
	args := list.AppendArgs(nil)
	next := uint32(0)
	for _, s := range spans {
		if s.First != next || s.Count == 0 {
			t.Fatalf("span %+v after %d draws", s, next)
		}
		next += s.Count
		for i := s.First; i < s.First+s.Count; i++ {
			id := objects[draws[i].Object]
			want, g, err := tab.Record(id)
			if err != nil {
				t.Fatal(err)
			}
			if g != s.Group || draws[i].Slot != id.Slot() {
				t.Fatalf("draw %d of object %d in span of %v, its record in %v", i, draws[i].Object, s.Group, g)
			}
			want.InstanceCount, want.FirstInstance = 1+draws[i].Object%3, draws[i].Object
			if got := draw.ParseArgs(args[i*draw.ArgsBytes:]); got != want || list.Args(int(i)) != want {
				t.Fatalf("draw %d: args %+v, want %+v", i, got, want)
			}
		}
	}
	if int(next) != len(ids) || len(draws) != len(ids) {
		t.Fatalf("%d draws packed in spans of %d, %d added", len(draws), next, len(ids))
	}
	// Within a span the draws keep the order they were added in (their
	// objects ascend), and a list added in the packed order packs to the
	// same spans and draws.
	for _, s := range spans {
		for i := s.First + 1; i < s.First+s.Count; i++ {
			if draws[i].Object <= draws[i-1].Object {
				t.Fatalf("span %+v: draw %d of object %d after object %d", s, i, draws[i].Object, draws[i-1].Object)
			}
		}
	}
	wantSpans, wantDraws := slices.Clone(spans), slices.Clone(draws)
	list.Reset()
	for _, d := range wantDraws {
		if err := list.Add(objects[d.Object], d.Instances, d.Object); err != nil {
			t.Fatal(err)
		}
	}
	if spans, err = list.Pack(); err != nil || !slices.Equal(spans, wantSpans) || !slices.Equal(list.Draws(), wantDraws) {
		t.Fatalf("packed again in group order: %v, spans %v, want %v", err, spans, wantSpans)
	}
}

// strides returns the vertex streams' strides of m.
func strides(m mesh.Mesh) []uint32 {
	if len(m.Streams) == 0 {
		return []uint32{m.VertexStride}
	}
	var ss []uint32
	for _, s := range m.Streams {
		ss = append(ss, s.Stride)
	}
	return ss
}

// newTable returns a mesh allocator of opts on dev and a table of its
// meshes labelled label, both released when the test ends.
func newTable(tb testing.TB, dev device.Device, opts mesh.Options, label string) (*mesh.Allocator, *draw.Table) {
	tb.Helper()
	meshes, err := mesh.New(dev, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(meshes.Release)
	tab, err := draw.NewTable(dev, meshes, label)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(tab.Release)
	return meshes, tab
}

// drawable returns randMesh(r, n) with its vertices replaced by 8-byte
// ones and its indices by 16-bit ones, of random counts: a mesh a table
// tracks as mesh.Uint16.
func drawable(r *rand.Rand, n int) mesh.Mesh {
	m := randMesh(r, n)
	m.VertexStride, m.Vertices = 8, make([]byte, 8*(1+r.IntN(20)))
	m.IndexFormat, m.Indices = mesh.Uint16, make([]byte, 6*(1+r.IntN(8)))
	return m
}

// randMesh returns a mesh of n triangles' worth of data: a vertex stride
// of 4 to 24 bytes, or one mesh in four separate streams of 12, 12 and 8
// bytes; uint16 or uint32 indices, one mesh in eight without indices.
func randMesh(r *rand.Rand, n int) mesh.Mesh {
	stride := uint32(4 * (1 + r.IntN(6)))
	m := mesh.Mesh{VertexStride: stride, IndexFormat: mesh.Uint16}
	if r.IntN(4) == 0 {
		defer func() {
			nv := len(m.Vertices) / int(stride)
			m.VertexStride, m.Vertices = 0, nil
			for _, s := range []int{12, 12, 8} {
				m.Streams = append(m.Streams, mesh.Stream{Stride: uint32(s), Data: make([]byte, nv*s)})
			}
		}()
	}
	if r.IntN(2) == 0 {
		m.IndexFormat = mesh.Uint32
	}
	m.Vertices = make([]byte, (n+1)*int(stride))
	for k := range m.Vertices {
		m.Vertices[k] = byte(r.Uint32())
	}
	if n > 0 && r.IntN(8) != 0 {
		for range 3 * n {
			if m.IndexFormat == mesh.Uint16 {
				m.Indices = binary.LittleEndian.AppendUint16(m.Indices, uint16(r.IntN(n+1)))
			} else {
				m.Indices = binary.LittleEndian.AppendUint32(m.Indices, uint32(r.IntN(n+1)))
			}
		}
	}
	return m
}

// randCommands returns n commands: mostly adds early, then a mix.
func randCommands(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 3))
	cmds := make([]byte, n)
	for k := range cmds {
		cmds[k] = byte(r.Uint32())
		if k < n/4 && k%2 == 0 {
			cmds[k] = byte(8 * r.IntN(32)) // an add
		}
	}
	return cmds
}

// TestChurn churns the allocator under the table on every backend, with
// the invariant check after every command.
func TestChurn(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		n := 300
		if _, ok := dev.(*host.Device); ok {
			n = 2000
		}
		churn(t, dev, randCommands(1, n))
	})
}

// FuzzTable drives the table with a fuzzed command stream on the host
// device.
func FuzzTable(f *testing.F) {
	f.Add([]byte{0, 3, 0, 9, 0, 17, 4, 5, 1, 0, 4, 6, 7})
	f.Add([]byte{0, 30, 0, 31, 0, 32, 0, 33, 4, 3, 1, 20, 4, 1, 0, 5, 2, 6, 7, 5, 3})
	f.Add(randCommands(2, 200))
	f.Fuzz(func(t *testing.T, cmds []byte) {
		if len(cmds) > 300 {
			cmds = cmds[:300]
		}
		churn(t, testdevice.Host(t, host.Options{}), cmds)
	})
}
