package mesh_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
)

// faultScene builds two frames on md without faults, then stages a third
// whose Flush needs a buffer at every creation point: a growth of an
// existing slab, a slab of a new layout, a buffer of its own.
func faultScene(t *testing.T, md *model) {
	r := rand.New(rand.NewPCG(10, 10))
	var hs []mesh.Handle
	for range 2 {
		for range 30 {
			hs = append(hs, md.add(t, fixedMesh(r, 12, 1+r.IntN(20), mesh.Uint32, 3*(1+r.IntN(8)))))
		}
		md.flush(t)
	}
	md.remove(t, hs[0])
	md.modify(t, hs[1], fixedMesh(r, 12, 25, mesh.Uint32, 6)) // re-placed
	md.modifyInPlace(t, hs[2], r)                             // rewritten in place
	for range 60 {
		md.add(t, fixedMesh(r, 12, 10+r.IntN(20), mesh.Uint32, 30)) // the stride-12 slab grows
	}
	md.add(t, fixedMesh(r, 20, 5, mesh.Uint16, 6)) // new slabs: 20-byte vertices, uint16 indices
	md.add(t, fixedMesh(r, 24, 200, 0, 0))         // a buffer of its own
	md.verify(t)
}

var faultSettings = mesh.Options{MinSlabBytes: 1 << 10, LargeThresholdBytes: 4 << 10}

// TestFaults fails each buffer creation of the fault frame's Flush in
// turn, and then all of them: the Flush either gets by or returns the
// device's error with nothing live changed, and the next Flush succeeds.
func TestFaults(t *testing.T) {
	// A dry run counts the creations before and during the fault frame.
	dry := testdevice.Host(t, host.Options{})
	md := newModel(t, dry, faultSettings)
	faultScene(t, md)
	before := dry.Stats().Creates
	md.flush(t)
	during := dry.Stats().Creates - before
	if during < 3 {
		t.Fatalf("the fault frame creates %d buffers, want one at each creation point", during)
	}
	for k := 1; k <= during+1; k++ {
		opts := host.Options{FailCreateAt: before + k}
		all := k == during+1
		if all {
			opts = host.Options{}
		}
		dev := testdevice.Host(t, opts)
		md := newModel(t, dev, faultSettings)
		faultScene(t, md)
		if all {
			dev.FailNextCreates(1 << 20)
		}
		snap := md.a.Stats()
		err := md.a.Flush()
		dev.FailNextCreates(0)
		if err != nil {
			if !errors.Is(err, device.ErrOutOfMemory) {
				t.Fatalf("creation %d failed: Flush: %v, want ErrOutOfMemory", k, err)
			}
			md.verify(t) // staged meshes still staged, resident ones intact
			st := md.a.Stats()
			if st.Pending != snap.Pending || st.Meshes != snap.Meshes || st.OwnBuffers != snap.OwnBuffers || st.UsedBytes != snap.UsedBytes {
				t.Fatalf("creation %d failed: state changed: %+v -> %+v", k, snap, st)
			}
		} else if all {
			t.Fatalf("every creation failed, Flush succeeded")
		} else {
			md.flushed()
		}
		if err := dev.Wait(); err != nil {
			t.Fatal(err)
		}
		if live, held := dev.Stats().Buffers, md.a.Stats().Buffers(); live != held {
			t.Fatalf("creation %d failed (Flush: %v): %d buffers alive, the allocator holds %d", k, err, live, held)
		}
		md.flush(t)
		md.verify(t)
		t.Logf("creation %d of %d failed: Flush returned %v", k, during, err)
	}
}

// TestGrowthRefused: when a slab cannot grow and no new slab can be made,
// Flush fails with the device's error and the slab's meshes are intact.
func TestGrowthRefused(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		md := newModel(t, dev, mesh.Options{MinSlabBytes: 256})
		r := rand.New(rand.NewPCG(11, 11))
		for range 10 {
			md.add(t, fixedMesh(r, 8, 1+r.IntN(10), 0, 0))
		}
		md.flush(t)
		for range 40 {
			md.add(t, fixedMesh(r, 8, 1+r.IntN(10), 0, 0))
		}
		hd, ok := dev.(*host.Device)
		if !ok {
			// On a GPU a refusal cannot be forced: the frame just flushes.
			md.flush(t)
			md.verify(t)
			return
		}
		hd.FailNextCreates(1 << 20)
		if err := md.a.Flush(); !errors.Is(err, device.ErrOutOfMemory) {
			t.Fatalf("Flush with every creation refused: %v", err)
		}
		md.verify(t)
		hd.FailNextCreates(0)
		md.flush(t)
		md.verify(t)
	})
}
