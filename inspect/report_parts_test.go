package inspect_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/inspect"
)

// TestMapParts: each buffer of a map is one group named by the buffer,
// texture arrays are grids of titled layers, and the stats table gives the
// frame's figures apart from the history.
func TestMapParts(t *testing.T) {
	d := sample(t)
	svg, err := inspect.MapSVG(&d)
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	if n := strings.Count(s, `<g class="gpumem-buffer"`); n != len(d.Buffers) {
		t.Errorf("%d buffer groups, want %d", n, len(d.Buffers))
	}
	if strings.Count(s, "<g") != strings.Count(s, "</g>") {
		t.Error("unbalanced groups")
	}
	for i := range 12 {
		if !strings.Contains(s, "<title>layer "+itoa(i)+":") {
			t.Errorf("no cell for layer %d", i)
		}
	}
	if !strings.Contains(s, "textures/page 0 (texture page, 12 layers of 4.0 KiB)") {
		t.Error("texture page heading")
	}
	table, err := inspect.StatsTable(d.Buffers, d.Totals)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">this frame<", ">since start<", `<td class="moving">1</td><td class="frame-moves">1</td>`, "<td>-</td>"} {
		if !strings.Contains(string(table), want) {
			t.Errorf("table lacks %q", want)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestPlotParts: a stacked plot draws a band per series at their running
// sums; hover columns give each value; markers are drawn and named; a
// dashed series is drawn after the fills.
func TestPlotParts(t *testing.T) {
	p := inspect.Plot{Title: "t", Unit: inspect.UnitCount, FirstX: 1, XLabel: "frame", Stacked: true,
		Series:  []inspect.Series{{Name: "a", Color: "#111111", Values: []float64{1, 2, 3}}, {Name: "b", Color: "#222222", Values: []float64{4, 5, 6}}},
		Markers: []inspect.Marker{{X: 2, Color: "#333333", Legend: "grew", Label: "slab grew"}}}
	s := string(p.SVG())
	if n := strings.Count(s, `class="band"`); n != 2 {
		t.Errorf("%d bands, want 2", n)
	}
	for _, want := range []string{"frame 2&#xA;a: 2&#xA;b: 5&#xA;total: 7&#xA;slab grew", `class="marker"`, ">grew<", "gpumem-plot stacked"} {
		if !strings.Contains(s, want) {
			t.Errorf("plot lacks %q", want)
		}
	}
	p = inspect.Plot{Series: []inspect.Series{{Name: "reserved", Dash: true, Values: []float64{1, 2}}, {Name: "occupied", Fill: true, Values: []float64{1, 2}}}}
	s = string(p.SVG())
	if strings.LastIndex(s, "<polygon") > strings.Index(s, `data-series="reserved"`) || !strings.Contains(s, "stroke-dasharray") {
		t.Error("the dashed series is not drawn over the fill")
	}
}
