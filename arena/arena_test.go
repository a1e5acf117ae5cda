package arena_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/offset"
)

func openHost(t *testing.T) device.Device { return testdevice.Host(t, host.Options{}) }

func eachBackend(t *testing.T, f func(t *testing.T, dev device.Device)) { testdevice.Each(t, f) }

// shadow is what the bytes of every live allocation must be.
type shadow struct {
	a      *arena.Arena
	data   map[arena.Handle][]byte
	r      *rand.Rand
	noFill bool // place gives every request Data, none a Fill
}

func newShadow(a *arena.Arena, seed uint64) *shadow {
	return &shadow{a: a, data: map[arena.Handle][]byte{}, r: rand.New(rand.NewPCG(seed, 1))}
}

// alloc allocates elems elements and fills them with random bytes.
func (s *shadow) alloc(elems uint32) (arena.Handle, error) {
	h, err := s.a.Allocate(elems)
	if err != nil {
		return h, err
	}
	b := make([]byte, int(elems)*int(s.a.ElemSize()))
	for i := range b {
		b[i] = byte(s.r.Uint32())
	}
	if err := s.a.Write(h, 0, b); err != nil {
		return h, err
	}
	s.data[h] = b
	return h, nil
}

func (s *shadow) free(h arena.Handle) error {
	delete(s.data, h)
	return s.a.Free(h)
}

// any returns some live handle, chosen by the shadow's random source.
func (s *shadow) any() (arena.Handle, bool) {
	if len(s.data) == 0 {
		return arena.Handle{}, false
	}
	n := s.r.IntN(len(s.data))
	for h := range s.data {
		if n == 0 {
			return h, true
		}
		n--
	}
	return arena.Handle{}, false
}

// verify reads the whole buffer once and checks every live allocation's
// bytes and the stats' invariants.
func (s *shadow) verify(t *testing.T, when string) {
	t.Helper()
	st := s.a.Stats()
	if st.OccupiedElems > st.ReservedElems || st.ReservedElems+uint64(st.FreeElems) != uint64(st.CapacityElems) || st.Allocations != len(s.data) {
		t.Fatalf("%s: stats %+v with %d live", when, st, len(s.data))
	}
	if len(s.data) == 0 {
		return
	}
	e := uint64(s.a.ElemSize())
	for h, want := range s.data {
		got := make([]byte, len(want))
		if err := s.a.Read(h, 0, got); err != nil {
			t.Fatalf("%s: read %v: %v", when, h, err)
		}
		if !bytes.Equal(got, want) {
			off, _ := s.a.Offset(h)
			t.Fatalf("%s: allocation %v at element %d (%d bytes) changed", when, h, off, uint64(len(want))/e*e)
		}
	}
}

func TestOptionsRejected(t *testing.T) {
	dev := openHost(t)
	for _, o := range []arena.Options{
		{ElemSize: 6},
		{GrowthFactor: 1},
		{GrowthFactor: -2},
		{InitialElems: 100, MaxElems: 10},
		{MaxAllocs: 1},
		{MaxAllocs: offset.MaxNodes + 1},
		{Usage: device.MapRead},
		{GuardBytes: 1<<20 + 1},
		// A margin of 16 elements leaves no room in 16: every Allocate
		// would fail.
		{MaxElems: 16, InitialElems: 16, GuardBytes: 64},
		{ElemSize: 16, MaxElems: 4, InitialElems: 4, GuardBytes: 49},
		{Workers: -1},
	} {
		if _, err := arena.New(dev, o); !errors.Is(err, arena.ErrInvalidOptions) {
			t.Errorf("%+v: %v, want ErrInvalidOptions", o, err)
		}
		if err := o.Validate(dev.Limits()); !errors.Is(err, arena.ErrInvalidOptions) {
			t.Errorf("%+v: Validate: %v, want ErrInvalidOptions", o, err)
		}
	}
	if _, err := arena.New(nil, arena.Options{}); !errors.Is(err, arena.ErrInvalidOptions) {
		t.Errorf("nil device: %v", err)
	}
	// What Validate accepts, New accepts, and an element fits: the largest
	// margins.
	for _, o := range []arena.Options{
		{},
		{MaxElems: 16, InitialElems: 16, GuardBytes: 60},
		{ElemSize: 16, MaxElems: 4, InitialElems: 4, GuardBytes: 48},
		{GuardBytes: 1 << 20},
	} {
		if err := o.Validate(dev.Limits()); err != nil {
			t.Errorf("%+v: Validate: %v", o, err)
		}
		a, err := arena.New(dev, o)
		if err != nil {
			t.Errorf("%+v: New: %v", o, err)
			continue
		}
		if _, err := a.Allocate(1); err != nil {
			t.Errorf("%+v: Allocate(1): %v", o, err)
		}
		a.Release()
	}
}

