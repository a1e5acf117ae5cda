package handle_test

import (
	"errors"
	"testing"

	"github.com/gpumem/gpumem/handle"
)

func TestPack(t *testing.T) {
	for _, c := range []struct {
		index, gen uint32
		s          string
	}{{0, 0, "0.0"}, {7, 2, "7.2"}, {1<<32 - 1, 1<<32 - 2, "4294967295.4294967294"}} {
		h := handle.Pack(c.index, c.gen)
		if h.Index() != c.index || h.Generation() != c.gen || h.String() != c.s {
			t.Errorf("Pack(%d, %d) = %v (index %d, generation %d)", c.index, c.gen, h, h.Index(), h.Generation())
		}
	}
}

// op is one step of an owner's life in a table test.
type op struct {
	do   string // "alloc", "free", "flush", "remote"
	slot int    // alloc, remote: where the handle goes; free: which handle
	want string // alloc, remote: the handle's String; free: "" or the error
}

func TestOwnerSequences(t *testing.T) {
	tests := []struct {
		name  string
		ops   []op
		after handle.Stats
	}{
		{"fresh indices from 1",
			[]op{{"alloc", 0, "1.0"}, {"alloc", 1, "2.0"}, {"remote", 2, "3.0"}},
			handle.Stats{Issued: 3, Live: 3}},
		{"owner reuses its buffered frees, last freed first, next generation",
			[]op{{"alloc", 0, "1.0"}, {"alloc", 1, "2.0"}, {"free", 0, ""}, {"free", 1, ""},
				{"alloc", 2, "2.1"}, {"alloc", 3, "1.1"}, {"alloc", 4, "3.0"}},
			handle.Stats{Issued: 3, Live: 3}},
		{"remote does not see unflushed frees",
			[]op{{"alloc", 0, "1.0"}, {"free", 0, ""}, {"remote", 1, "2.0"}},
			handle.Stats{Issued: 2, Live: 1, Buffered: 1}},
		{"remote reuses flushed frees",
			[]op{{"alloc", 0, "1.0"}, {"alloc", 1, "2.0"}, {"free", 0, ""}, {"free", 1, ""}, {"flush", 0, ""},
				{"remote", 2, "1.1"}, {"remote", 3, "2.1"}, {"remote", 4, "3.0"}},
			handle.Stats{Issued: 3, Live: 3}},
		{"owner pops the shared list when its buffer is empty",
			[]op{{"alloc", 0, "1.0"}, {"free", 0, ""}, {"flush", 0, ""}, {"alloc", 1, "1.1"}},
			handle.Stats{Issued: 1, Live: 1}},
		{"double free is stale",
			[]op{{"alloc", 0, "1.0"}, {"free", 0, ""}, {"free", 0, "stale"}},
			handle.Stats{Issued: 1, Buffered: 1}},
		{"free of a reused index's old handle is stale",
			[]op{{"alloc", 0, "1.0"}, {"free", 0, ""}, {"alloc", 1, "1.1"}, {"free", 0, "stale"}, {"free", 1, ""}},
			handle.Stats{Issued: 1, Buffered: 1}},
		{"zero handle is stale",
			[]op{{"free", 9, "stale"}},
			handle.Stats{}},
		{"never issued is stale",
			[]op{{"alloc", 0, "1.0"}, {"free", 8, "stale"}},
			handle.Stats{Issued: 1, Live: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := handle.New()
			hs := make([]handle.Handle, 10)
			hs[8] = handle.Pack(5, 0) // never issued
			for k, s := range tc.ops {
				switch s.do {
				case "alloc", "remote":
					var h handle.Handle
					var err error
					if s.do == "alloc" {
						h, err = o.Allocate()
					} else {
						h, err = o.Remote().Allocate()
					}
					if err != nil || h.String() != s.want || !o.Live(h) {
						t.Fatalf("op %d %s = %v, %v (live %v), want %s", k, s.do, h, err, o.Live(h), s.want)
					}
					hs[s.slot] = h
				case "free":
					err := o.Free(hs[s.slot])
					if (s.want == "") != (err == nil) || (err != nil && !errors.Is(err, handle.ErrStale)) {
						t.Fatalf("op %d free %v = %v, want %q", k, hs[s.slot], err, s.want)
					}
					if o.Live(hs[s.slot]) {
						t.Fatalf("op %d: %v live after free", k, hs[s.slot])
					}
				case "flush":
					o.Flush()
				}
			}
			if got := o.Stats(); got != tc.after {
				t.Errorf("stats %+v, want %+v", got, tc.after)
			}
		})
	}
}

