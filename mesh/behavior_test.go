package mesh_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
)

// fixedMesh returns a mesh of nv vertices of stride and ni indices of f,
// its bytes drawn from r.
func fixedMesh(r *rand.Rand, stride uint32, nv int, f mesh.IndexFormat, ni int) mesh.Mesh {
	m := mesh.Mesh{VertexStride: stride, Vertices: make([]byte, nv*int(stride)), IndexFormat: f, Indices: make([]byte, ni*int(f))}
	for i := range m.Vertices {
		m.Vertices[i] = byte(r.Uint32())
	}
	for i := range m.Indices {
		m.Indices[i] = byte(r.Uint32())
	}
	return m
}

func TestStagedUntilFlush(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		md := newModel(t, dev, mesh.Options{})
		r := rand.New(rand.NewPCG(3, 3))
		h := md.add(t, fixedMesh(r, 12, 4, mesh.Uint16, 6))
		if st := md.a.Stats(); st.Buffers() != 0 || st.Pending != 1 {
			t.Fatalf("Add created buffers or did not stage: %+v", st)
		}
		if _, _, err := md.a.Slices(h); !errors.Is(err, mesh.ErrNotResident) {
			t.Fatalf("Slices before Flush: %v", err)
		}
		md.verify(t)
		md.flush(t)
		md.verify(t)
		// A resize and a same-size rewrite both stay resident, with the
		// old bytes and ranges until the next Flush.
		md.modify(t, h, fixedMesh(r, 12, 5, mesh.Uint16, 6))
		md.verify(t)
		md.flush(t)
		md.modifyInPlace(t, h, r)
		if !md.a.Resident(h) {
			t.Fatal("same-size Modify made the mesh not resident")
		}
		md.verify(t)
		md.flush(t)
		md.verify(t)
		// A layout change is a resize.
		md.modify(t, h, fixedMesh(r, 20, 3, mesh.Uint32, 6))
		md.verify(t)
		md.flush(t)
		md.verify(t)
		// Removed before its first Flush: nothing is placed.
		h2 := md.add(t, fixedMesh(r, 24, 10, 0, 0))
		md.remove(t, h2)
		md.flush(t)
		md.verify(t)
	})
}

// An array placed where another was keeps zeros, not the old bytes, in the
// padding of its last slot (6-byte vertices and 2-byte indices share 12-
// and 4-byte slots; odd counts leave a slot part empty).
func TestPaddingIsZeroInReusedPlace(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		md := newModel(t, dev, mesh.Options{})
		r := rand.New(rand.NewPCG(9, 9))
		md.add(t, fixedMesh(r, 6, 8, mesh.Uint16, 8)) // keeps old's place off the tail
		old := md.add(t, fixedMesh(r, 6, 4, mesh.Uint16, 4))
		md.flush(t)
		md.remove(t, old)
		md.flush(t)
		md.add(t, fixedMesh(r, 6, 3, mesh.Uint16, 3)) // into old's place
		md.flush(t)
		md.verify(t)
	})
}

// TestOneGrowthPerFrame: however many arrays a frame adds, each slab grows
// at most once in its Flush, and a growth copies only the old buffer's
// used extent.
func TestOneGrowthPerFrame(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	md := newModel(t, dev, mesh.Options{MinSlabBytes: 1 << 10, GrowthFactor: 1.25})
	r := rand.New(rand.NewPCG(4, 4))
	for frame := range 12 {
		before := md.a.Stats()
		for range 100 * (frame + 1) {
			md.add(t, fixedMesh(r, 12, 1+r.IntN(40), mesh.Uint32, 3*(1+r.IntN(20))))
		}
		md.flush(t)
		after := md.a.Stats()
		if grew := after.Growths - before.Growths; grew > uint64(before.Slabs) {
			t.Fatalf("frame %d: %d growths over %d slabs", frame, grew, before.Slabs)
		}
		// A growth copies the used extent of the old buffer (arrays placed
		// in its holes earlier in the same Flush included), never more.
		if copied := after.BytesCopied - before.BytesCopied; copied > before.SlabBytes {
			t.Fatalf("frame %d: growth copied %d bytes of old slabs of %d", frame, copied, before.SlabBytes)
		}
		if frame == 0 && after.Growths != 0 {
			t.Fatalf("first frame grew: new slabs are sized for the frame")
		}
		md.verify(t)
	}
	if md.a.Stats().Growths == 0 {
		t.Fatal("no growth exercised")
	}
}

