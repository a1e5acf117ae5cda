package mesh_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
)

// streamSets are the vertex shapes the streams test mixes: interleaved,
// and separate attribute arrays of strides that make slots of 1, 2 and 4
// vertices.
var streamSets = [][]uint32{{20}, {12, 12, 8}, {6, 4}, {3, 16, 4}}

// randomStreams returns a mesh of n vertices in the streams of set, and
// 3n uint16 indices.
func randomStreams(r *rand.Rand, set []uint32, n int) mesh.Mesh {
	fill := func(b []byte) []byte {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	m := mesh.Mesh{IndexFormat: mesh.Uint16, Indices: fill(make([]byte, 6*n))}
	if len(set) == 1 && r.IntN(2) == 0 {
		m.VertexStride, m.Vertices = set[0], fill(make([]byte, n*int(set[0])))
		return m
	}
	for _, s := range set {
		m.Streams = append(m.Streams, mesh.Stream{Stride: s, Data: fill(make([]byte, n*int(s)))})
	}
	return m
}

// checkStreams reads every stream of every resident mesh from where
// Streams says and compares it with the mesh's data: every stream at one
// range, the first the same as Slices' vertex Slice.
func checkStreams(t *testing.T, dev device.Device, a *mesh.Allocator, meshes map[mesh.Handle]mesh.Mesh, step int) {
	t.Helper()
	if err := mesh.Check(a); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	var ss []mesh.Slice
	for h, m := range meshes {
		if !a.Resident(h) {
			continue
		}
		var err error
		ss, err = a.Streams(h, ss[:0])
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		want := m.Streams
		if len(want) == 0 {
			want = []mesh.Stream{{Stride: m.VertexStride, Data: m.Vertices}}
		}
		v, _, err := a.Slices(h)
		if err != nil || len(ss) != len(want) || ss[0] != v {
			t.Fatalf("step %d: %v: %d streams %+v, want %d, the first %+v (%v)", step, h, len(ss), ss, len(want), v, err)
		}
		for i, s := range ss {
			if s.StartElem != v.StartElem || s.EndElem != v.EndElem {
				t.Fatalf("step %d: stream %d at [%d,%d), stream 0 at [%d,%d)", step, i, s.StartElem, s.EndElem, v.StartElem, v.EndElem)
			}
			got := make([]byte, (len(want[i].Data)+3)&^3)
			off := uint64(s.StartElem) * uint64(want[i].Stride) // a slot boundary: a multiple of 4
			if err := dev.ReadBuffer(s.Buffer, off, got); err != nil {
				t.Fatalf("step %d: read: %v", step, err)
			}
			if !bytes.Equal(got[:len(want[i].Data)], want[i].Data) {
				t.Fatalf("step %d: %v stream %d (stride %d) at vertex %d: bytes differ", step, h, i, want[i].Stride, s.StartElem)
			}
		}
	}
}

// TestStreams: meshes whose attributes are separate arrays share slabs
// with one base vertex for all their streams, through growth, sweeps,
// compaction, shrinking, modification and buffers of their own.
func TestStreams(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	ops := make([]byte, 300)
	for i := range ops {
		ops[i] = byte(r.Uint32())
	}
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		st, owned := churnStreams(t, dev, mesh.Options{MinSlabBytes: 1 << 10, LargeThresholdBytes: 24 << 10}, ops)
		if st.Growths == 0 || st.Moves == 0 || owned == 0 {
			t.Errorf("the churn made %d growths, %d moves, at most %d buffers of their own; want some of each", st.Growths, st.Moves, owned)
		}
	})
}

// FuzzStreams is TestStreams' churn driven by the input, on the host
// device, with guard margins for inputs of odd length.
func FuzzStreams(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 4, 9, 0, 5, 7, 8, 3, 9})
	f.Add([]byte{0, 0, 0, 1, 5, 5, 5, 6, 7, 8, 9, 0, 4})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 400 {
			ops = ops[:400]
		}
		o := mesh.Options{MinSlabBytes: 256, MaxSlabBytes: 8 << 10, LargeThresholdBytes: 4 << 10}
		if len(ops)%2 == 1 {
			o.GuardBytes = 16
		}
		churnStreams(t, testdevice.Host(t, host.Options{}), o, ops)
	})
}

