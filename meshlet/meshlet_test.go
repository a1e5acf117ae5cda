package meshlet_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/meshlet"
)

// backends are the devices the tests run on (host, and webgpu where an
// adapter is found); a test that needs host-only fault injection opens a
// host device itself.
var backends = testdevice.Backends()

func openHost(t testing.TB) device.Device { return testdevice.Host(t, host.Options{}) }

func eachBackend(t *testing.T, f func(t *testing.T, dev device.Device)) {
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) { f(t, b.Open(t)) })
	}
}

// want is what a batch must hold: its data, and its rows with address
// words relative to the data, as given to Add.
type want struct {
	data, rows []uint32
}

// model drives a Manager and keeps what every live batch must hold, and
// checks the changed notifications of every call.
type model struct {
	t     testing.TB
	dev   device.Device
	m     *meshlet.Manager
	opts  meshlet.Options
	r     *rand.Rand
	batch map[meshlet.BatchHandle]want
	live  []meshlet.BatchHandle       // the keys of batch, in a stable order
	pos   map[meshlet.BatchHandle]int // index in live
	// notified collects the batches Changes reported moved in the last
	// call, each once.
	notified []meshlet.BatchHandle
	before   map[meshlet.BatchHandle]meshlet.Placement
	// light skips the O(batches) checks after every add, clone and
	// remove (placements, bookkeeping), for long runs; verify and sweeps
	// still do them.
	light bool
}

// newModel creates a manager on dev with opts.
func newModel(t testing.TB, dev device.Device, opts meshlet.Options, seed uint64) *model {
	t.Helper()
	md := &model{t: t, dev: dev, opts: opts, r: rand.New(rand.NewPCG(seed, 7)), batch: map[meshlet.BatchHandle]want{},
		pos: map[meshlet.BatchHandle]int{}}
	m, err := meshlet.New(dev, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Release)
	md.m = m
	return md
}

// makeBatch returns random data of about words words and n rows whose
// address words point into it, in order.
func (md *model) makeBatch(words, n uint32) want {
	rw, aw := md.opts.RowWords, md.opts.AddressWord
	w := want{data: make([]uint32, words), rows: make([]uint32, n*rw)}
	for i := range w.data {
		w.data[i] = md.r.Uint32()
	}
	for i := range w.rows {
		w.rows[i] = md.r.Uint32()
	}
	for i := range n {
		w.rows[i*rw+aw] = uint32(uint64(words) * uint64(i) / uint64(n))
	}
	return w
}

// start records every placement before a call, to check its notifications.
func (md *model) start() {
	md.m.Changes(nil)
	md.notified = md.notified[:0]
	md.before = nil
	if md.light {
		return
	}
	md.before = make(map[meshlet.BatchHandle]meshlet.Placement, len(md.live))
	for _, h := range md.live {
		p, err := md.m.Lookup(h)
		if err != nil {
			md.t.Fatalf("lookup %v: %v", h, err)
		}
		md.before[h] = p
	}
}

// finish checks a call's changes: every batch part that moved, and no
// other, reported once.
func (md *model) finish(what string) {
	md.t.Helper()
	seen := map[meshlet.BatchHandle]bool{}
	parts := map[[2]uint64]bool{}
	for _, c := range md.m.Changes(nil) {
		if c.Kind != memory.Moved {
			continue
		}
		if k := [2]uint64{c.Owner, uint64(c.Part)}; parts[k] {
			md.t.Fatalf("%s: %v part %d reported twice", what, meshlet.HandleOf(c), c.Part)
		} else {
			parts[k] = true
		}
		if h := meshlet.HandleOf(c); !seen[h] {
			seen[h] = true
			md.notified = append(md.notified, h)
		}
	}
	if md.before == nil {
		return
	}
	if err := meshlet.Check(md.m); err != nil {
		md.t.Fatalf("%s: %v", what, err)
	}
	for h, p := range md.before {
		q, err := md.m.Lookup(h)
		if err != nil {
			md.t.Fatalf("%s: lookup %v: %v", what, h, err)
		}
		if moved := p != q; moved != seen[h] {
			md.t.Fatalf("%s: %v went from %+v to %+v, reported %v", what, h, p, q, seen[h])
		}
		delete(seen, h)
	}
	if len(seen) != 0 {
		md.t.Fatalf("%s: reported batches not live before: %v", what, seen)
	}
}