func TestLargeAndNoBaseVertex(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		r := rand.New(rand.NewPCG(5, 5))
		md := newModel(t, dev, mesh.Options{LargeThresholdBytes: 1200})
		small := md.add(t, fixedMesh(r, 12, 10, mesh.Uint16, 30))
		large := md.add(t, fixedMesh(r, 12, 100, mesh.Uint16, 30)) // 1200 vertex bytes: its own buffer
		md.flush(t)
		md.verify(t)
		vs, is, _ := md.a.Slices(small)
		vl, il, _ := md.a.Slices(large)
		if vl.Buffer == vs.Buffer || vl.StartElem != 0 || vl.Len() != 100 || il.Buffer != is.Buffer {
			t.Fatalf("large vertex array not in a buffer of its own (or its indices not shared): %+v %+v / %+v %+v", vs, is, vl, il)
		}
		if st := md.a.Stats(); st.OwnBuffers != 1 || st.OwnBytes != 1200 || st.Slabs != 2 {
			t.Fatalf("stats %+v", st)
		}
		md.remove(t, large)
		md.flush(t)
		if st := md.a.Stats(); st.OwnBuffers != 0 || st.OwnBytes != 0 {
			t.Fatalf("own buffer kept after Remove: %+v", st)
		}

		nb := newModel(t, dev, mesh.Options{NoBaseVertex: true})
		var hs []mesh.Handle
		for range 5 {
			hs = append(hs, nb.add(t, fixedMesh(r, 6, 5, mesh.Uint16, 9)))
		}
		nb.flush(t)
		nb.verify(t)
		seen := map[device.Buffer]bool{}
		var ib device.Buffer
		for _, h := range hs {
			v, i, _ := nb.a.Slices(h)
			if seen[v.Buffer] || v.StartElem != 0 {
				t.Fatalf("NoBaseVertex: vertex arrays share a buffer or start past 0: %+v", v)
			}
			seen[v.Buffer] = true
			if ib != nil && i.Buffer != ib {
				t.Fatalf("NoBaseVertex: index arrays should still share a slab")
			}
			ib = i.Buffer
		}
		if st := nb.a.Stats(); st.OwnBuffers != 5 || st.Slabs != 1 {
			t.Fatalf("NoBaseVertex stats %+v", st)
		}
	})
}

