package mesh_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
)

// model is what a test expects an allocator to hold: every live mesh's
// data, and whether it has been flushed since it last changed shape.
type model struct {
	dev    device.Device
	a      *mesh.Allocator
	meshes map[mesh.Handle]*entry
}

type entry struct {
	m        mesh.Mesh // as last given to Add or Modify
	onDevice mesh.Mesh // as the last successful Flush uploaded it
	resident bool      // expected Resident
}

func newModel(t testing.TB, dev device.Device, s mesh.Options) *model {
	t.Helper()
	a, err := mesh.New(dev, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Release)
	return &model{dev: dev, a: a, meshes: map[mesh.Handle]*entry{}}
}

func (md *model) add(t testing.TB, m mesh.Mesh) mesh.Handle {
	t.Helper()
	h, err := md.a.Add(m)
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	md.meshes[h] = &entry{m: m}
	return h
}

func (md *model) modify(t testing.TB, h mesh.Handle, m mesh.Mesh) {
	t.Helper()
	if err := md.a.Modify(h, m); err != nil {
		t.Fatalf("Modify: %v", err)
	}
	// A resident mesh stays resident, drawing e.onDevice, until the
	// Flush that takes the new data, whatever its shape.
	md.meshes[h].m = m
}

// modifyInPlace modifies h to new bytes of the same shape.
func (md *model) modifyInPlace(t testing.TB, h mesh.Handle, r *rand.Rand) {
	t.Helper()
	old := md.meshes[h].m
	m := old
	m.Vertices, m.Indices = make([]byte, len(old.Vertices)), make([]byte, len(old.Indices))
	for i := range m.Vertices {
		m.Vertices[i] = byte(r.Uint32())
	}
	for i := range m.Indices {
		m.Indices[i] = byte(r.Uint32())
	}
	md.modify(t, h, m)
}

// shape is what decides whether a modification keeps its ranges.
func shape(m mesh.Mesh) [4]int {
	s := [4]int{len(m.Vertices), 0, len(m.Indices), 0}
	if len(m.Vertices) > 0 {
		s[1] = int(m.VertexStride)
	}
	if len(m.Indices) > 0 {
		s[3] = int(m.IndexFormat)
	}
	return s
}

func (md *model) remove(t testing.TB, h mesh.Handle) {
	t.Helper()
	if err := md.a.Remove(h); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	delete(md.meshes, h)
}

func (md *model) flush(t testing.TB) {
	t.Helper()
	if err := md.a.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	md.flushed()
}

// flushed records a successful Flush in the model.
func (md *model) flushed() {
	for _, e := range md.meshes {
		e.resident, e.onDevice = true, e.m
	}
}