func TestBadCalls(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		a, err := arena.New(dev, arena.Options{InitialElems: 64, MaxElems: 1024})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		for _, n := range []uint32{0, 1025} {
			if _, err := a.Allocate(n); !errors.Is(err, arena.ErrInvalidSize) {
				t.Errorf("Allocate(%d): %v", n, err)
			}
		}
		h, _ := a.Allocate(4)
		if err := a.Write(h, 0, make([]byte, 20)); !errors.Is(err, arena.ErrInvalidSize) {
			t.Errorf("write past end: %v", err)
		}
		if err := a.Write(h, 2, make([]byte, 4)); !errors.Is(err, arena.ErrInvalidSize) {
			t.Errorf("misaligned write: %v", err)
		}
		if err := a.Free(arena.Handle{}); !errors.Is(err, arena.ErrInvalidHandle) {
			t.Errorf("zero handle: %v", err)
		}
		if err := a.Free(h); err != nil {
			t.Fatal(err)
		}
		if err := a.Free(h); !errors.Is(err, arena.ErrInvalidHandle) {
			t.Errorf("double free: %v", err)
		}
		h2, _ := a.Allocate(4) // likely the same id: the old handle stays dead
		if _, err := a.Offset(h); !errors.Is(err, arena.ErrInvalidHandle) {
			t.Errorf("stale handle after reuse: %v", err)
		}
		if _, err := a.Offset(h2); err != nil {
			t.Error(err)
		}
		a.Release()
		a.Release()
		if _, err := a.Allocate(1); !errors.Is(err, device.ErrReleased) {
			t.Errorf("after release: %v", err)
		}
	})
}

// Growth keeps every byte and every offset, and replaces the buffer.
func TestGrowthKeepsData(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		a, err := arena.New(dev, arena.Options{ElemSize: 16, InitialElems: 64})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		s := newShadow(a, 1)
		for i := range 40 {
			before := a.Stats().Growths
			if _, err := s.alloc(uint32(1 + i%7)); err != nil {
				t.Fatal(err)
			}
			if a.Stats().Growths != before {
				s.verify(t, fmt.Sprintf("growth at allocation %d", i))
			}
		}
		if st := a.Stats(); st.Growths == 0 || st.Moves != 0 {
			t.Errorf("stats %+v: want growths and no moves", st)
		}
		s.verify(t, "end")
	})
}

