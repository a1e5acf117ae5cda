package arena_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/staging"
)

// place places a batch of requests of the given sizes on s's arena with
// random bytes, every third through a fill function and every fourth
// with fewer bytes than its elements (the rest must read as zeros; with
// s.noFill, every request has its bytes as Data). On
// success it checks the placements and adds them to the shadow.
func (s *shadow) place(t *testing.T, sizes []uint32, up arena.Uploader, some bool) ([]arena.Placement, []arena.Move, error) {
	t.Helper()
	es := int(s.a.ElemSize())
	reqs := make([]arena.Request, len(sizes))
	want := make([][]byte, len(sizes))
	for i, n := range sizes {
		b := make([]byte, int(n)*es)
		for k := range b {
			b[k] = byte(s.r.Uint32())
		}
		want[i] = b
		reqs[i] = arena.Request{Owner: uint64(100 + i), Elems: n, Data: b}
		switch {
		case i%3 == 2 && !s.noFill:
			reqs[i].Data = nil
			reqs[i].Fill = func(dst []byte) {
				if len(dst) != len(b) {
					t.Errorf("fill of %d bytes for %d elements", len(dst), n)
				}
				copy(dst, b)
			}
		case i%4 == 3:
			cut := len(b) - 1 - s.r.IntN(len(b))
			clear(b[cut:])
			reqs[i].Data = b[:cut]
		}
	}
	live := s.a.Len()
	prefix := []arena.Placement{{Offset: 12345}}
	var ps []arena.Placement
	var moves []arena.Move
	var err error
	if some {
		ps, moves, err = s.a.PlaceSome(prefix, reqs, up)
	} else {
		ps, moves, err = s.a.Place(prefix, reqs, up)
	}
	if len(ps) == 0 || ps[0].Offset != 12345 {
		t.Fatalf("Place dropped dst's prefix: %+v", ps)
	}
	ps = ps[1:]
	for _, m := range moves {
		if _, ok := s.data[m.Handle]; !ok {
			t.Errorf("Place reported a move of %v, not live before it", m.Handle)
		}
	}
	if err != nil {
		if len(ps) != 0 || s.a.Len() != live {
			t.Fatalf("a failed Place left %d placements and %d allocations of %d", len(ps), s.a.Len(), live)
		}
		return nil, moves, err
	}
	if len(ps) != len(sizes) {
		t.Fatalf("%d placements for %d requests", len(ps), len(sizes))
	}
	for i, p := range ps {
		if p.Handle == (arena.Handle{}) {
			if !some {
				t.Fatalf("Place left request %d", i)
			}
			continue
		}
		if off, err := s.a.Offset(p.Handle); err != nil || off != p.Offset {
			t.Fatalf("request %d placed at %d, Offset %d, %v", i, p.Offset, off, err)
		}
		if o, err := s.a.Owner(p.Handle); err != nil || o != uint64(100+i) {
			t.Fatalf("request %d: owner %d, %v", i, o, err)
		}
		s.data[p.Handle] = want[i]
	}
	return ps, moves, nil
}