func (md *model) add(words, n uint32) (meshlet.BatchHandle, error) {
	w := md.makeBatch(words, n)
	md.start()
	h, err := md.m.Add(w.data, w.rows)
	md.finish("add")
	if err == nil {
		md.batch[h] = w
		md.pos[h] = len(md.live)
		md.live = append(md.live, h)
	}
	return h, err
}

func (md *model) clone(src meshlet.BatchHandle) (meshlet.BatchHandle, error) {
	md.start()
	h, err := md.m.Clone(src)
	md.finish("clone")
	if err == nil {
		md.batch[h] = md.batch[src]
		md.pos[h] = len(md.live)
		md.live = append(md.live, h)
	}
	return h, err
}

func (md *model) remove(i int) {
	h := md.live[i]
	if err := md.m.Remove(h); err != nil {
		md.t.Fatalf("remove %v: %v", h, err)
	}
	delete(md.batch, h)
	delete(md.pos, h)
	last := md.live[len(md.live)-1]
	md.live[i] = last
	md.live = md.live[:len(md.live)-1]
	if last != h {
		md.pos[last] = i
	}
	if !md.light {
		if err := meshlet.Check(md.m); err != nil {
			md.t.Fatalf("remove: %v", err)
		}
	}
}

func (md *model) sweep(b arena.SweepLimits) []meshlet.BatchHandle {
	md.t.Helper()
	light := md.light
	md.light = false
	defer func() { md.light = light }()
	md.start()
	if err := md.m.Sweep(b); err != nil {
		md.t.Fatalf("sweep: %v", err)
	}
	md.finish("sweep")
	return md.notified
}

func (md *model) compact() {
	md.t.Helper()
	md.start()
	if err := md.m.Compact(); err != nil {
		md.t.Fatalf("compact: %v", err)
	}
	md.finish("compact")
}