// Churn on a fragmenting pattern, with a budgeted sweep every frame and
// every live byte checked after each sweep step, growth and compaction.
func TestChurnSweepKeepsData(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		var moved []arena.Move
		a, err := arena.New(dev, arena.Options{
			InitialElems: 512,
			SweepLimits:  arena.SweepLimits{Moves: 8},
			OnMove:       func(m arena.Move) { moved = append(moved, m) },
		})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		s := newShadow(a, 2)
		r := rand.New(rand.NewPCG(3, 4))
		for frame := range 60 {
			for range 20 {
				if r.IntN(5) < 2 {
					if h, ok := s.any(); ok {
						if err := s.free(h); err != nil {
							t.Fatal(err)
						}
					}
					continue
				}
				g, c := a.Stats().Growths, a.Stats().FullCompactions
				if _, err := s.alloc(1 + r.Uint32N(uint32(8<<(frame%5)))); err != nil {
					t.Fatal(err)
				}
				if st := a.Stats(); st.Growths != g || st.FullCompactions != c {
					s.verify(t, fmt.Sprintf("frame %d: growth or compaction", frame))
				}
			}
			moved = moved[:0]
			ms, err := a.Sweep(arena.SweepLimits{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != len(moved) || len(ms) > 8 {
				t.Fatalf("sweep returned %d moves, reported %d, budget 8", len(ms), len(moved))
			}
			for _, m := range ms {
				if off, err := a.Offset(m.Handle); err != nil || off != m.To || m.To >= m.From {
					t.Fatalf("move %+v: offset %d, %v", m, off, err)
				}
			}
			s.verify(t, fmt.Sprintf("frame %d: sweep", frame))
		}
		// Finish the running episode, then run one more with no churn:
		// it starts at the lowest hole left behind and leaves all free
		// space as one region at the tail.
		for range 2 {
			a.Arm()
			for i := 0; a.Armed(); i++ {
				if _, err := a.Sweep(arena.SweepLimits{}); err != nil {
					t.Fatal(err)
				}
				if i > 10000 {
					t.Fatal("sweep never completes")
				}
			}
		}
		st := a.Stats()
		if st.LargestFreeElems != st.FreeElems {
			t.Errorf("after a completed sweep: largest free %d of %d free", st.LargestFreeElems, st.FreeElems)
		}
		if st.SweepsArmed == 0 || st.SweepsCompleted == 0 || st.Moves == 0 {
			t.Errorf("stats %+v: the sweep never ran", st)
		}
		s.verify(t, "completed sweep")
		if _, err := a.Compact(); err != nil {
			t.Fatal(err)
		}
		s.verify(t, "compaction")
		t.Logf("%+v", st)
	})
}

// Every device allocation point fails in turn: the failing call returns the
// error, no live byte changes, and the arena keeps working.
func TestFaultInjection(t *testing.T) {
	for failAt := 1; failAt <= 5; failAt++ {
		dev, err := host.New(host.Options{})
		if err != nil {
			t.Fatal(err)
		}
		a, err := arena.New(dev, arena.Options{InitialElems: 16, MaxAllocs: 1024})
		if err != nil {
			t.Fatal(err)
		}
		s := newShadow(a, uint64(failAt))
		failed, armed := false, false
		for i := 0; i < 200; i++ {
			if i%3 == 2 {
				if h, ok := s.any(); ok {
					s.free(h)
				}
				continue
			}
			// The failAt-th growth's buffer creation fails.
			if dev.Stats().Creates == failAt && !armed {
				dev.FailNextCreates(1)
				armed = true
			}
			_, err := s.alloc(1 + uint32(i%13))
			if err != nil {
				if !errors.Is(err, device.ErrOutOfMemory) && !errors.Is(err, arena.ErrFull) {
					t.Fatalf("fail at create %d: %v", failAt, err)
				}
				failed = true
				s.verify(t, fmt.Sprintf("fail at create %d, allocation %d refused", failAt, i))
				continue
			}
			if armed && dev.Stats().FailedCreates == 1 && !failed {
				// The arena compacted instead of growing, and served.
				failed = true
				s.verify(t, fmt.Sprintf("fail at create %d, allocation %d served by compaction", failAt, i))
			}
		}
		s.verify(t, fmt.Sprintf("fail at create %d: end", failAt))
		if !armed || dev.Stats().FailedCreates != 1 {
			t.Errorf("fail at growth %d: armed %v, %d failed creates", failAt, armed, dev.Stats().FailedCreates)
		}
		a.Release()
		dev.Release()
	}
}

