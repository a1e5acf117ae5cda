package meshlet_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/budget"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/meshlet"
	"github.com/gpumem/gpumem/staging"
)

// addBatches adds several batches of the given sizes (data words and
// meshlets each) in one AddBatches call, checks its notifications, and
// records them in the model on success. On error it checks that nothing
// was added: the handle count, the sums, and the returned slice.
func (md *model) addBatches(sizes [][2]uint32) ([]meshlet.BatchHandle, error) {
	md.t.Helper()
	ws := make([]want, len(sizes))
	bs := make([]meshlet.Batch, len(sizes))
	for i, s := range sizes {
		ws[i] = md.makeBatch(s[0], s[1])
		bs[i] = meshlet.Batch{Data: ws[i].data, Rows: ws[i].rows}
	}
	before := md.m.Stats()
	md.start()
	dst := []meshlet.BatchHandle{{}}
	got, err := md.m.AddBatches(dst, bs)
	md.finish("add batches")
	if err != nil {
		after := md.m.Stats()
		if len(got) != 1 || after.Batches != before.Batches || after.DataWords != before.DataWords ||
			after.Meshlets != before.Meshlets || after.Data.Allocations != before.Data.Allocations ||
			after.Rows.Allocations != before.Rows.Allocations {
			md.t.Fatalf("failed AddBatches (%v) returned %d handles, left %+v, was %+v", err, len(got), after, before)
		}
		return nil, err
	}
	if len(got) != 1+len(sizes) {
		md.t.Fatalf("AddBatches returned %d handles for %d batches", len(got)-1, len(sizes))
	}
	for i, h := range got[1:] {
		if _, dup := md.batch[h]; dup {
			md.t.Fatalf("AddBatches returned %v, live already", h)
		}
		md.batch[h] = ws[i]
		md.pos[h] = len(md.live)
		md.live = append(md.live, h)
	}
	return got[1:], nil
}

// addBatchOpts are small arenas, so AddBatches grows and compacts them
// inside one call; variants round to bins and put guard margins between
// allocations.
func addBatchOpts() map[string]meshlet.Options {
	base := meshlet.Options{RowWords: 4, AddressWord: 1,
		Data: arena.Options{InitialElems: 256}, Rows: arena.Options{InitialElems: 16}}
	bins := base
	bins.Data.RoundToBins, bins.Rows.RoundToBins = true, true
	guards := bins
	guards.RowWords, guards.AddressWord = 3, 2
	guards.Data.GuardBytes, guards.Rows.GuardBytes = 20, 8
	return map[string]meshlet.Options{"exact": base, "bins": bins, "guards": guards}
}

// The same batches added one by one with Add and all at once with
// AddBatches read back the same, word for word, bin rounding and guard
// margins included; AddBatches grows each arena at most once a call and
// coalesces its writes. Later rounds free batches first, so the
// allocations of a round fill holes and compact; then every live batch's
// words must match.
func TestAddBatchesMatchesAdd(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		for name, opts := range addBatchOpts() {
			t.Run(name, func(t *testing.T) {
				one, all := newModel(t, dev, opts, 5), newModel(t, dev, opts, 5)
				r := rand.New(rand.NewPCG(3, 4))
				for round := range 6 {
					if round > 0 { // free the same third of both
						for i := len(one.live) - 1; i >= 0; i -= 3 {
							one.remove(i)
							all.remove(i)
						}
					}
					sizes := make([][2]uint32, 1+r.IntN(40))
					for i := range sizes {
						n := 1 + r.Uint32N(9)
						sizes[i] = [2]uint32{n*(2+r.Uint32N(20)) - r.Uint32N(2), n}
					}
					var hs []meshlet.BatchHandle
					for _, s := range sizes {
						h, err := one.add(s[0], s[1])
						if err != nil {
							t.Fatal(err)
						}
						hs = append(hs, h)
					}
					before := all.m.Stats()
					if _, err := all.addBatches(sizes); err != nil {
						t.Fatal(err)
					}
					after := all.m.Stats()
					if after.Data.Growths > before.Data.Growths+1 || after.Rows.Growths > before.Rows.Growths+1 {
						t.Fatalf("round %d: AddBatches grew the arenas %d and %d times", round,
							after.Data.Growths-before.Data.Growths, after.Rows.Growths-before.Rows.Growths)
					}
					one.verify(fmt.Sprint("one by one, round ", round))
					all.verify(fmt.Sprint("together, round ", round))
					if len(hs) != len(sizes) {
						t.Fatal("lost a batch")
					}
				}
				so, sa := one.m.Stats(), all.m.Stats()
				t.Logf("%d writes one by one, %d together; %d and %d growths", so.Writes, sa.Writes,
					so.Data.Growths+so.Rows.Growths, sa.Data.Growths+sa.Rows.Growths)
				if sa.Writes*2 > so.Writes {
					t.Errorf("AddBatches made %d writes for what Add made in %d: runs not coalesced", sa.Writes, so.Writes)
				}
			})
		}
	})
}

