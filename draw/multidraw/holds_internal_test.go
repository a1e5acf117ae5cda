//go:build cgo || js

package multidraw

import (
	"testing"

	"github.com/gpumem/gpumem/draw"
)

// TestHolds: a Prepare skips encoding only for the draws and spans the
// entries buffer holds, word for word: a draw, a span's first draw or
// (counted) its count that differs, another count of spans or the other
// mode's layout, and nothing sent, each make holds false.
func TestHolds(t *testing.T) {
	draws := []draw.Draw{{Slot: 3, Instances: 1, Object: 0}, {Slot: 7, Instances: 2, Object: 1}, {Slot: 1, Instances: 1, Object: 2}}
	spans := []draw.Span{{First: 0, Count: 2}, {First: 2, Count: 1}}
	for _, counted := range []bool{false, true} {
		d := &Drawer{}
		if d.holds(draws, spans, counted) {
			t.Fatalf("counted %v: holds with nothing sent", counted)
		}
		if err := d.encode(draws, spans, 8, counted); err != nil {
			t.Fatal(err)
		}
		d.sent = d.next
		if !nativeLE {
			t.Skip("holds answers false on a big-endian host")
		}
		if !d.holds(draws, spans, counted) {
			t.Fatalf("counted %v: the draws sent are not held", counted)
		}
		other := append([]draw.Draw(nil), draws...)
		other[1].Object = 5
		moved := []draw.Span{{First: 0, Count: 1}, {First: 1, Count: 2}}
		recounted := []draw.Span{{First: 0, Count: 2}, {First: 2, Count: 0}}
		for _, c := range []struct {
			what   string
			draws  []draw.Draw
			spans  []draw.Span
			count  bool
			unseen bool // the difference is one holds need not see
		}{
			{"another draw", other, spans, counted, false},
			{"a span's first draw", draws, moved, counted, false},
			{"a span's count", draws, recounted, counted, !counted},
			{"one span", draws, spans[:1], counted, false},
			{"fewer draws", draws[:2], spans, counted, false},
			{"the other mode", draws, spans, !counted, false},
		} {
			if got := d.holds(c.draws, c.spans, c.count); got != c.unseen {
				t.Errorf("counted %v, %s: holds %v", counted, c.what, got)
			}
		}
	}
}