func TestAllocMany(t *testing.T) {
	o := handle.New()
	r := o.Remote()
	first := make([]handle.Handle, 600)
	if n, err := o.AllocMany(first); n != 600 || err != nil {
		t.Fatalf("AllocMany(600) = %d, %v", n, err)
	}
	// 300 frees: 256 flushed by the buffer filling, 44 buffered.
	if err := o.FreeMany(first[:300]); err != nil {
		t.Fatal(err)
	}
	if st := o.Stats(); st.Shared != 256 || st.Buffered != 44 || st.Live != 300 {
		t.Fatalf("after frees: %+v", st)
	}
	// The remote gets the 256 shared ones and 10 fresh.
	got := make([]handle.Handle, 266)
	if n, err := r.AllocMany(got); n != 266 || err != nil {
		t.Fatalf("remote AllocMany = %d, %v", n, err)
	}
	// The owner gets the 44 buffered ones and 6 fresh.
	mine := make([]handle.Handle, 50)
	if n, err := o.AllocMany(mine); n != 50 || err != nil {
		t.Fatalf("owner AllocMany = %d, %v", n, err)
	}
	seen := map[uint32]bool{}
	for _, h := range append(append(append([]handle.Handle{}, first[300:]...), got...), mine...) {
		if seen[h.Index()] || !o.Live(h) {
			t.Fatalf("%v repeated or not live", h)
		}
		seen[h.Index()] = true
	}
	if st := o.Stats(); st.Issued != 616 || st.Live != 616 || st.Shared != 0 || st.Buffered != 0 {
		t.Fatalf("final: %+v", st)
	}
	for _, h := range first[:300] {
		if o.Live(h) {
			t.Fatalf("%v freed but live", h)
		}
	}
	if err := o.FreeMany([]handle.Handle{got[0], got[0]}); !errors.Is(err, handle.ErrStale) {
		t.Fatalf("FreeMany with a repeat = %v, want ErrStale", err)
	}
	if o.Live(got[0]) {
		t.Fatal("first of FreeMany not freed")
	}
}

func TestClose(t *testing.T) {
	o := handle.New()
	r := o.Remote()
	h, _ := o.Allocate()
	if r.Released() {
		t.Fatal("released before Release")
	}
	o.Release()
	o.Release()
	if !r.Released() {
		t.Fatal("remote does not report Release")
	}
	if _, err := r.Allocate(); !errors.Is(err, handle.ErrReleased) {
		t.Errorf("remote Allocate = %v", err)
	}
	if n, err := r.AllocMany(make([]handle.Handle, 3)); n != 0 || !errors.Is(err, handle.ErrReleased) {
		t.Errorf("remote AllocMany = %d, %v", n, err)
	}
	if _, err := o.Allocate(); !errors.Is(err, handle.ErrReleased) {
		t.Errorf("Allocate = %v", err)
	}
	if err := o.Free(h); !errors.Is(err, handle.ErrReleased) {
		t.Errorf("Free = %v", err)
	}
	if !o.Live(h) || o.Stats().Live != 1 {
		t.Errorf("Live and Stats after Release: %v %+v", o.Live(h), o.Stats())
	}
}

// TestChunkBoundaries frees and reuses enough indices to fill several
// chunks of both tables, checking every generation.
func TestChunkBoundaries(t *testing.T) {
	const n = 5000 // chunks 0-3
	o := handle.New()
	hs := make([]handle.Handle, n)
	if _, err := o.AllocMany(hs); err != nil {
		t.Fatal(err)
	}
	for round := uint32(1); round <= 3; round++ {
		if err := o.FreeMany(hs); err != nil {
			t.Fatal(err)
		}
		o.Flush()
		if _, err := o.Remote().AllocMany(hs); err != nil {
			t.Fatal(err)
		}
		seen := make([]bool, n+1)
		for _, h := range hs {
			if h.Generation() != round || h.Index() == 0 || h.Index() > n || seen[h.Index()] {
				t.Fatalf("round %d: %v", round, h)
			}
			seen[h.Index()] = true
		}
	}
}
