package scene

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
)

// TestThinMarkers: markers closer than frames/most apart merge into the
// first of them, whose label names every frame it stands for.
func TestThinMarkers(t *testing.T) {
	var ms []inspect.Marker
	for x := 1; x <= 300; x += 6 {
		ms = append(ms, inspect.Marker{X: x, Label: fmt.Sprintf("buffer %d", x)})
	}
	got := thinMarkers(slices.Clone(ms), 300, maxMarkers)
	if len(got) > maxMarkers || got[0].X != 1 {
		t.Fatalf("%d markers, the first at %d: want at most %d, the first at 1", len(got), got[0].X, maxMarkers)
	}
	all := ""
	for _, m := range got {
		all += m.Label + "\n"
	}
	for _, m := range ms {
		if !strings.Contains(all, fmt.Sprintf("frame %d: buffer %d", m.X, m.X)) {
			t.Errorf("frame %d lost in the merged labels", m.X)
		}
	}
	if few := thinMarkers(ms[:5], 300, maxMarkers); len(few) != 5 || few[2].Label != ms[2].Label {
		t.Errorf("five markers changed: %+v", few)
	}
}

// TestClipOutliers: a plot whose first frame is a hundred times the rest
// is clipped near the rest and the frame marked with its value; one
// without outliers is left as it is.
func TestClipOutliers(t *testing.T) {
	steady := make([]float64, 100)
	for i := range steady {
		steady[i] = 1 + float64(i%5)/10
	}
	spiky := slices.Clone(steady)
	spiky[0] = 150
	p := inspect.Plot{Unit: inspect.UnitMillis, FirstX: 1, Stacked: true, Series: []inspect.Series{
		{Name: "a", Values: spiky}, {Name: "b", Values: slices.Clone(steady)}}}
	note := clipOutliers(&p)
	top := p.Series[0].Values[0] + p.Series[1].Values[0]
	if note == "" || top > 3*2.8+1e-9 || len(p.Markers) != 1 || p.Markers[0].X != 1 || !strings.Contains(p.Markers[0].Label, "151.00 ms") {
		t.Errorf("clipped to %g, markers %+v, note %q", top, p.Markers, note)
	}
	flat := inspect.Plot{Unit: inspect.UnitMillis, FirstX: 1, Series: []inspect.Series{{Name: "a", Values: slices.Clone(steady)}}}
	if note := clipOutliers(&flat); note != "" || len(flat.Markers) != 0 || !slices.Equal(flat.Series[0].Values, steady) {
		t.Errorf("a plot without outliers changed: %q, %+v", note, flat.Markers)
	}
}

// TestReportAtAGlance: meshes left staged by Flush's bound are flagged
// at the top of the report, every key figure has its card, and the idle
// buffers of one kind share a row of the headroom table.
func TestReportAtAGlance(t *testing.T) {
	_, run := streamTest(t, Options{Seed: 1, Frames: 40, Scale: 3, FlushBytes: 64 << 10})
	r := reportOf(t, run)
	top, _, _ := strings.Cut(r, `<nav id="contents">`)
	for _, want := range []string{`<div class="verdict bad" id="problems">`, "Meshes still staged: ", "Resident", "Streamed in",
		"gpumem per frame, median", "gpumem per frame, 99th percentile", "GPU per frame", "Moves", "Fragmentation", "Headroom (no budget)", "every byte intact"} {
		if !strings.Contains(top, want) {
			t.Errorf("the report's top lacks %q", want)
		}
	}
	idle := map[memory.Kind][]string{}
	for _, b := range run.Last().Buffers {
		if b.Stats.Allocations == 0 {
			idle[b.Kind] = append(idle[b.Kind], b.Name)
		}
	}
	head := string(run.headroom())
	for k, names := range idle {
		if len(names) < 2 {
			continue
		}
		if !strings.Contains(head, fmt.Sprintf("<td>%d idle %ss", len(names), k)) {
			t.Errorf("no row for the %d idle %ss", len(names), k)
		}
		for _, n := range names {
			if strings.Contains(head, "<td>"+n+"</td>") {
				t.Errorf("idle %s has a row of its own", n)
			}
		}
	}
}
