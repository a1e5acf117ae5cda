package inspect_test

import (
	"testing"

	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
)

// holder is a memory.Holder of fixed buffers, built from live regions.
func holder(t *testing.T, bufs map[string][]memory.Region, moves map[string]uint64) memory.Holder {
	t.Helper()
	var out []memory.Buffer
	for _, name := range []string{"a", "b"} {
		b, err := memory.NewBuffer(name, memory.ArenaBuffer, 1024, bufs[name])
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := moves[name]; ok {
			b = b.WithHistory(memory.Stats{Moves: m, BytesMoved: 64 * m})
		}
		out = append(out, b)
	}
	return fixed(out)
}

// fixed is a memory.Holder that shows the same buffers every time.
type fixed []memory.Buffer

func (f fixed) Memory() []memory.Buffer { return f }

// TestMarkMoved is a table: an earlier snapshot, a later one, and what
// MarkMoved marks: an owner at another offset of the same buffer at the
// same size moved; a new owner, one of another size, one in another
// buffer did not; a buffer's frame moves are its history's since, or the
// marks, whichever is more.
func TestMarkMoved(t *testing.T) {
	r := func(off, size uint64, kind, name string) memory.Region {
		return memory.Region{Offset: off, Size: size, Kind: kind, Name: name}
	}
	before := inspect.Snapshot("host", "frame 1", holder(t, map[string][]memory.Region{
		"a": {r(0, 64, "vertex", "m1"), r(128, 64, "vertex", "m2"), r(256, 64, "vertex", "m3"), r(512, 64, "index", "m1")},
		"b": {r(0, 64, "vertex", "m4")},
	}, map[string]uint64{"a": 5}))
	after := inspect.Snapshot("host", "frame 2", holder(t, map[string][]memory.Region{
		"a": {
			r(0, 64, "vertex", "m2"),   // moved down
			r(64, 32, "vertex", "m3"),  // re-placed at another size
			r(128, 64, "vertex", "m1"), // moved up
			r(512, 64, "index", "m1"),  // stayed
			r(640, 64, "vertex", "m5"), // new
		},
		"b": {r(64, 64, "vertex", "m6"), r(256, 64, "vertex", "m4")}, // m4 moved; no history
	}, map[string]uint64{"a": 9}))
	after.MarkMoved(&before)
	want := map[string]bool{"a/vertex/m1": true, "a/vertex/m2": true, "b/vertex/m4": true}
	for _, b := range after.Buffers {
		for _, rg := range b.Regions {
			if !rg.Live() {
				continue
			}
			if got := rg.State == memory.StateMoving; got != want[b.Name+"/"+rg.Kind+"/"+rg.Name] {
				t.Errorf("%s %s %s: moving %v", b.Name, rg.Kind, rg.Name, got)
			}
		}
	}
	a, b := after.Buffers[0].Stats, after.Buffers[1].Stats
	if a.Moving != 2 || a.FrameMoves != 4 || a.FrameBytesMoved != 256 || b.Moving != 1 || b.FrameMoves != 1 || b.FrameBytesMoved != 64 {
		t.Errorf("a: %d moving, %d moves, %d bytes; b: %d, %d, %d", a.Moving, a.FrameMoves, a.FrameBytesMoved, b.Moving, b.FrameMoves, b.FrameBytesMoved)
	}
	if after.Totals.Moving != 3 || after.Totals.FrameMoves != 5 {
		t.Errorf("totals %+v", after.Totals)
	}
	if err := after.Check(); err != nil {
		t.Fatal(err)
	}

	after.Rename(func(r memory.Region) string {
		if r.Name == "m1" {
			return "zone1/mesh1"
		}
		return ""
	})
	n := 0
	for _, rg := range after.Buffers[0].Regions {
		if rg.Name == "zone1/mesh1" {
			n++
		}
		if rg.Name == "m1" {
			t.Error("m1 not renamed")
		}
	}
	if n != 2 {
		t.Errorf("%d regions renamed, want m1's two", n)
	}
}