// TestPlaceRoom: Place makes room at most once for a batch, by Allocate's
// policy (grow when short; in pieces, arm a sweep and grow a little, or
// compact), after placing what the holes take, and every byte is intact
// after, the batch's and the live allocations'.
func TestPlaceRoom(t *testing.T) {
	type state struct {
		growths, armed, compactions, refusals uint64
	}
	of := func(st arena.Stats) state {
		return state{st.Growths, st.SweepsArmed, st.FullCompactions, st.Refusals}
	}
	for _, tc := range []struct {
		name  string
		opts  arena.Options
		fill  []uint32 // allocated in turn
		free  []int    // then freed, by index into fill
		batch []uint32 // placed together
		want  state    // what Place did
	}{
		{
			name:  "fits already",
			opts:  arena.Options{InitialElems: 1000},
			fill:  []uint32{100, 100},
			batch: []uint32{300, 200},
		},
		{
			name:  "short: one growth",
			opts:  arena.Options{InitialElems: 256},
			fill:  []uint32{100, 100},
			batch: []uint32{90, 60, 33, 10, 1},
			want:  state{growths: 1, refusals: 1},
		},
		{
			name:  "short: growth by what the batch needs, above the factor",
			opts:  arena.Options{InitialElems: 64},
			fill:  []uint32{40},
			batch: []uint32{1000, 500, 77},
			want:  state{growths: 1, refusals: 1},
		},
		{
			name:  "many: one growth",
			opts:  arena.Options{InitialElems: 64, GrowthFactor: 1.1},
			fill:  []uint32{40},
			batch: []uint32{9, 31, 7, 300, 2, 17, 64, 65, 1, 1, 130, 3, 5, 8, 13, 21, 34, 55, 89},
			want:  state{growths: 1, refusals: 1},
		},
		{
			name:  "in pieces: a sweep armed and one small growth",
			opts:  arena.Options{InitialElems: 1024},
			fill:  []uint32{100, 100, 100, 100, 100, 100, 100, 100, 100, 100},
			free:  []int{0, 2, 4, 6, 8},
			batch: []uint32{120, 40},
			want:  state{growths: 1, armed: 1, refusals: 1},
		},
		{
			name:  "in pieces, compact always: the holes' batch moves with it",
			opts:  arena.Options{InitialElems: 1024, Fragmented: arena.CompactAlways},
			fill:  []uint32{100, 100, 100, 100, 100, 100, 100, 100, 100, 100},
			free:  []int{0, 2, 4, 6, 8},
			batch: []uint32{200, 100, 50, 20},
			want:  state{compactions: 1, refusals: 1},
		},
		{
			name:  "in pieces twice: a sweep, then a compaction",
			opts:  arena.Options{InitialElems: 1024, MaxElems: 1100},
			fill:  []uint32{100, 100, 100, 100, 100, 100, 100, 100, 100, 100},
			free:  []int{1, 3, 5, 7},
			batch: []uint32{300, 60},
			want:  state{compactions: 1, refusals: 1},
		},
		{
			name:  "round to bins",
			opts:  arena.Options{InitialElems: 128, RoundToBins: true},
			fill:  []uint32{33, 70},
			batch: []uint32{61, 19, 9, 3},
			want:  state{growths: 1, refusals: 1},
		},
		{
			name:  "guards",
			opts:  arena.Options{InitialElems: 128, ElemSize: 12, GuardBytes: 20},
			fill:  []uint32{33, 70},
			batch: []uint32{61, 19, 9, 3, 1, 1},
			want:  state{growths: 1, refusals: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, dev device.Device) {
				var moved []arena.Move
				tc.opts.OnMove = func(m arena.Move) { moved = append(moved, m) }
				a, err := arena.New(dev, tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Release()
				s := newShadow(a, 3)
				hs := make([]arena.Handle, len(tc.fill))
				for i, n := range tc.fill {
					if hs[i], err = s.alloc(n); err != nil {
						t.Fatal(err)
					}
				}
				for _, i := range tc.free {
					must(t, s.free(hs[i]))
				}
				before := a.Stats()
				_, moves, err := s.place(t, tc.batch, nil, false)
				if err != nil {
					t.Fatal(err)
				}
				b, got := of(before), of(a.Stats())
				got = state{got.growths - b.growths, got.armed - b.armed, got.compactions - b.compactions, got.refusals - b.refusals}
				if got != tc.want {
					t.Errorf("Place did %+v, want %+v", got, tc.want)
				}
				if len(moves) != len(moved) {
					t.Errorf("Place returned %d moves, OnMove got %d", len(moves), len(moved))
				}
				if tc.want.compactions > 0 && len(moves) == 0 {
					t.Errorf("a compaction moved nothing live")
				}
				s.verify(t, "placed")
				if bad, err := a.CheckGuards(); err != nil || len(bad) != 0 {
					t.Errorf("CheckGuards after Place: %v, %v", bad, err)
				}
			})
		})
	}
}

