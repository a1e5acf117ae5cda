package meshlet_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/meshlet"
)

// faultOpts start both arenas small, so the script below grows each of
// them several times.
var faultOpts = meshlet.Options{RowWords: 4, AddressWord: 3,
	Data: arena.Options{InitialElems: 64}, Rows: arena.Options{InitialElems: 4}}

// faultScript drives md with a fixed stream of adds, clones, removes and
// sweeps, calling around before and after each. An operation that fails
// must fail with the device's refusal and leave every batch as it was
// (the model applies only what succeeds); the rest must succeed. It
// returns how many operations failed.
func faultScript(t *testing.T, md *model, around func(after bool)) (failed int) {
	r := rand.New(rand.NewPCG(21, 22))
	for i := range 160 {
		around(false)
		var err error
		switch k := r.IntN(10); {
		case k < 3 && len(md.live) > 0:
			md.remove(r.IntN(len(md.live)))
		case k < 5 && len(md.live) > 0:
			_, err = md.clone(md.live[r.IntN(len(md.live))])
		case k < 6:
			md.sweep(arena.SweepLimits{Moves: 3})
		default:
			n := 1 + r.Uint32N(6)
			_, err = md.add(n*(4+r.Uint32N(12)), n)
		}
		around(true)
		if err != nil {
			if !errors.Is(err, device.ErrOutOfMemory) {
				t.Fatalf("operation %d: %v, want one wrapping device.ErrOutOfMemory", i, err)
			}
			failed++
			md.verify(fmt.Sprintf("operation %d refused", i))
		}
		if i%16 == 0 {
			md.verify(fmt.Sprintf("operation %d", i))
		}
	}
	md.verify("end")
	return failed
}

// Every buffer creation fails in turn, in New and in every growth of
// either arena, and so does every later one in the same operation (the
// arena's retries after compacting): the call returns the error or is
// served by a compaction, no batch changes, nothing leaks, and the manager
// keeps working.
func TestFaultInjection(t *testing.T) {
	// A clean run counts the creations.
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if failed := faultScript(t, newModel(t, dev, faultOpts, 8), func(bool) {}); failed != 0 {
		t.Fatalf("clean run: %d failures", failed)
	}
	creates := dev.Stats().Creates
	if creates < 6 {
		t.Fatalf("clean run made %d buffers: the script grows too little", creates)
	}
	refusals := 0
	for failAt := 1; failAt <= creates; failAt++ {
		t.Run(fmt.Sprint("create", failAt), func(t *testing.T) {
			h, err := host.New(host.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			dev := &failFrom{Device: h, at: failAt}
			if failAt <= 2 { // New's two buffers
				m, err := meshlet.New(dev, faultOpts)
				if !errors.Is(err, device.ErrOutOfMemory) || m != nil {
					t.Fatalf("New: %v, want ErrOutOfMemory", err)
				}
				if st := h.Stats(); st.Buffers != 0 {
					t.Fatalf("New failed with %d buffers alive", st.Buffers)
				}
				return
			}
			md := newModel(t, dev, faultOpts, 8)
			failed := faultScript(t, md, func(after bool) {
				if after {
					h.FailNextCreates(0)
				}
			})
			if st := h.Stats(); st.FailedCreates == 0 || failed > 1 {
				t.Errorf("creation %d: %d failed creations, %d failed operations: want some and at most 1", failAt, st.FailedCreates, failed)
			}
			refusals += failed
			md.m.Release()
			if st := h.Stats(); st.Buffers != 0 {
				t.Errorf("%d buffers alive after Release", st.Buffers)
			}
		})
	}
	if refusals == 0 {
		t.Errorf("no operation was refused: the script never reached a creation compaction could not replace")
	}
	t.Logf("%d creation points, %d refused operations", creates, refusals)
}

// failFrom is a host device whose at-th CreateBuffer call, and every later
// one until the test disarms it, fails with device.ErrOutOfMemory: the
// refusal hits one creation point and every retry the arena makes in the
// same operation.
type failFrom struct {
	*host.Device
	calls, at int
}

func (d *failFrom) CreateBuffer(desc device.BufferDesc) (device.Buffer, error) {
	if d.calls++; d.calls == d.at {
		d.FailNextCreates(1 << 20)
	}
	return d.Device.CreateBuffer(desc)
}
