package inspect

import (
	"strings"
	"testing"

	"github.com/gpumem/gpumem/memory"
)

// TestAxisStep: an axis's ticks are round numbers of a unit that suits
// the capacity, at least a fifth of it apart.
func TestAxisStep(t *testing.T) {
	for _, tt := range []struct {
		capacity uint64
		step     float64
		unit     string
	}{
		{0, 1, "B"},
		{3, 1, "B"},
		{1000, 200, "B"},
		{576 << 10, 200, "KiB"},
		{940_954, 200, "KiB"}, // 918.9 KiB: ticks were 229.7, 459.4, 689.2 KiB
		{64 << 10, 20, "KiB"},
		{1 << 20, 0.2, "MiB"},
		{12 << 20, 2.5, "MiB"},
		{3 << 30, 1, "GiB"},
	} {
		step, _, unit := axisStep(tt.capacity)
		if step != tt.step || unit != tt.unit {
			t.Errorf("axisStep(%d) = %g %s, want %g %s", tt.capacity, step, unit, tt.step, tt.unit)
		}
	}
}

// TestMapHeaderWhole: a long title and totals wrap onto more lines, every
// line within the map, none cut; a heading too long for its line ends in
// an ellipsis the Go fonts draw.
func TestMapHeaderWhole(t *testing.T) {
	d := New("webgpu: llvmpipe (LLVM 15.0.6, 256 bits), Vulkan 1.3 on Mesa 22.3.6 with a very long adapter description indeed", "frame 300, the frame with the most moves")
	l := layoutMap(&d)
	var title []string
	for _, tx := range l.texts {
		if w := drawnWidth(tx.s, tx.size, tx.bold); tx.anchor == 's' && tx.x+float64(w) > mapWidth-mapMargin {
			t.Errorf("%q runs past the right edge: %d pixels from %g", tx.s, w, tx.x)
		}
		if tx.size == textTitle {
			title = append(title, tx.s)
		}
	}
	if got := strings.Join(title, " "); got != l.title || len(title) < 2 {
		t.Errorf("title lines %q, want all of %q on two or more", title, l.title)
	}
	if f := fit(strings.Repeat("slab ", 100), textNormal, true, 300); !strings.HasSuffix(f, "…") || drawnWidth(f, textNormal, true) > 300 {
		t.Errorf("fit: %q", f)
	}
	if g, err := goFont(true).GlyphIndex(nil, '…'); err != nil || g == 0 {
		t.Errorf("the Go font has no ellipsis: %v", err)
	}
}

// TestEmptyBuffersShareARow: the empty buffers of a kind, two or more,
// are one row of boxes, each still a group of its own; a lone empty
// buffer keeps its bar.
func TestEmptyBuffersShareARow(t *testing.T) {
	var bufs []memory.Buffer
	for i := range 5 {
		b, err := memory.NewBuffer("pool/readback", memory.PoolBuffer, uint64(4096*(i+1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		b.Name += string(rune('a' + i))
		bufs = append(bufs, b)
	}
	ring, err := memory.NewBuffer("ring", memory.RingBuffer, 1<<16, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := New("host", "frame 1", append(bufs, ring)...)
	l := layoutMap(&d)
	if len(l.spans) != 6 {
		t.Fatalf("%d groups, want one per buffer", len(l.spans))
	}
	var rows int
	for _, tx := range l.texts {
		if strings.HasPrefix(tx.s, "5 empty pool buffers") {
			rows++
		}
	}
	if rows != 1 {
		t.Errorf("%d rows of empty pool buffers, want 1", rows)
	}
	alone := layoutMap(&Dump{Version: d.Version, Buffers: d.Buffers[4:]})
	if alone.h-l.h != blockH-emptyH || len(alone.spans) != 2 {
		t.Errorf("lone empty buffer: %d groups, height %d", len(alone.spans), alone.h)
	}
}