// TestPlaceErrors: bad requests, a device that refuses to grow or to
// write, a full arena, a released one: nothing of the batch is placed and
// every live allocation is intact.
func TestPlaceErrors(t *testing.T) {
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	a, err := arena.New(dev, arena.Options{InitialElems: 100, MaxElems: 1000, MaxAllocs: 32})
	if err != nil {
		t.Fatal(err)
	}
	s := newShadow(a, 5)
	hs := make([]arena.Handle, 10)
	for i := range hs {
		if hs[i], err = s.alloc(10); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []uint32{0, 1001, ^uint32(0)} {
		if _, _, err := a.Place(nil, []arena.Request{{Elems: 5}, {Elems: n}}, nil); !errors.Is(err, arena.ErrInvalidSize) {
			t.Errorf("Place of %d: %v, want ErrInvalidSize", n, err)
		}
	}
	if _, _, err := a.Place(nil, []arena.Request{{Elems: 1, Data: make([]byte, 8)}}, nil); !errors.Is(err, arena.ErrInvalidSize) {
		t.Errorf("Place of more data than elements: %v, want ErrInvalidSize", err)
	}
	for i := 0; i < 10; i += 2 {
		must(t, s.free(hs[i]))
	}
	s.verify(t, "freed")
	// The device refuses to grow: a compaction gathers 50, which the holes
	// and a compaction would not serve 60 and 30 from.
	dev.FailNextCreates(100)
	if _, _, err := s.place(t, []uint32{5, 60, 30}, nil, false); !errors.Is(err, arena.ErrFull) || !errors.Is(err, device.ErrOutOfMemory) {
		t.Errorf("Place past the room: %v, want ErrFull wrapping ErrOutOfMemory", err)
	}
	s.verify(t, "refused")
	if _, _, err := s.place(t, []uint32{5, 20, 20}, nil, false); err != nil {
		t.Errorf("Place within the room, growth refused: %v", err)
	}
	s.verify(t, "placed without growth")
	if st := a.Stats(); st.Growths != 0 {
		t.Errorf("grew with growth refused: %+v", st)
	}
	dev.FailNextCreates(0)
	// At its maximum: ErrFull, without the device.
	if _, _, err := s.place(t, []uint32{500, 500}, nil, false); !errors.Is(err, arena.ErrFull) {
		t.Errorf("Place above what MaxElems leaves: %v, want ErrFull", err)
	}
	s.verify(t, "full")
	// Out of allocation nodes.
	many := make([]uint32, 40)
	for i := range many {
		many[i] = 1
	}
	if _, _, err := s.place(t, many, nil, false); !errors.Is(err, arena.ErrTooManyAllocations) {
		t.Errorf("Place past MaxAllocs: %v, want ErrTooManyAllocations", err)
	}
	s.verify(t, "nodes")
	// The device refuses a write: nothing placed.
	fw := &failingUploader{at: 1}
	if _, _, err := s.place(t, []uint32{3, 4, 5}, fw, false); !errors.Is(err, device.ErrOutOfMemory) {
		t.Errorf("Place with a refused write: %v, want ErrOutOfMemory", err)
	}
	s.verify(t, "write refused")
	a.Release()
	if _, _, err := a.Place(nil, []arena.Request{{Elems: 1}}, nil); !errors.Is(err, device.ErrReleased) {
		t.Errorf("Place after Release: %v", err)
	}
}

// failingUploader writes nothing, and refuses its at-th call.
type failingUploader struct{ calls, at int }

func (u *failingUploader) Upload(device.Buffer, uint64, []byte) error { return u.call() }

func (u *failingUploader) UploadFunc(_ device.Buffer, _, n uint64, fill func([]byte)) error {
	fill(make([]byte, n))
	return u.call()
}

func (u *failingUploader) call() error {
	if u.calls++; u.calls == u.at {
		return fmt.Errorf("injected: %w", device.ErrOutOfMemory)
	}
	return nil
}

// TestPlaceFailedGrowth: on the host device's fault injection, a batch
// whose growth is refused at every creation leaves every live allocation
// intact and nothing of the batch placed, on each backend's rules; the
// next Place succeeds.
func TestPlaceFailedGrowth(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	for k := 1; k <= 3; k++ {
		a, err := arena.New(dev, arena.Options{InitialElems: 64, ElemSize: 8, GuardBytes: 8})
		if err != nil {
			t.Fatal(err)
		}
		s := newShadow(a, uint64(k))
		for range 6 {
			if _, err := s.alloc(9); err != nil {
				t.Fatal(err)
			}
		}
		// Refused once, the arena compacts and grows; refused twice or
		// more, it fails.
		dev.FailNextCreates(k)
		if _, _, err := s.place(t, []uint32{30, 40, 2}, nil, false); (k == 1) != (err == nil) || err != nil && !errors.Is(err, device.ErrOutOfMemory) {
			t.Fatalf("growth refused %d times: %v", k, err)
		}
		dev.FailNextCreates(0)
		s.verify(t, "refused")
		if _, _, err := s.place(t, []uint32{31, 40, 2}, nil, false); err != nil {
			t.Fatal(err)
		}
		s.verify(t, "placed")
		a.Release()
	}
}

// TestPlaceRuns: a batch placed end to end goes up in few writes, the
// bin rounding and margins between them written as the arena keeps them
// (CheckGuards finds nothing), through a counting uploader and through a
// staging belt, on each backend: small batches (every third request
// filled by a function) and large ones (megabyte runs of Data alone, up
// to the 4 MiB bound, through a belt of 4 MiB chunks).
func TestPlaceRuns(t *testing.T) {
	for _, bs := range []runBatches{
		{name: "small", rounds: 4, n: 50, max: 40, frees: 20, initial: 1 << 12, chunk: 4 << 10, maxWrites: 10},
		{name: "large", rounds: 3, n: 2500, max: 400, frees: 800, initial: 1 << 21, chunk: 4 << 20, maxWrites: 4, noFill: true},
	} {
		for _, guard := range []uint32{0, 24} {
			for _, path := range []string{"queue", "uploader", "belt"} {
				if bs.name == "large" && path == "uploader" {
					continue
				}
				t.Run(fmt.Sprintf("%s/guard %d/%s", bs.name, guard, path), func(t *testing.T) {
					eachBackend(t, func(t *testing.T, dev device.Device) { placeRuns(t, dev, bs, guard, path) })
				})
			}
		}
	}
}

// runBatches is a case of TestPlaceRuns: rounds batches of n requests of
// 1 to max elements on an arena of initial elements, frees allocations
// freed after each, a belt of chunk bytes, at most maxWrites writes for
// the first batch, and with noFill no request filled by a function.
type runBatches struct {
	name                  string
	rounds, n, max, frees int
	initial               uint32
	chunk, maxWrites      uint64
	noFill                bool
}

// placeRuns runs bs on dev through path ("queue", "uploader" or "belt")
// with margins of guard bytes, checking every byte after each batch, the
// first batch's writes, and the margins at the end.
func placeRuns(t *testing.T, dev device.Device, bs runBatches, guard uint32, path string) {
	a, err := arena.New(dev, arena.Options{InitialElems: bs.initial, ElemSize: 8, RoundToBins: true, GuardBytes: guard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	var up arena.Uploader
	var cu *countingUploader
	switch path {
	case "uploader":
		cu = &countingUploader{dev: dev}
		up = cu
	case "belt":
		belt, err := staging.New(dev, staging.Options{ChunkBytes: bs.chunk})
		if err != nil {
			t.Fatal(err)
		}
		defer belt.Release()
		up = belt
	}
	s := newShadow(a, 9)
	s.noFill = bs.noFill
	r := rand.New(rand.NewPCG(1, 1))
	for round := range bs.rounds {
		sizes := make([]uint32, bs.n)
		for i := range sizes {
			sizes[i] = 1 + r.Uint32N(uint32(bs.max))
		}
		before := a.Stats().Uploads
		if _, _, err := s.place(t, sizes, up, false); err != nil {
			t.Fatal(err)
		}
		if w := a.Stats().Uploads - before; round == 0 && w > bs.maxWrites {
			t.Errorf("%d writes for a batch of %d in an empty arena", w, bs.n)
		}
		if err := dev.Submit(); err != nil {
			t.Fatal(err)
		}
		s.verify(t, fmt.Sprintf("round %d", round))
		for range bs.frees {
			if h, ok := s.any(); ok {
				must(t, s.free(h))
			}
		}
	}
	if bad, err := a.CheckGuards(); err != nil || len(bad) != 0 {
		t.Errorf("CheckGuards: %v, %v", bad, err)
	}
	if cu != nil && cu.fills == 0 {
		t.Error("the uploader was not used")
	}
}

// TestPlaceSome: PlaceSome takes what fits under MaxElems and MaxAllocs,
// first fit, and leaves the rest, without an error.
func TestPlaceSome(t *testing.T) {
	dev := openHost(t)
	a, err := arena.New(dev, arena.Options{InitialElems: 64, MaxElems: 256, MaxAllocs: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	s := newShadow(a, 2)
	if _, err := s.alloc(60); err != nil {
		t.Fatal(err)
	}
	// 300 never fits; 150 and 40 do; then nodes run out.
	ps, _, err := s.place(t, []uint32{300, 150, 100, 40, 1, 1, 1, 1, 1, 1, 1}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	var placed []int
	for i, p := range ps {
		if p.Handle != (arena.Handle{}) {
			placed = append(placed, i)
		}
	}
	if len(placed) == 0 || ps[0].Handle != (arena.Handle{}) || ps[1].Handle == (arena.Handle{}) || a.Len() > 8 {
		t.Errorf("placed %v of the batch, %d allocations", placed, a.Len())
	}
	if st := a.Stats(); st.Growths > 1 || st.CapacityElems > 256 {
		t.Errorf("stats %+v", st)
	}
	s.verify(t, "some")
}

// TestHolds: Holds is what a request's size, margin and rounding allow.
func TestHolds(t *testing.T) {
	for _, tc := range []struct {
		o     arena.Options
		elems uint32
		want  bool
	}{
		{arena.Options{MaxElems: 100}, 96, true},
		{arena.Options{MaxElems: 100}, 97, false}, // 97 rounds up to 104
		{arena.Options{MaxElems: 100}, 0, false},
		{arena.Options{}, 1, false},
		{arena.Options{MaxElems: 100, ElemSize: 4, GuardBytes: 16}, 92, true},
		{arena.Options{MaxElems: 100, ElemSize: 4, GuardBytes: 16}, 93, false},
	} {
		if got := tc.o.Holds(tc.elems); got != tc.want {
			t.Errorf("%+v Holds(%d) = %v", tc.o, tc.elems, got)
		}
	}
}

// TestNewFor: an arena made for a batch places it without growing.
func TestNewFor(t *testing.T) {
	dev := openHost(t)
	sizes := []uint32{100, 20, 7, 300, 1}
	reqs := make([]arena.Request, len(sizes))
	for i, n := range sizes {
		reqs[i] = arena.Request{Elems: n}
	}
	a, err := arena.NewFor(dev, arena.Options{InitialElems: 16, ElemSize: 16, GuardBytes: 4}, reqs)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	s := newShadow(a, 7)
	if _, _, err := s.place(t, sizes, nil, true); err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.Growths != 0 || st.Allocations != len(sizes) {
		t.Errorf("stats %+v", st)
	}
	s.verify(t, "new for")
}