// TestSlabLimits: a slab at its maximum leaves arrays to a new slab, and a
// slab left empty is released.
func TestSlabLimits(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	r := rand.New(rand.NewPCG(6, 6))
	md := newModel(t, dev, mesh.Options{MinSlabBytes: 256, MaxSlabBytes: 4096})
	var hs []mesh.Handle
	for range 6 {
		for range 20 {
			hs = append(hs, md.add(t, fixedMesh(r, 8, 1+r.IntN(60), 0, 0)))
		}
		md.flush(t)
		md.verify(t)
	}
	st := md.a.Stats()
	if st.Slabs < 3 || st.SlabBytes > uint64(st.Slabs)*4096 {
		t.Fatalf("slabs not capped at 4 KiB: %+v", st)
	}
	for _, h := range hs {
		md.remove(t, h)
		md.verify(t)
	}
	md.flush(t)
	if st := md.a.Stats(); st.Slabs != 0 || st.SlabBytes != 0 || st.SlabsReleased != st.SlabsCreated {
		t.Fatalf("empty slabs kept: %+v", st)
	}
	// A device with small buffers clamps the slabs.
	small := testdevice.Host(t, host.Options{Limits: device.Limits{MaxBufferSize: 1 << 12}})
	a, err := mesh.New(small, mesh.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	if s := a.Options(); s.MaxSlabBytes != 1<<12 || s.MinSlabBytes != 1<<12 || s.LargeThresholdBytes != 1<<12 {
		t.Fatalf("options not clamped to the device: %+v", s)
	}
}

// TestModifyEveryFrame: meshes modified every frame leak nothing.
func TestModifyEveryFrame(t *testing.T) {
	for _, c := range []struct {
		name    string
		resize  bool
		maxDiff func(first, last mesh.Stats) bool
	}{
		// Same sizes: rewritten in place, nothing placed again.
		{"same-size", false, func(f, l mesh.Stats) bool {
			return f.Buffers() == l.Buffers() && f.SlabBytes == l.SlabBytes && f.UsedBytes == l.UsedBytes && l.Moves == 0
		}},
		// New sizes every frame, with a sweep a frame: the slabs settle.
		{"resized", true, func(f, l mesh.Stats) bool {
			return l.Buffers() <= f.Buffers() && l.SlabBytes <= f.SlabBytes
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev := testdevice.Host(t, host.Options{})
			md := newModel(t, dev, mesh.Options{MinSlabBytes: 4 << 10})
			r := rand.New(rand.NewPCG(7, 7))
			var hs []mesh.Handle
			for range 200 {
				hs = append(hs, md.add(t, fixedMesh(r, 24, 4+r.IntN(30), mesh.Uint16, 3*(1+r.IntN(20)))))
			}
			md.flush(t)
			var first mesh.Stats
			for frame := range 1000 {
				for k := range 20 {
					h := hs[(frame*20+k)%len(hs)]
					if c.resize {
						md.modify(t, h, fixedMesh(r, 24, 4+r.IntN(30), mesh.Uint16, 3*(1+r.IntN(20))))
					} else {
						md.modifyInPlace(t, h, r)
					}
				}
				md.flush(t)
				if err := md.a.Sweep(arena.SweepLimits{}); err != nil {
					t.Fatal(err)
				}
				md.a.Changes(nil)
				if frame == 100 {
					first = md.a.Stats()
				}
				if frame%100 == 99 {
					md.verify(t)
				}
			}
			last := md.a.Stats()
			t.Logf("frame 100: %d buffers, %d slab bytes (%d used); frame 1000: %d buffers, %d slab bytes (%d used), %d growths, %d moves",
				first.Buffers(), first.SlabBytes, first.UsedBytes, last.Buffers(), last.SlabBytes, last.UsedBytes, last.Growths, last.Moves)
			if !c.maxDiff(first, last) {
				t.Fatalf("grew between frame 100 and 1000: %+v -> %+v", first, last)
			}
		})
	}
}

// TestSweepReportsMoves: a sweep closes the holes removals leave, and every
// mesh whose range moved is reported, once, with its new slices.
func TestSweepReportsMoves(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		md := newModel(t, dev, mesh.Options{})
		r := rand.New(rand.NewPCG(8, 8))
		var hs []mesh.Handle
		for range 60 {
			hs = append(hs, md.add(t, fixedMesh(r, 6, 1+r.IntN(20), mesh.Uint16, 1+r.IntN(30))))
		}
		md.flush(t)
		before := map[mesh.Handle][2]mesh.Slice{}
		for k, h := range hs {
			if k%2 == 0 {
				md.remove(t, h)
				continue
			}
			v, i, _ := md.a.Slices(h)
			before[h] = [2]mesh.Slice{v, i}
		}
		moved := map[mesh.Handle]bool{}
		for range 100 {
			if err := md.a.Sweep(arena.SweepLimits{Moves: 3}); err != nil {
				t.Fatal(err)
			}
			md.verify(t)
			type key struct {
				h    mesh.Handle
				part uint8
			}
			once := map[key]bool{}
			for _, c := range md.a.Changes(nil) {
				if c.Kind != memory.Moved {
					continue
				}
				k := key{mesh.HandleOf(c), c.Part}
				if once[k] {
					t.Fatalf("array %v listed twice in one Changes", k)
				}
				once[k], moved[k.h] = true, true
			}
		}
		changed := 0
		for h, b := range before {
			v, i, _ := md.a.Slices(h)
			if v.StartElem != b[0].StartElem || i.StartElem != b[1].StartElem {
				changed++
				if !moved[h] {
					t.Fatalf("mesh %v moved unreported", h)
				}
			}
		}
		if changed == 0 || changed != len(moved) {
			t.Fatalf("%d meshes moved, %d reported", changed, len(moved))
		}
		st := md.a.Stats()
		if st.SlabBytes-st.UsedBytes != 0 && st.Moves == 0 {
			t.Fatalf("nothing swept: %+v", st)
		}
	})
}