// verify checks the allocator's bookkeeping, then every resident mesh's
// bytes on the device, and that no two ranges overlap.
func (md *model) verify(t testing.TB) {
	t.Helper()
	if err := mesh.Check(md.a); err != nil {
		t.Fatalf("check: %v", err)
	}
	if n := md.a.Len(); n != len(md.meshes) {
		t.Fatalf("Len %d, model %d", n, len(md.meshes))
	}
	type span struct{ lo, hi uint64 }
	used := map[device.Buffer][]span{}
	for h, e := range md.meshes {
		v, i, err := md.a.Slices(h)
		if !e.resident {
			if !errors.Is(err, mesh.ErrNotResident) || md.a.Resident(h) {
				t.Fatalf("mesh %v: Slices err %v before its Flush, want ErrNotResident", h, err)
			}
			continue
		}
		if err != nil || !md.a.Resident(h) {
			t.Fatalf("mesh %v: Slices: %v", h, err)
		}
		for _, c := range []struct {
			s      mesh.Slice
			data   []byte
			elem   uint32
			layout mesh.Layout
		}{
			{v, e.onDevice.Vertices, e.onDevice.VertexStride, mesh.VertexLayout(e.onDevice.VertexStride)},
			{i, e.onDevice.Indices, uint32(e.onDevice.IndexFormat), mesh.IndexLayout(e.onDevice.IndexFormat)},
		} {
			if len(c.data) == 0 {
				if c.s != (mesh.Slice{}) {
					t.Fatalf("mesh %v: empty array has slice %+v", h, c.s)
				}
				continue
			}
			if c.s.Buffer == nil || uint64(c.s.Len())*uint64(c.elem) != uint64(len(c.data)) {
				t.Fatalf("mesh %v: slice %+v for %d bytes of %d-byte elements", h, c.s, len(c.data), c.elem)
			}
			lo := uint64(c.s.StartElem) * uint64(c.elem)
			if lo%4 != 0 {
				t.Fatalf("mesh %v: range starts at byte %d, not 4-aligned", h, lo)
			}
			// The range's whole slots: the array, then zeros to the end of
			// its last slot, whatever the place held before.
			got := make([]byte, c.layout.Slots(c.s.Len())*c.layout.SlotBytes())
			if err := md.dev.ReadBuffer(c.s.Buffer, lo, got); err != nil {
				t.Fatalf("mesh %v: read: %v", h, err)
			}
			if !bytes.Equal(got[:len(c.data)], c.data) {
				t.Fatalf("mesh %v: bytes differ at element range [%d, %d)", h, c.s.StartElem, c.s.EndElem)
			}
			if pad := got[len(c.data):]; !bytes.Equal(pad, make([]byte, len(pad))) {
				t.Fatalf("mesh %v: padding of the last slot is %x, want zeros", h, pad)
			}
			used[c.s.Buffer] = append(used[c.s.Buffer], span{lo, lo + uint64(len(c.data))})
		}
	}
	for _, spans := range used {
		slices.SortFunc(spans, func(x, y span) int { return int(x.lo) - int(y.lo) })
		for k := 1; k < len(spans); k++ {
			if spans[k].lo < spans[k-1].hi {
				t.Fatalf("ranges overlap: %v and %v", spans[k-1], spans[k])
			}
		}
	}
}

// randMesh returns a small mesh of a layout picked by r.
func randMesh(r *rand.Rand, maxVerts int) mesh.Mesh {
	strides := []uint32{12, 20, 24, 6, 3, 8}
	stride := strides[r.IntN(len(strides))]
	nv := r.IntN(maxVerts + 1)
	m := mesh.Mesh{VertexStride: stride, Vertices: make([]byte, nv*int(stride))}
	for i := range m.Vertices {
		m.Vertices[i] = byte(r.Uint32())
	}
	if r.IntN(4) > 0 {
		m.IndexFormat = mesh.Uint16
		if r.IntN(2) == 0 {
			m.IndexFormat = mesh.Uint32
		}
		m.Indices = make([]byte, r.IntN(3*maxVerts+1)*int(m.IndexFormat))
		for i := range m.Indices {
			m.Indices[i] = byte(r.Uint32())
		}
	}
	return m
}