// After a first call, AddBatches of as many batches allocates nothing
// (its fill functions are kept), when the arenas neither grow nor compact.
func TestAddBatchesAllocs(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	m, err := meshlet.New(dev, meshlet.Options{RowWords: 4, AddressWord: 0,
		Data: arena.Options{InitialElems: 1 << 16}, Rows: arena.Options{InitialElems: 1 << 12}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	batches := make([]meshlet.Batch, 50)
	for i := range batches {
		batches[i] = meshlet.Batch{Data: make([]uint32, 10+i), Rows: []uint32{0, 1, 2, 3, 4, 5, 6, 7}}
	}
	hs := make([]meshlet.BatchHandle, 0, len(batches))
	round := func() {
		if hs, err = m.AddBatches(hs[:0], batches); err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			if err := m.Remove(h); err != nil {
				t.Fatal(err)
			}
		}
	}
	round()
	if n := testing.AllocsPerRun(10, round); n != 0 {
		t.Errorf("%v allocations a call", n)
	}
}

// Invalid input is refused before anything is allocated, naming the
// batch; nothing changes, and the manager keeps working.
func TestAddBatchesBadInput(t *testing.T) {
	md := newModel(t, openHost(t), meshlet.Options{RowWords: 4, AddressWord: 1}, 1)
	if _, err := md.addBatches([][2]uint32{{40, 4}, {8, 2}}); err != nil {
		t.Fatal(err)
	}
	good := md.makeBatch(16, 2)
	for _, c := range []struct {
		name string
		bad  meshlet.Batch
		err  error
	}{
		{"no data", meshlet.Batch{Rows: good.rows}, meshlet.ErrInvalidBatch},
		{"no rows", meshlet.Batch{Data: good.data}, meshlet.ErrInvalidBatch},
		{"part of a row", meshlet.Batch{Data: good.data, Rows: good.rows[:5]}, meshlet.ErrInvalidBatch},
		{"address past the data", meshlet.Batch{Data: good.data, Rows: []uint32{0, 17, 0, 0}}, meshlet.ErrInvalidAddress},
		{"wrapping address", meshlet.Batch{Data: good.data, Rows: []uint32{0, 1<<32 - 1, 0, 0}}, meshlet.ErrInvalidAddress},
	} {
		before := md.m.Stats()
		dst := make([]meshlet.BatchHandle, 2, 8)
		got, err := md.m.AddBatches(dst, []meshlet.Batch{{Data: good.data, Rows: good.rows}, c.bad, {Data: good.data, Rows: good.rows}})
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), "batch 1 of 3") {
			t.Errorf("%s: %v, want %v naming batch 1 of 3", c.name, err, c.err)
		}
		if len(got) != 2 {
			t.Errorf("%s: returned %d handles, want dst's 2", c.name, len(got))
		}
		if after := md.m.Stats(); after != before {
			t.Errorf("%s: a refused AddBatches changed the stats", c.name)
		}
	}
	// An address equal to the data's length is accepted, as by Add.
	if _, err := md.m.AddBatches(nil, []meshlet.Batch{{Data: good.data, Rows: []uint32{0, 16, 0, 0}}}); err != nil {
		t.Errorf("an empty meshlet at the end: %v", err)
	}
	if got, err := md.m.AddBatches(nil, nil); err != nil || got != nil {
		t.Errorf("no batches: %v, %v", got, err)
	}
	md.m.Release()
	if _, err := md.m.AddBatches(nil, []meshlet.Batch{{Data: good.data, Rows: good.rows}}); !errors.Is(err, device.ErrReleased) {
		t.Errorf("after Release: %v", err)
	}
}