// churnStreams runs one command per two bytes of ops (the command, its
// argument) on an allocator of options o: add, modify (in place or to a
// new shape; the old data is read back before the Flush), remove, sweep,
// compact, shrink, each followed by a Flush and checkStreams. It returns
// the allocator's Stats and the most buffers of their own seen at once.
func churnStreams(t *testing.T, dev device.Device, o mesh.Options, ops []byte) (mesh.Stats, int) {
	a, err := mesh.New(dev, o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	meshes := map[mesh.Handle]mesh.Mesh{}
	var order []mesh.Handle // meshes in a fixed order, for picks
	owned := 0
	for step := 0; step+1 < len(ops); step += 2 {
		op, arg := ops[step]%10, ops[step+1]
		r := rand.New(rand.NewPCG(uint64(step), uint64(arg)))
		pick := func() (int, mesh.Handle, bool) {
			if len(order) == 0 {
				return 0, mesh.Handle{}, false
			}
			i := int(arg) % len(order)
			return i, order[i], true
		}
		switch {
		case op < 4 || step == 0:
			n := 1 + int(arg)%60
			if arg%20 == 0 || step == 0 {
				n = 1200 // above the large threshold: buffers of its own
			}
			m := randomStreams(r, streamSets[int(arg/4)%len(streamSets)], n)
			h, err := a.Add(m)
			if err != nil {
				t.Fatal(err)
			}
			meshes[h] = m
			order = append(order, h)
		case op < 6:
			_, h, ok := pick()
			if !ok {
				break
			}
			m := meshes[h]
			if arg%2 == 0 { // same shape: rewritten in place
				set := []uint32{m.VertexStride}
				if len(m.Streams) > 0 {
					set = set[:0]
					for _, s := range m.Streams {
						set = append(set, s.Stride)
					}
				}
				m = randomStreams(r, set, len(m.Indices)/6)
			} else {
				m = randomStreams(r, streamSets[int(arg/4)%len(streamSets)], 1+r.IntN(60))
			}
			if err := a.Modify(h, m); err != nil {
				t.Fatal(err)
			}
			// Until the Flush, the mesh draws its old data.
			if !a.Resident(h) {
				t.Fatalf("step %d: a modified mesh is not resident", step)
			}
			checkStreams(t, dev, a, meshes, step)
			meshes[h] = m
		case op == 6:
			if i, h, ok := pick(); ok {
				if err := a.Remove(h); err != nil {
					t.Fatal(err)
				}
				delete(meshes, h)
				order = append(order[:i], order[i+1:]...)
			}
		case op == 7:
			if err := a.Sweep(arena.SweepLimits{Moves: 1 + int(arg%8)}); err != nil {
				t.Fatal(err)
			}
		case op == 8:
			if err := a.Compact(); err != nil {
				t.Fatal(err)
			}
		default:
			if _, err := a.Shrink(); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Flush(); err != nil {
			t.Fatal(err)
		}
		checkStreams(t, dev, a, meshes, step)
		if o.GuardBytes > 0 {
			if bad, err := a.CheckGuards(); err != nil || len(bad) != 0 {
				t.Fatalf("step %d: guards of %v broken (%v)", step, bad, err)
			}
		}
		owned = max(owned, a.Stats().OwnBuffers)
	}
	return a.Stats(), owned
}

// TestStreamsRefused: bad streams are refused with ErrInvalidMesh.
func TestStreamsRefused(t *testing.T) {
	a, err := mesh.New(testdevice.Host(t, host.Options{}), mesh.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	for _, m := range []mesh.Mesh{
		{VertexStride: 4, Vertices: make([]byte, 8), Streams: []mesh.Stream{{Stride: 4, Data: make([]byte, 8)}}},
		{Streams: []mesh.Stream{{Stride: 4, Data: make([]byte, 8)}, {Stride: 8, Data: make([]byte, 8)}}},
		{Streams: []mesh.Stream{{Stride: 0, Data: make([]byte, 8)}}},
		{Streams: []mesh.Stream{{Stride: 3, Data: make([]byte, 8)}}},
		{Streams: make([]mesh.Stream, mesh.MaxStreams+1)},
	} {
		if _, err := a.Add(m); !errors.Is(err, mesh.ErrInvalidMesh) {
			t.Errorf("%d streams: got %v, want ErrInvalidMesh", len(m.Streams), err)
		}
	}
	l, err := mesh.StreamsLayout(12, 12, 8)
	if got := l.String(); err != nil || got != "12+12+8-byte vertex streams" || l.Streams() != 3 || l.Stride(2) != 8 || l.Stride(3) != 0 {
		t.Errorf("layout %q (%v)", got, err)
	}
	if l2, _ := mesh.StreamsLayout(12, 12, 8); l2 != l {
		t.Errorf("one set of strides, two layouts: %+v %+v", l, l2)
	}
	for _, bad := range [][]uint32{nil, {12, 0}, make([]uint32, mesh.MaxStreams+1)} {
		if _, err := mesh.StreamsLayout(bad...); !errors.Is(err, mesh.ErrInvalidMesh) {
			t.Errorf("StreamsLayout(%v): %v", bad, err)
		}
	}
}