func TestRelease(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	md := newModel(t, dev, mesh.Options{LargeThresholdBytes: 64})
	r := rand.New(rand.NewPCG(9, 9))
	h := md.add(t, fixedMesh(r, 12, 100, mesh.Uint32, 3))
	md.add(t, fixedMesh(r, 12, 1, mesh.Uint32, 3))
	md.flush(t)
	md.a.Release()
	md.a.Release()
	var nilA *mesh.Allocator
	nilA.Release()
	for name, err := range map[string]error{
		"Flush":   md.a.Flush(),
		"Sweep":   md.a.Sweep(arena.SweepLimits{}),
		"Compact": md.a.Compact(),
		"Remove":  md.a.Remove(h),
		"Modify":  md.a.Modify(h, mesh.Mesh{}),
	} {
		if !errors.Is(err, device.ErrReleased) {
			t.Errorf("%s after Release: %v", name, err)
		}
	}
	if _, err := md.a.Add(mesh.Mesh{}); !errors.Is(err, device.ErrReleased) {
		t.Errorf("Add after Release: %v", err)
	}
	if _, _, err := md.a.Slices(h); !errors.Is(err, device.ErrReleased) {
		t.Errorf("Slices after Release: %v", err)
	}
	dev.Wait()
	if st := dev.Stats(); st.Buffers != 0 {
		t.Fatalf("%d buffers alive after Release", st.Buffers)
	}
}

// TestMaxMeshesPerSlab: a slab out of allocation nodes leaves the arrays
// it cannot take to other slabs.
func TestMaxMeshesPerSlab(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	md := newModel(t, dev, mesh.Options{MaxMeshesPerSlab: 8})
	r := rand.New(rand.NewPCG(12, 12))
	var hs []mesh.Handle
	for frame := range 5 {
		for range 10 + 7*frame {
			hs = append(hs, md.add(t, fixedMesh(r, 16, 1+r.IntN(8), 0, 0)))
		}
		for k := frame; k < len(hs); k += 9 {
			md.remove(t, hs[k])
			hs = append(hs[:k], hs[k+1:]...)
		}
		md.flush(t)
		md.verify(t)
	}
	if st := md.a.Stats(); st.Slabs < 10 {
		t.Fatalf("%d meshes in %d slabs of at most 8 arrays", st.Meshes, st.Slabs)
	}
}

// TestManyLayoutsEachFlush: frames whose meshes come in many layouts
// (vertex strides below and above the 256 bytes whose groups Flush finds
// in a table rather than a map, odd and even ones, both index formats),
// first staged in a different order each frame, some removed to leave
// holes that the next frame's arrays fill out of offset order, some
// rewritten in place: every mesh's bytes are where Slices says after each
// Flush, and each layout has slabs of its own.
func TestManyLayoutsEachFlush(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		md := newModel(t, dev, mesh.Options{MinSlabBytes: 4 << 10})
		r := rand.New(rand.NewPCG(21, 21))
		strides := []uint32{6, 12, 255, 256, 257, 300, 1028, 7}
		var live []mesh.Handle
		for frame := range 8 {
			r.Shuffle(len(strides), func(i, j int) { strides[i], strides[j] = strides[j], strides[i] })
			for k := 0; k < len(live); k++ {
				switch r.IntN(4) {
				case 0:
					md.remove(t, live[k])
					live = slices.Delete(live, k, k+1)
					k--
				case 1:
					md.modifyInPlace(t, live[k], r)
				}
			}
			for i := range 40 {
				f := mesh.Uint16
				if i%3 == 0 {
					f = mesh.Uint32
				}
				live = append(live, md.add(t, fixedMesh(r, strides[i%len(strides)], 1+r.IntN(24), f, 1+r.IntN(60))))
			}
			md.flush(t)
			md.verify(t)
			if st := md.a.Stats(); st.Slabs < len(strides)+2 {
				t.Fatalf("frame %d: %d slabs for %d layouts", frame, st.Slabs, len(strides)+2)
			}
		}
	})
}