// readAll reads a whole buffer as words.
func readAll(t testing.TB, dev device.Device, buf device.Buffer) []uint32 {
	t.Helper()
	b := make([]byte, buf.Size())
	if err := dev.ReadBuffer(buf, 0, b); err != nil {
		t.Fatalf("read %s: %v", buf.Desc().Label, err)
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

// verify reads both buffers back and checks every live batch's data words
// and rows, with address words absolute, and the stats against the model.
func (md *model) verify(when string) {
	md.t.Helper()
	if err := meshlet.Check(md.m); err != nil {
		md.t.Fatalf("%s: %v", when, err)
	}
	st := md.m.Stats()
	var meshlets, words uint64
	for _, w := range md.batch {
		words += uint64(len(w.data))
		meshlets += uint64(len(w.rows)) / uint64(md.opts.RowWords)
	}
	if st.Batches != len(md.batch) || md.m.Len() != len(md.batch) || st.Data.Allocations != len(md.batch) ||
		st.Rows.Allocations != len(md.batch) || st.Meshlets != meshlets || st.DataWords != words {
		md.t.Fatalf("%s: stats %+v, want %d batches, %d meshlets, %d words", when, st, len(md.batch), meshlets, words)
	}
	if st.OccupiedBytes > st.ReservedBytes || st.ReservedBytes > st.CapacityBytes {
		md.t.Fatalf("%s: bytes occupied %d, reserved %d, capacity %d", when, st.OccupiedBytes, st.ReservedBytes, st.CapacityBytes)
	}
	dbuf, rbuf := md.m.Buffers()
	data, rows := readAll(md.t, md.dev, dbuf), readAll(md.t, md.dev, rbuf)
	rw, aw := md.opts.RowWords, md.opts.AddressWord
	for _, h := range md.live {
		w := md.batch[h]
		p, err := md.m.Lookup(h)
		if err != nil {
			md.t.Fatalf("%s: lookup %v: %v", when, h, err)
		}
		if int(p.DataWords) != len(w.data) || int(p.Meshlets*rw) != len(w.rows) {
			md.t.Fatalf("%s: %v placed as %+v, want %d words and %d row words", when, h, p, len(w.data), len(w.rows))
		}
		if got := data[p.DataOffset : p.DataOffset+p.DataWords]; !slices.Equal(got, w.data) {
			md.t.Fatalf("%s: %v: data at word %d changed", when, h, p.DataOffset)
		}
		got := rows[p.RowOffset*rw : (p.RowOffset+p.Meshlets)*rw]
		for i, g := range got {
			want := w.rows[i]
			if uint32(i)%rw == aw {
				want += p.DataOffset
			}
			if g != want {
				md.t.Fatalf("%s: %v at %+v: row %d word %d is %d, want %d", when, h, p, i/int(rw), i%int(rw), g, want)
			}
		}
	}
}

func TestOptionsRejected(t *testing.T) {
	dev := openHost(t)
	for _, o := range []meshlet.Options{
		{},
		{RowWords: 4, AddressWord: 4},
		{RowWords: 1 << 30},
		{RowWords: 4, Data: arena.Options{ElemSize: 8}},
		{RowWords: 4, Rows: arena.Options{ElemSize: 4}},
		{RowWords: 4, Rows: arena.Options{OnMove: func(arena.Move) {}}},
		{RowWords: 4, Data: arena.Options{SweepLimits: arena.SweepLimits{Moves: 3}}},
		{RowWords: 4, Data: arena.Options{GrowthFactor: 0.5}},
		{RowWords: 4, Rows: arena.Options{InitialElems: 10, MaxElems: 5}},
		{RowWords: 4, ShrinkBelow: 1},
		{RowWords: 4, ShrinkBelow: -0.5},
		{RowWords: 4, ShrinkBelow: 0.5, ShrinkAfter: -1},
		{RowWords: 4, ShrinkBelow: 0.5, Data: arena.Options{InitialElems: 64, MinElems: 1 << 30, MaxElems: 1 << 20}},
		// Margins that leave no room in an arena: every Add would fail.
		{RowWords: 4, Data: arena.Options{InitialElems: 16, MaxElems: 16, GuardBytes: 64}},
		{RowWords: 4, Rows: arena.Options{InitialElems: 4, MaxElems: 4, GuardBytes: 64}},
	} {
		if _, err := meshlet.New(dev, o); !errors.Is(err, meshlet.ErrInvalidOptions) {
			t.Errorf("%+v: %v, want ErrInvalidOptions", o, err)
		}
	}
	if _, err := meshlet.New(nil, meshlet.Options{RowWords: 4}); !errors.Is(err, meshlet.ErrInvalidOptions) {
		t.Errorf("nil device: %v", err)
	}
	if _, err := meshlet.New(dev, meshlet.Options{RowWords: 4, Rows: arena.Options{ElemSize: 16}}); err != nil {
		t.Errorf("ElemSize given as its only value: %v", err)
	}
	if n := dev.(*host.Device).Stats().Buffers; n != 2 {
		t.Errorf("%d buffers alive, want the 2 of the one manager made", n)
	}
}

func TestBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		md := newModel(t, dev, meshlet.Options{RowWords: 3, AddressWord: 1}, 1)
		m := md.m
		for _, c := range []struct {
			data, rows []uint32
			err        error
		}{
			{nil, []uint32{0, 0, 0}, meshlet.ErrInvalidBatch},
			{[]uint32{1}, nil, meshlet.ErrInvalidBatch},
			{[]uint32{1}, []uint32{0, 0}, meshlet.ErrInvalidBatch},
			{[]uint32{1}, []uint32{0, 0, 0, 0}, meshlet.ErrInvalidBatch},
			{[]uint32{1, 2}, []uint32{0, 3, 0}, meshlet.ErrInvalidAddress},
			{[]uint32{1, 2}, []uint32{0, 0, 0, 0, ^uint32(0), 0}, meshlet.ErrInvalidAddress},
		} {
			if _, err := m.Add(c.data, c.rows); !errors.Is(err, c.err) {
				t.Errorf("Add(%v, %v): %v, want %v", c.data, c.rows, err, c.err)
			}
		}
		// An empty meshlet at the end addresses one past the data.
		h, err := md.add(2, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Add([]uint32{1, 2}, []uint32{0, 2, 0}); err != nil {
			t.Errorf("address at the data's end: %v", err)
		}
		md.remove(0)
		for name, f := range map[string]func() error{
			"Remove":  func() error { return m.Remove(h) },
			"Clone":   func() error { _, err := m.Clone(h); return err },
			"Lookup":  func() error { _, err := m.Lookup(h); return err },
			"zero":    func() error { return m.Remove(meshlet.BatchHandle{}) },
			"zeroRef": func() error { _, err := m.Lookup(meshlet.BatchHandle{}); return err },
		} {
			if err := f(); !errors.Is(err, meshlet.ErrInvalidHandle) {
				t.Errorf("%s of a removed batch: %v", name, err)
			}
		}
		h2, err := md.add(2, 1) // likely h's slot: h stays dead
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Lookup(h); !errors.Is(err, meshlet.ErrInvalidHandle) {
			t.Errorf("stale handle after reuse: %v", err)
		}
		if _, err := m.Lookup(h2); err != nil {
			t.Error(err)
		}
		m.Release()
		m.Release()
		if _, err := m.Add([]uint32{1}, []uint32{0, 0, 0}); !errors.Is(err, device.ErrReleased) {
			t.Errorf("Add after release: %v", err)
		}
		if err := m.Sweep(arena.SweepLimits{}); !errors.Is(err, device.ErrReleased) {
			t.Errorf("Sweep after release: %v", err)
		}
		if _, err := m.Lookup(h2); !errors.Is(err, device.ErrReleased) {
			t.Errorf("Lookup after release: %v", err)
		}
		var nilManager *meshlet.Manager
		nilManager.Release()
	})
}