func TestLayoutSlots(t *testing.T) {
	streams := func(strides ...uint32) Layout {
		l, err := mesh.StreamsLayout(strides...)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, c := range []struct {
		l                Layout
		perSlot, slotB   uint32
		elems, wantSlots uint32
	}{
		{mesh.VertexLayout(12), 1, 12, 5, 5},
		{mesh.VertexLayout(20), 1, 20, 1, 1},
		{mesh.VertexLayout(6), 2, 12, 5, 3},
		{mesh.VertexLayout(3), 4, 12, 5, 2},
		{mesh.VertexLayout(1), 4, 4, 4, 1},
		{mesh.VertexLayout(10), 2, 20, 0, 0},
		{mesh.IndexLayout(mesh.Uint16), 2, 4, 3, 2},
		{mesh.IndexLayout(mesh.Uint32), 1, 4, 3, 3},
		// Separate streams: the slot suits every stream's stride.
		{streams(12, 8), 1, 12, 5, 5},
		{streams(12, 6), 2, 24, 5, 3},
		{streams(6, 12), 2, 12, 5, 3},
		{streams(12, 3, 2), 4, 48, 5, 2},
		{streams(2, 4, 4, 8, 8, 8, 8, 1), 4, 8, 9, 3},
	} {
		if got := c.l.ElemsPerSlot(); got != c.perSlot {
			t.Errorf("%v: ElemsPerSlot %d, want %d", c.l, got, c.perSlot)
		}
		if got := c.l.SlotBytes(); got != c.slotB || got%4 != 0 {
			t.Errorf("%v: SlotBytes %d, want %d", c.l, got, c.slotB)
		}
		if got := c.l.Slots(c.elems); got != c.wantSlots {
			t.Errorf("%v: Slots(%d) = %d, want %d", c.l, c.elems, got, c.wantSlots)
		}
	}
}

type Layout = mesh.Layout

func TestSettings(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	maxBuf := dev.Limits().MaxBufferSize
	for _, c := range []struct {
		name string
		in   mesh.Options
		err  error
		want func(mesh.Options) bool
	}{
		{"defaults", mesh.Options{}, nil, func(s mesh.Options) bool {
			return s.MinSlabBytes == 1<<20 && s.MaxSlabBytes == min(512<<20, maxBuf) &&
				s.LargeThresholdBytes == min(256<<20, maxBuf) && s.GrowthFactor == 1.5
		}},
		{"growth 1", mesh.Options{GrowthFactor: 1}, mesh.ErrInvalidOptions, nil},
		{"growth negative", mesh.Options{GrowthFactor: -2}, mesh.ErrInvalidOptions, nil},
		{"min above max", mesh.Options{MinSlabBytes: 2 << 20, MaxSlabBytes: 1 << 20}, mesh.ErrInvalidOptions, nil},
		{"max tiny", mesh.Options{MinSlabBytes: 1, MaxSlabBytes: 2}, mesh.ErrInvalidOptions, nil},
		{"few meshes", mesh.Options{MaxMeshesPerSlab: 2}, mesh.ErrInvalidOptions, nil},
		{"too many meshes", mesh.Options{MaxMeshesPerSlab: arena.MaxAllocsLimit + 1}, mesh.ErrInvalidOptions, nil},
		{"bad usage", mesh.Options{Usage: device.MapRead}, mesh.ErrInvalidOptions, nil},
		// Slab options arena.New would refuse at the first Flush.
		{"guard over 1 MiB", mesh.Options{GuardBytes: 1<<20 + 4}, arena.ErrInvalidOptions, nil},
		{"guard max", mesh.Options{GuardBytes: math.MaxUint32}, arena.ErrInvalidOptions, nil},
		{"workers negative", mesh.Options{Workers: -1}, arena.ErrInvalidOptions, nil},
		{"guard fills a slab", mesh.Options{GuardBytes: 64 << 10, MinSlabBytes: 4 << 10, MaxSlabBytes: 64 << 10}, arena.ErrInvalidOptions, nil},
		{"guard", mesh.Options{GuardBytes: 60 << 10, MinSlabBytes: 4 << 10, MaxSlabBytes: 64 << 10}, nil, func(s mesh.Options) bool { return s.GuardBytes == 60<<10 }},
		{"clamped", mesh.Options{MinSlabBytes: 8 << 30, MaxSlabBytes: 16 << 30, LargeThresholdBytes: 32 << 30}, nil, func(s mesh.Options) bool {
			return s.MaxSlabBytes == maxBuf && s.MinSlabBytes == maxBuf && s.LargeThresholdBytes == maxBuf
		}},
		{"threshold under max", mesh.Options{LargeThresholdBytes: 4096}, nil, func(s mesh.Options) bool { return s.LargeThresholdBytes == 4096 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := mesh.New(dev, c.in)
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Fatalf("New: %v, want %v", err, c.err)
			}
			if err != nil && !errors.Is(err, mesh.ErrInvalidOptions) {
				t.Fatalf("New: %v, want mesh.ErrInvalidOptions too", err)
			}
			if err == nil {
				defer a.Release()
				if !c.want(a.Options()) {
					t.Fatalf("options %+v", a.Options())
				}
			}
		})
	}
	if _, err := mesh.New(nil, mesh.Options{}); !errors.Is(err, mesh.ErrInvalidOptions) {
		t.Fatalf("nil device: %v", err)
	}
}