// A device that refuses to grow gets a full compaction, and the request is
// served from the room the compaction gathered.
func TestCompactionWhenGrowthRefused(t *testing.T) {
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	a, err := arena.New(dev, arena.Options{InitialElems: 100})
	if err != nil {
		t.Fatal(err)
	}
	s := newShadow(a, 9)
	hs := make([]arena.Handle, 10)
	for i := range hs {
		if hs[i], err = s.alloc(10); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 10; i += 2 {
		s.free(hs[i])
	}
	dev.FailNextCreates(100)
	if _, err := s.alloc(40); err != nil {
		t.Fatalf("allocation after refused growth: %v", err)
	}
	if st := a.Stats(); st.FullCompactions != 1 || st.Growths != 0 {
		t.Errorf("stats %+v: want one compaction, no growth", st)
	}
	s.verify(t, "compaction")
	if _, err := s.alloc(20); !errors.Is(err, arena.ErrFull) || !errors.Is(err, device.ErrOutOfMemory) {
		t.Errorf("allocation past the room: %v, want ErrFull wrapping ErrOutOfMemory", err)
	}
	s.verify(t, "refusal")
}

// TestWriteReadOverflow: a byte range whose end wraps past 2^64 is refused,
// not written over the allocation before it (issue 21).
func TestWriteReadOverflow(t *testing.T) {
	a, err := arena.New(openHost(t), arena.Options{InitialElems: 64})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Release)
	before, err := a.Allocate(4)
	must(t, err)
	h, err := a.Allocate(4)
	must(t, err)
	want := bytes.Repeat([]byte{0xAB}, 16)
	must(t, a.Write(before, 0, want))
	must(t, a.Write(h, 0, make([]byte, 16)))
	for _, off := range []uint64{1<<64 - 4, 1<<64 - 16, 1<<64 - 8, 1 << 63, 1<<32 - 4, 16, 20} {
		if err := a.Write(h, off, []byte{1, 2, 3, 4}); !errors.Is(err, arena.ErrInvalidSize) {
			t.Errorf("Write of 4 bytes at %d: %v, want ErrInvalidSize", off, err)
		}
		if err := a.Read(h, off, make([]byte, 4)); !errors.Is(err, arena.ErrInvalidSize) {
			t.Errorf("Read of 4 bytes at %d: %v, want ErrInvalidSize", off, err)
		}
	}
	got := make([]byte, 16)
	must(t, a.Read(before, 0, got))
	if !bytes.Equal(got, want) {
		t.Fatalf("the allocation before h changed: % x", got)
	}
	// The last word is still reachable.
	must(t, a.Write(h, 12, []byte{1, 2, 3, 4}))
}

// TestForeignHandle: an arena refuses another arena's handles, although
// their IDs and generations are equal, and frees nothing (issue 21).
func TestForeignHandle(t *testing.T) {
	dev := openHost(t)
	var ars [2]*arena.Arena
	var hs [2]arena.Handle
	for i := range ars {
		a, err := arena.New(dev, arena.Options{InitialElems: 64})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Release)
		ars[i] = a
		hs[i], err = a.Allocate(4)
		must(t, err)
	}
	if hs[0].ID() != hs[1].ID() {
		t.Fatalf("first handles have IDs %d and %d: the test needs them equal", hs[0].ID(), hs[1].ID())
	}
	if hs[0] == hs[1] {
		t.Fatal("two arenas' first handles are equal values")
	}
	for i, a := range ars {
		f := hs[1-i]
		if err := a.Free(f); !errors.Is(err, arena.ErrInvalidHandle) {
			t.Errorf("arena %d: Free of the other's handle: %v, want ErrInvalidHandle", i, err)
		}
		if _, err := a.Offset(f); !errors.Is(err, arena.ErrInvalidHandle) {
			t.Errorf("arena %d: Offset of the other's handle: %v", i, err)
		}
		if err := a.Write(f, 0, make([]byte, 4)); !errors.Is(err, arena.ErrInvalidHandle) {
			t.Errorf("arena %d: Write with the other's handle: %v", i, err)
		}
		if st := a.Stats(); st.Allocations != 1 {
			t.Errorf("arena %d: %d allocations after refusals, want 1", i, st.Allocations)
		}
		must(t, a.Free(hs[i]))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