// Placement of a batch, its clone, and the address words of both.
func TestAddClone(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		md := newModel(t, dev, meshlet.Options{RowWords: 4, AddressWord: 2}, 2)
		for range 3 {
			if _, err := md.add(10, 3); err != nil {
				t.Fatal(err)
			}
		}
		c, err := md.clone(md.live[1])
		if err != nil {
			t.Fatal(err)
		}
		cc, err := md.clone(c)
		if err != nil {
			t.Fatal(err)
		}
		md.verify("clones")
		p, _ := md.m.Lookup(cc)
		if p.DataOffset != 40 || p.RowOffset != 12 {
			t.Errorf("clone of a clone at %+v, want data 40, row 12", p)
		}
		if st := md.m.Stats(); st.Clones != 2 || st.PatchedWords != 6 {
			t.Errorf("stats %+v: want 2 clones, 6 patched words", st)
		}
	})
}

// Churn of adds, removes and clones with a sweep every frame; after every
// sweep, growth and compaction both buffers are read back and every batch
// checked, and every call's changed reports are checked against the
// batches that moved.
func TestChurn(t *testing.T) {
	for _, c := range []struct {
		name string
		opts meshlet.Options
	}{
		{"rows4addr1", meshlet.Options{RowWords: 4, AddressWord: 1}},
		{"rows3addr2/bins", meshlet.Options{RowWords: 3, AddressWord: 2,
			Data: arena.Options{RoundToBins: true}, Rows: arena.Options{RoundToBins: true}}},
		{"rows1/fit", meshlet.Options{RowWords: 1, SweepLimits: arena.SweepLimits{Moves: 2},
			Data: arena.Options{Policy: 1}, Rows: arena.Options{Policy: 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, dev device.Device) {
				o := c.opts
				o.Data.InitialElems, o.Rows.InitialElems = 512, 32
				if o.SweepLimits == (arena.SweepLimits{}) {
					o.SweepLimits = arena.SweepLimits{Moves: 6}
				}
				churn(t, newModel(t, dev, o, 3), 80, 14)
			})
		})
	}
}