func TestInvalidMesh(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	md := newModel(t, dev, mesh.Options{})
	good := md.add(t, mesh.Mesh{VertexStride: 12, Vertices: make([]byte, 36)})
	for _, c := range []struct {
		name string
		m    mesh.Mesh
		text string // in the error
	}{
		{"zero stride", mesh.Mesh{Vertices: make([]byte, 12)}, ""},
		{"partial vertex", mesh.Mesh{VertexStride: 12, Vertices: make([]byte, 13)}, ""},
		{"bad index format", mesh.Mesh{IndexFormat: 3, Indices: make([]byte, 6)}, "IndexFormat 3 bytes (want mesh.Uint16 or mesh.Uint32)"},
		// It said "index format IndexFormat(0)".
		{"no index format", mesh.Mesh{Indices: make([]byte, 4)}, "4 index bytes and no IndexFormat (want mesh.Uint16 or mesh.Uint32)"},
		{"partial index", mesh.Mesh{IndexFormat: mesh.Uint32, Indices: make([]byte, 6)}, ""},
	} {
		_, err := md.a.Add(c.m)
		if !errors.Is(err, mesh.ErrInvalidMesh) {
			t.Errorf("%s: Add: %v, want ErrInvalidMesh", c.name, err)
		} else if !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: Add: %q, want it to say %q", c.name, err, c.text)
		}
		if err := md.a.Modify(good, c.m); !errors.Is(err, mesh.ErrInvalidMesh) {
			t.Errorf("%s: Modify: %v, want ErrInvalidMesh", c.name, err)
		}
		md.verify(t)
	}
	big := mesh.Mesh{VertexStride: 4, Vertices: make([]byte, dev.Limits().MaxBufferSize+4)}
	if _, err := md.a.Add(big); !errors.Is(err, mesh.ErrInvalidMesh) || !errors.Is(err, device.ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
	// Empty data is valid: a mesh with no ranges.
	for _, m := range []mesh.Mesh{{}, {VertexStride: 12}, {IndexFormat: 9}, {VertexStride: 8, Vertices: make([]byte, 16)}, {IndexFormat: mesh.Uint16, Indices: make([]byte, 6)}} {
		md.add(t, m)
	}
	md.flush(t)
	md.verify(t)
	for _, h := range []mesh.Handle{{}, good} {
		if h == good {
			md.remove(t, h)
		}
		for name, err := range map[string]error{
			"Remove": md.a.Remove(h),
			"Modify": md.a.Modify(h, mesh.Mesh{}),
		} {
			if !errors.Is(err, mesh.ErrInvalidHandle) {
				t.Errorf("%s(%v): %v, want ErrInvalidHandle", name, h, err)
			}
		}
		if _, _, err := md.a.Slices(h); !errors.Is(err, mesh.ErrInvalidHandle) {
			t.Errorf("Slices(%v): %v", h, err)
		}
	}
	md.verify(t)
}

func TestBasics(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		md := newModel(t, dev, mesh.Options{MinSlabBytes: 1024})
		r := rand.New(rand.NewPCG(1, 2))
		var hs []mesh.Handle
		for range 50 {
			hs = append(hs, md.add(t, randMesh(r, 40)))
			md.verify(t)
		}
		md.flush(t)
		md.verify(t)
		for k, h := range hs[:20] {
			switch k % 3 {
			case 0:
				md.remove(t, h)
			case 1:
				md.modify(t, h, randMesh(r, 40))
			case 2:
				old := md.meshes[h].m
				m := randMesh(r, 0)
				m.VertexStride, m.Vertices = old.VertexStride, bytes.Repeat([]byte{byte(k)}, len(old.Vertices))
				m.IndexFormat, m.Indices = old.IndexFormat, bytes.Repeat([]byte{byte(k + 1)}, len(old.Indices))
				v0, i0, _ := md.a.Slices(h)
				md.modify(t, h, m)
				md.flush(t)
				v1, i1, _ := md.a.Slices(h)
				if v0.StartElem != v1.StartElem || v0.EndElem != v1.EndElem || i0.StartElem != i1.StartElem || i0.EndElem != i1.EndElem {
					t.Fatalf("same-size modify moved: %+v %+v -> %+v %+v", v0, i0, v1, i1)
				}
			}
			md.verify(t)
		}
		md.flush(t)
		md.verify(t)
		if err := md.a.Compact(); err != nil {
			t.Fatal(err)
		}
		md.verify(t)
		for h := range md.meshes {
			md.remove(t, h)
		}
		md.flush(t)
		md.verify(t)
		if st := md.a.Stats(); st.Buffers() != 0 || st.SlabBytes != 0 {
			t.Fatalf("empty allocator holds %d buffers, %d bytes", st.Buffers(), st.SlabBytes)
		}
	})
}