// A refusal in the middle of an AddBatches call (the arena full, a buffer
// refused by the device or by a budget, a write refused) adds nothing:
// the model, read back from both buffers, is unchanged, the handles the
// call took are handed out again, and the manager keeps working.
func TestAddBatchesAllOrNothing(t *testing.T) {
	sizes := func(r *rand.Rand, n int) [][2]uint32 {
		s := make([][2]uint32, n)
		for i := range s {
			m := 1 + r.Uint32N(6)
			s[i] = [2]uint32{m * (4 + r.Uint32N(12)), m}
		}
		return s
	}
	check := func(t *testing.T, md *model, err error, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Fatalf("AddBatches: %v, want %v", err, want)
		}
		md.verify("after the refusal")
		if _, err := md.addBatches([][2]uint32{{8, 1}}); err != nil {
			t.Fatalf("AddBatches after the refusal: %v", err)
		}
		md.verify("after a later AddBatches")
	}
	t.Run("arena full", func(t *testing.T) {
		opts := meshlet.Options{RowWords: 4, AddressWord: 3, Data: arena.Options{InitialElems: 64, MaxElems: 1024}}
		md := newModel(t, openHost(t), opts, 2)
		r := rand.New(rand.NewPCG(1, 1))
		if _, err := md.addBatches(sizes(r, 8)); err != nil {
			t.Fatal(err)
		}
		_, err := md.addBatches(append(sizes(r, 8), [2]uint32{900, 2}))
		check(t, md, err, arena.ErrFull)
	})
	t.Run("too many allocations", func(t *testing.T) {
		opts := meshlet.Options{RowWords: 4, AddressWord: 3, Rows: arena.Options{MaxAllocs: 12}}
		md := newModel(t, openHost(t), opts, 2)
		r := rand.New(rand.NewPCG(1, 1))
		if _, err := md.addBatches(sizes(r, 6)); err != nil {
			t.Fatal(err)
		}
		_, err := md.addBatches(sizes(r, 7))
		check(t, md, err, arena.ErrTooManyAllocations)
	})
	// Each buffer creation of one call's growths is refused in turn.
	for failAt := 1; failAt <= 4; failAt++ {
		t.Run(fmt.Sprint("device refuses creation ", failAt), func(t *testing.T) {
			h := testdevice.Host(t, host.Options{})
			dev := &failFrom{Device: h, at: 1 << 30}
			md := newModel(t, dev, faultOpts, 3)
			r := rand.New(rand.NewPCG(2, 2))
			for range 3 {
				if _, err := md.addBatches(sizes(r, 2)); err != nil {
					t.Fatal(err)
				}
				md.remove(0)
			}
			dev.calls, dev.at = 0, failAt
			_, err := md.addBatches(sizes(r, 60))
			h.FailNextCreates(0)
			if err == nil {
				t.Skipf("the call made fewer than %d buffers", failAt)
			}
			check(t, md, err, device.ErrOutOfMemory)
		})
	}
	t.Run("budget", func(t *testing.T) {
		h := testdevice.Host(t, host.Options{})
		b, err := budget.New(h, budget.Options{Bytes: 16 << 10})
		if err != nil {
			t.Fatal(err)
		}
		acct, err := b.Account("meshlets")
		if err != nil {
			t.Fatal(err)
		}
		md := newModel(t, acct, faultOpts, 4)
		r := rand.New(rand.NewPCG(3, 3))
		if _, err := md.addBatches(sizes(r, 10)); err != nil {
			t.Fatal(err)
		}
		_, err = md.addBatches(sizes(r, 200))
		check(t, md, err, budget.ErrOverBudget)
	})
	for failAt := 1; failAt <= 3; failAt++ {
		t.Run(fmt.Sprint("device refuses write ", failAt), func(t *testing.T) {
			h := testdevice.Host(t, host.Options{})
			dev := &failWrite{Device: h}
			md := newModel(t, dev, meshlet.Options{RowWords: 4, AddressWord: 3}, 5)
			r := rand.New(rand.NewPCG(4, 4))
			// Holes, so the next call's batches land in several runs.
			if _, err := md.addBatches(sizes(r, 30)); err != nil {
				t.Fatal(err)
			}
			for i := len(md.live) - 2; i >= 0; i -= 4 {
				md.remove(i)
			}
			md.verify("before")
			dev.at = failAt
			_, err := md.addBatches(sizes(r, 30))
			check(t, md, err, device.ErrOutOfMemory)
		})
	}
}

// failWrite is a host device whose at-th WriteBuffer call from when at is
// set fails with device.ErrOutOfMemory, writing nothing.
type failWrite struct {
	*host.Device
	calls, at int
}

func (d *failWrite) WriteBuffer(buf device.Buffer, off uint64, data []byte) error {
	if d.at > 0 {
		if d.calls++; d.calls == d.at {
			return fmt.Errorf("injected: %w", device.ErrOutOfMemory)
		}
	}
	return d.Device.WriteBuffer(buf, off, data)
}