func churn(t *testing.T, md *model, frames, opsPerFrame int) {
	m, r := md.m, rand.New(rand.NewPCG(11, 12))
	moved := 0
	for frame := range frames {
		for range opsPerFrame {
			before := m.Stats()
			var err error
			switch k := r.IntN(10); {
			case k < 4 && len(md.live) > 0:
				md.remove(r.IntN(len(md.live)))
				continue
			case k < 6 && len(md.live) > 0:
				_, err = md.clone(md.live[r.IntN(len(md.live))])
			default:
				n := 1 + r.Uint32N(uint32(4<<(frame%4)))
				_, err = md.add(n*(8+r.Uint32N(24)), n)
			}
			if err != nil {
				t.Fatalf("frame %d: %v", frame, err)
			}
			after := m.Stats()
			if after.Data.Growths != before.Data.Growths || after.Rows.Growths != before.Rows.Growths ||
				after.Data.FullCompactions != before.Data.FullCompactions || after.Rows.FullCompactions != before.Rows.FullCompactions {
				md.verify(fmt.Sprintf("frame %d: growth or compaction", frame))
			}
		}
		if frame%10 == 5 {
			m.Arm() // as a fragmentation refusal would, if none came
		}
		moved += len(md.sweep(arena.SweepLimits{}))
		md.verify(fmt.Sprintf("frame %d: sweep", frame))
		if frame%20 == 19 {
			md.compact()
			md.verify(fmt.Sprintf("frame %d: compaction", frame))
		}
	}
	// Two episodes: the first may leave holes opened behind its pass
	// during the frames; the second starts at the lowest of them.
	for range 2 {
		m.Arm()
		for i := 0; m.Armed(); i++ {
			md.sweep(arena.SweepLimits{})
			if i > 10000 {
				t.Fatal("sweep never completes")
			}
		}
	}
	md.verify("completed sweep")
	st := m.Stats()
	for _, a := range []arena.Stats{st.Data, st.Rows} {
		if a.LargestFreeElems != a.FreeElems {
			t.Errorf("after a completed sweep: largest free %d of %d", a.LargestFreeElems, a.FreeElems)
		}
	}
	if moved == 0 || st.Data.Moves == 0 || st.Rows.Moves == 0 || st.Data.Growths == 0 || st.Rows.Growths == 0 || st.PatchedWords == 0 {
		t.Errorf("stats %+v: something never happened (%d moved by sweeps)", st, moved)
	}
	t.Logf("data %+v\nrows %+v", st.Data, st.Rows)
	t.Logf("%d batches, %d sweeps moved %d batches, %d changed, %d patched words; data %d growths %d compactions; rows %d growths %d compactions",
		st.Batches, st.Sweeps, moved, st.Changed, st.PatchedWords, st.Data.Growths, st.Data.FullCompactions, st.Rows.Growths, st.Rows.FullCompactions)
}

// An Add the data arena serves by compacting (the device refuses to grow)
// patches the moved batches' rows and reports them changed.
func TestCompactionOnAdd(t *testing.T) {
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	md := newModel(t, dev, meshlet.Options{RowWords: 2, AddressWord: 1,
		Data: arena.Options{InitialElems: 100}, Rows: arena.Options{InitialElems: 1000}}, 4)
	for range 10 {
		if _, err := md.add(10, 2); err != nil {
			t.Fatal(err)
		}
	}
	for i := 8; i >= 0; i -= 2 {
		md.remove(i)
	}
	dev.FailNextCreates(100)
	if _, err := md.add(40, 3); err != nil {
		t.Fatalf("add after refused growth: %v", err)
	}
	if st := md.m.Stats(); st.Data.FullCompactions != 1 || st.Data.Growths != 0 || st.Changed == 0 {
		t.Errorf("stats %+v: want one data compaction, no growth, batches changed", st)
	}
	md.verify("compaction on add")
	if _, err := md.add(20, 1); !errors.Is(err, arena.ErrFull) || !errors.Is(err, device.ErrOutOfMemory) {
		t.Errorf("add past the room: %v, want arena.ErrFull wrapping ErrOutOfMemory", err)
	}
	md.verify("refusal")
}