// TestFlushCompactsWhatItPlaced: a Flush places small arrays in a
// slab's holes, then reserves room for a large one that no hole holds
// while the free space would (fragmented), with the slab's sweep episode
// already armed and grown by the Flush before: the Reserve compacts,
// moving the arrays this Flush placed before they are uploaded. They
// must be uploaded where they are now. Every byte is read back after
// every Flush, on every backend.
func TestFlushCompactsWhatItPlaced(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		md := newModel(t, dev, mesh.Options{MinSlabBytes: 16 << 10, GrowthFactor: 2})
		r := rand.New(rand.NewPCG(15, 15))
		vertices := func(n int) mesh.Mesh { return fixedMesh(r, 16, n, mesh.Uint16, 0) }
		// A full slab of 64 arrays of 16 slots, every other one removed:
		// 32 holes of 16 slots.
		var hs []mesh.Handle
		for range 64 {
			hs = append(hs, md.add(t, vertices(16)))
		}
		md.flush(t)
		for i := 0; i < len(hs); i += 2 {
			md.remove(t, hs[i])
		}
		md.verify(t)
		for frame := range 2 {
			// Small arrays for the holes, and one that no hole holds.
			for range 4 {
				md.add(t, vertices(5+frame))
			}
			md.add(t, vertices(200))
			before := md.a.Stats()
			md.flush(t)
			md.verify(t)
			after := md.a.Stats()
			if frame == 1 && (after.Compactions == before.Compactions || after.MeshesMoved == before.MeshesMoved) {
				t.Fatalf("the second Flush did not compact: %+v, then %+v", before, after)
			}
		}
	})
}

// TestGrowAhead: with Options.GrowAhead, slabs grow into buffers made
// ahead of their growth off the caller's goroutine on webgpu (a
// device.Preparer), as they grew on the host device, and every mesh reads
// back intact after each frame.
func TestGrowAhead(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		md := newModel(t, dev, mesh.Options{MinSlabBytes: 1 << 10, GrowthFactor: 1.5, GrowAhead: 0.3})
		r := rand.New(rand.NewPCG(5, 5))
		prepared := false
		for frame := range 10 {
			for range 40 * (frame + 1) {
				md.add(t, fixedMesh(r, 12, 1+r.IntN(40), mesh.Uint32, 3*(1+r.IntN(20))))
			}
			md.flush(t)
			md.verify(t)
			st := md.a.Stats()
			prepared = prepared || st.PreparedBytes > 0
			// Memory shows what is prepared, as buffers of their own.
			var shown uint64
			for _, b := range md.a.Memory() {
				if b.Kind == memory.PreparedBuffer {
					shown += b.CapacityBytes
				}
			}
			if shown != st.PreparedBytes {
				t.Fatalf("frame %d: Memory shows %d bytes prepared, Stats %d", frame, shown, st.PreparedBytes)
			}
		}
		if st := md.a.Stats(); st.Growths == 0 || prepared != testdevice.PreparesAhead(dev) {
			t.Fatalf("growths %d, buffers prepared ahead %v: the test exercised nothing", st.Growths, prepared)
		}
		if _, err := mesh.New(dev, mesh.Options{GrowAhead: 1}); err == nil {
			t.Fatal("GrowAhead 1 accepted")
		}
	})
}
