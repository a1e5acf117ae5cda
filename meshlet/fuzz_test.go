package meshlet_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/meshlet"
)

// maxFuzzCommands bounds one input's commands, so an input runs in
// milliseconds.
const maxFuzzCommands = 256

// FuzzManager drives adds, AddBatches calls (all or nothing: a refused one
// is verified against the model at once), removes, clones, sweeps, compactions and arming
// against the model: after every sweep and compaction, every 16 commands
// and at the end, both buffers are read back and every batch checked, and
// every call's changed reports are checked against what moved. The first
// two bytes choose the row layout; then each command is three bytes.
// Minimizing a new input can take most of a minute: for short runs, pass
// -fuzzminimizetime 2s.
func FuzzManager(f *testing.F) {
	f.Add([]byte{3, 1, 0, 4, 9, 1, 7, 3, 2, 2, 2, 3, 0, 0, 4, 1, 0, 5, 2, 0, 6, 0, 0})
	f.Add([]byte{0, 0, 0, 200, 255, 0, 200, 255, 3, 0, 0, 7, 0, 0, 5, 0, 0, 0, 1, 1, 5, 7, 0})
	f.Add([]byte{4, 3, 1, 7, 15, 1, 7, 15, 4, 1, 0, 4, 2, 0, 3, 0, 0, 7, 0, 0, 5, 3, 0, 6, 0, 0})
	f.Add([]byte{2, 1, 0, 5, 1, 0, 5, 1, 0, 5, 1, 3, 0, 0, 3, 2, 0, 7, 0, 0, 5, 1, 1, 7, 3, 1, 7, 2, 3})
	f.Add([]byte{11, 2, 2, 11, 9, 2, 250, 4, 3, 0, 0, 2, 7, 130, 2, 11, 17, 5, 0, 0, 2, 200, 3, 7, 0, 0, 2, 31, 8, 6, 0, 0})
	f.Fuzz(fuzzManager)
}

// hostileAddrs are address words past any batch's data, near 2^31 and
// 2^32, where a word index plus the data's offset wraps.
var hostileAddrs = []uint32{1<<32 - 1, 1<<32 - 4, 1 << 31, 1<<31 - 1, 1<<32 - 64, 4097, 1 << 16}

func fuzzManager(t *testing.T, in []byte) {
	if len(in) < 2 {
		return
	}
	rw := 1 + uint32(in[0])%5
	opts := meshlet.Options{RowWords: rw, AddressWord: uint32(in[1]) % rw, SweepLimits: arena.SweepLimits{Moves: 4},
		Data: arena.Options{InitialElems: 32, MaxElems: 4096, RoundToBins: in[0]&8 != 0},
		Rows: arena.Options{InitialElems: 8, MaxElems: 256, MaxAllocs: 64}}
	md := newModel(t, openHost(t), opts, uint64(len(in)))
	in = in[2:]
	for i := 0; i+3 <= len(in) && i/3 < maxFuzzCommands; i += 3 {
		op, a, b := in[i]%8, uint32(in[i+1]), uint32(in[i+2])
		var err error
		switch {
		case op <= 1:
			n := 1 + a%8
			_, err = md.add(n*(1+b%16)-b%2, n) // an odd length now and then
		case op == 2 && b&0x80 != 0: // AddBatches with a hostile last batch: refused, nothing placed
			ws := []want{md.makeBatch(1+a%8, 1), md.makeBatch(1+b%8, 1)}
			ws[1].rows[md.opts.AddressWord] = hostileAddrs[int(a>>3)%len(hostileAddrs)]
			before := md.m.Stats()
			bs := []meshlet.Batch{{Data: ws[0].data, Rows: ws[0].rows}, {Data: ws[1].data, Rows: ws[1].rows}}
			if _, err := md.m.AddBatches(nil, bs); !errors.Is(err, meshlet.ErrInvalidAddress) {
				t.Fatalf("command %d: AddBatches with a hostile address: %v, want ErrInvalidAddress", i/3, err)
			}
			if after := md.m.Stats(); after != before {
				t.Fatalf("command %d: a refused AddBatches changed the stats", i/3)
			}
		case op == 2: // several batches in one call, all or nothing
			sizes := make([][2]uint32, 1+a%12)
			for k := range sizes {
				n := 1 + (a>>4+uint32(k)*7+b)%8
				sizes[k] = [2]uint32{max(n*(1+(b+uint32(k))%16)-(b>>1+uint32(k))%2, 1), n}
			}
			_, err = md.addBatches(sizes)
			if err != nil || b%4 == 0 {
				md.verify(fmt.Sprintf("command %d: add batches (%v)", i/3, err))
			}
		case op == 3 && len(md.live) > 0:
			md.remove(int(a) % len(md.live))
		case op == 4 && len(md.live) > 0:
			_, err = md.clone(md.live[int(a)%len(md.live)])
		case op == 5 && b&1 == 0:
			md.sweep(arena.SweepLimits{Moves: 1 + int(a%8)})
			md.verify(fmt.Sprintf("command %d: sweep", i/3))
		case op == 5: // a sweep of a few steps in all, over both arenas
			steps := 1 + int(a%4)
			before := md.m.Stats()
			md.sweep(arena.SweepLimits{Steps: steps, Moves: 64})
			after := md.m.Stats()
			if n := after.Data.SweepSteps - before.Data.SweepSteps + after.Rows.SweepSteps - before.Rows.SweepSteps; n > uint64(steps) {
				t.Fatalf("command %d: Sweep of %d steps took %d", i/3, steps, n)
			}
			md.verify(fmt.Sprintf("command %d: sweep", i/3))
		case op == 7 && b&1 == 1: // a hostile address word: refused, nothing placed
			w := md.makeBatch(1+a%8, 1)
			w.rows[md.opts.AddressWord] = hostileAddrs[int(b>>1)%len(hostileAddrs)]
			before := md.m.Stats()
			if _, err := md.m.Add(w.data, w.rows); !errors.Is(err, meshlet.ErrInvalidAddress) {
				t.Fatalf("command %d: Add with address word %d of %d words: %v, want ErrInvalidAddress", i/3, w.rows[md.opts.AddressWord], len(w.data), err)
			}
			if after := md.m.Stats(); after != before {
				t.Fatalf("command %d: a refused Add changed the stats", i/3)
			}
		case op == 6:
			md.compact()
			md.verify(fmt.Sprintf("command %d: compact", i/3))
		case op == 7:
			md.m.Arm()
		}
		if err != nil && !errors.Is(err, arena.ErrFull) && !errors.Is(err, arena.ErrTooManyAllocations) {
			t.Fatalf("command %d: %v", i/3, err)
		}
		if i/3%16 == 15 {
			md.verify(fmt.Sprintf("command %d", i/3))
		}
	}
	md.verify("end")
}