// When the rows are refused, the data allocation made for them is given
// back: a partial success never leaks.
func TestLockstep(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		md := newModel(t, dev, meshlet.Options{RowWords: 4,
			Rows: arena.Options{InitialElems: 8, MaxElems: 8}}, 5)
		if _, err := md.add(100, 6); err != nil {
			t.Fatal(err)
		}
		before := md.m.Stats()
		if _, err := md.add(100, 3); !errors.Is(err, arena.ErrFull) {
			t.Fatalf("rows past the maximum: %v, want arena.ErrFull", err)
		}
		if _, err := md.clone(md.live[0]); !errors.Is(err, arena.ErrFull) {
			t.Fatalf("clone past the maximum: %v, want arena.ErrFull", err)
		}
		after := md.m.Stats()
		if after.Data.Allocations != 1 || after.Data.OccupiedElems != before.Data.OccupiedElems {
			t.Errorf("data arena %+v after refused rows, want as before: %+v", after.Data, before.Data)
		}
		md.verify("refused rows")
		if _, err := md.add(100, 2); err != nil {
			t.Errorf("add that fits: %v", err)
		}
		md.verify("after")
	})
}

// A Clone whose data allocation compacts the data arena moves its own
// source: the source's rows are patched before the copy reads them, and
// the copy's address words end at the copy's data.
func TestCloneAfterCompaction(t *testing.T) {
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	md := newModel(t, dev, meshlet.Options{RowWords: 3, AddressWord: 2,
		Data: arena.Options{InitialElems: 100}, Rows: arena.Options{InitialElems: 1000}}, 6)
	for _, words := range []uint32{10, 10, 10, 10, 10, 30} {
		if _, err := md.add(words, 3); err != nil {
			t.Fatal(err)
		}
	}
	src := md.live[5]
	md.remove(2)
	md.remove(0)
	before, _ := md.m.Lookup(src)
	dev.FailNextCreates(100)
	if _, err := md.clone(src); err != nil {
		t.Fatalf("clone after refused growth: %v", err)
	}
	after, _ := md.m.Lookup(src)
	if st := md.m.Stats(); st.Data.FullCompactions != 1 || after.DataOffset >= before.DataOffset {
		t.Errorf("source went from %+v to %+v, %d compactions: want it moved by one", before, after, st.Data.FullCompactions)
	}
	md.verify("clone after compaction")
}

// TestSweepStepsPerCall: Sweep's Steps budget is spent across both arenas,
// as Moves and Bytes are: one step moves one allocation, data or rows, in
// all (issue 21's class: mesh.Sweep had it per slab).
func TestSweepStepsPerCall(t *testing.T) {
	md := newModel(t, openHost(t), meshlet.Options{RowWords: 4, AddressWord: 1}, 21)
	var hs []meshlet.BatchHandle
	for range 16 {
		h, err := md.add(64, 8)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	for i := 0; i < len(hs); i += 2 {
		md.remove(md.pos[hs[i]])
	}
	md.m.Arm()
	for _, steps := range []int{1, 2, 3} {
		before := md.m.Stats()
		md.sweep(arena.SweepLimits{Steps: steps, Moves: 1000, Bytes: 1 << 30})
		after := md.m.Stats()
		moves := after.Data.Moves - before.Data.Moves + after.Rows.Moves - before.Rows.Moves
		if moves > uint64(steps) || moves == 0 {
			t.Fatalf("Sweep of %d steps moved %d allocations (data and rows), want 1 to %d", steps, moves, steps)
		}
	}
	md.verify("after the sweeps")
}