// BenchmarkAddBatches adds a zone's worth of demo-like batches (450 of 8
// to 160 meshlets of 24 to 124 words, rows of 4 words, arenas rounding to
// bins) with a loop of Add and with one AddBatches call, on the same
// device in the same run, removing them between iterations with the timer
// stopped, and reports ns and device writes per batch for each and the
// ratio of the two. GPUMEM_BENCH_DEVICE=webgpu runs it on WebGPU.
func BenchmarkAddBatches(b *testing.B) {
	var dev device.Device
	if os.Getenv("GPUMEM_BENCH_DEVICE") == "webgpu" {
		dev = testdevice.WebGPU(b, webgpu.Options{AdapterLimits: true})
	} else {
		dev = testdevice.Host(b, host.Options{})
	}
	const n = 450
	r := rand.New(rand.NewPCG(9, 9))
	batches := make([]meshlet.Batch, n)
	for i := range batches {
		meshlets := 8 + r.IntN(153)
		per := 24 + r.IntN(100)
		var data, rows []uint32
		for j := range meshlets {
			k := per*3/4 + r.IntN(per/2+1)
			rows = append(rows, uint32(len(data)), uint32(k), uint32(j), uint32(i))
			for range k {
				data = append(data, r.Uint32())
			}
		}
		batches[i] = meshlet.Batch{Data: data, Rows: rows}
	}
	newManager := func(b *testing.B) *meshlet.Manager {
		m, err := meshlet.New(dev, meshlet.Options{RowWords: 4, AddressWord: 0,
			Data: arena.Options{InitialElems: 8 << 20, RoundToBins: true}, Rows: arena.Options{InitialElems: 128 << 10, RoundToBins: true}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(m.Release)
		return m
	}
	var nsOne, nsAll float64
	run := func(b *testing.B, together bool) float64 {
		m := newManager(b)
		hs := make([]meshlet.BatchHandle, 0, n)
		var spent time.Duration
		before := m.Stats()
		b.ResetTimer()
		for range b.N {
			start := time.Now()
			var err error
			if together {
				hs, err = m.AddBatches(hs[:0], batches)
			} else {
				hs = hs[:0]
				for _, bt := range batches {
					h, e := m.Add(bt.Data, bt.Rows)
					if e != nil {
						err = e
						break
					}
					hs = append(hs, h)
				}
			}
			spent += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			for _, h := range hs {
				if err := m.Remove(h); err != nil {
					b.Fatal(err)
				}
			}
			if err := m.Compact(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.StopTimer()
		ns := float64(spent.Nanoseconds()) / float64(b.N*n)
		b.ReportMetric(ns, "ns/batch")
		b.ReportMetric(float64(m.Stats().Writes-before.Writes)/float64(b.N*n), "writes/batch")
		return ns
	}
	b.Run("Add", func(b *testing.B) { nsOne = run(b, false) })
	b.Run("AddBatches", func(b *testing.B) {
		nsAll = run(b, true)
		if nsOne > 0 {
			b.ReportMetric(nsOne/nsAll, "speedup")
		}
	})
}

// With Options.Belt, Add and AddBatches upload through the staging belt
// (small chunks, so runs split across them), and every batch reads back
// right, through growth and compaction, on each backend.
func TestAddBatchesBelt(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		for name, opts := range addBatchOpts() {
			t.Run(name, func(t *testing.T) {
				belt, err := staging.New(dev, staging.Options{ChunkBytes: 1 << 10})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(belt.Release) // after the manager's: cleanups run last first
				opts.Belt = belt
				md := newModel(t, dev, opts, 8)
				r := rand.New(rand.NewPCG(8, 8))
				for round := range 5 {
					for i := len(md.live) - 1; i >= 0; i -= 3 {
						md.remove(i)
					}
					sizes := make([][2]uint32, 1+r.IntN(30))
					for i := range sizes {
						n := 1 + r.Uint32N(9)
						sizes[i] = [2]uint32{n * (2 + r.Uint32N(20)), n}
					}
					if _, err := md.addBatches(sizes); err != nil {
						t.Fatal(err)
					}
					if _, err := md.add(40, 3); err != nil {
						t.Fatal(err)
					}
					fence, err := dev.Fence()
					if err != nil {
						t.Fatal(err)
					}
					if err := belt.EndFrame(fence); err != nil {
						t.Fatal(err)
					}
					md.verify(fmt.Sprint("belt, round ", round))
				}
				if st := belt.Stats(); st.Uploads == 0 {
					t.Errorf("nothing went through the belt: %+v", st)
				}
			})
		}
	})
}
