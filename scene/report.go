package scene

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
)

// writeReport writes the HTML report: contents, the summary, plots over
// frames, headroom against the device's limits, and the memory maps, each
// once.
func (r *Run) WriteReport(w io.Writer) error {
	var sum strings.Builder
	r.WriteSummary(&sum)
	n := len(r.records)
	series := func(f func(frameRecord) float64) []float64 {
		v := make([]float64, n)
		for i, rec := range r.records {
			v[i] = f(rec)
		}
		return v
	}
	// Markers where buffers were replaced or added: bind groups that use
	// them need rebuilding.
	var markers []inspect.Marker
	for i, rec := range r.records {
		if len(rec.rebind) > 0 {
			markers = append(markers, inspect.Marker{X: i + 1, Color: "#7a4fa0", Legend: "buffer grown or added (rebuild bind groups)",
				Label: "grown or added: " + strings.Join(rec.rebind, "; ")})
		}
	}
	var byCat []inspect.Series
	for k, c := range categories {
		byCat = append(byCat, inspect.Series{Name: c, Color: categoryColor(c), Values: series(func(f frameRecord) float64 { return float64(f.byCategory[k]) })})
	}
	// gpumem's time by manager, stacked: the sum is gpumem's time.
	var byMgr []inspect.Series
	for m := range numManagers {
		if m == mgrStaging && !r.opts.Belt {
			continue
		}
		byMgr = append(byMgr, inspect.Series{Name: managerNames[m], Color: managerColors[m],
			Values: series(func(f frameRecord) float64 { return float64(f.byManager[m]) / float64(time.Millisecond) })})
	}
	type plotSection struct {
		ID, Title string
		SVG       template.HTML
	}
	plots := []struct {
		id string
		p  inspect.Plot
	}{
		{"plot-memory", inspect.Plot{Title: "Memory: capacity, reserved and occupied (all buffers)", Unit: inspect.UnitBytes, FirstX: 1, XLabel: "frame", Markers: markers, Series: []inspect.Series{
			{Name: "capacity", Color: "#909ca8", Values: series(func(f frameRecord) float64 { return float64(f.capacity) })},
			{Name: "occupied", Color: inspect.KindColor("vertex"), Fill: true, Values: series(func(f frameRecord) float64 { return float64(f.occupied) })},
			{Name: "reserved (occupied + bin slack)", Color: inspect.KindColor("index"), Dash: true, Values: series(func(f frameRecord) float64 { return float64(f.reserved) })},
		}}},
		{"plot-categories", inspect.Plot{Title: "Memory by category: capacity held, stacked", Unit: inspect.UnitBytes, FirstX: 1, XLabel: "frame", Stacked: true, Markers: markers, Series: byCat}},
		{"plot-traffic", inspect.Plot{Title: "Bytes per frame: uploaded, moved, copied by growth, read back (stacked)", Unit: inspect.UnitBytes, FirstX: 1, XLabel: "frame", Stacked: true, Series: []inspect.Series{
			{Name: "uploaded (CPU to GPU)", Color: inspect.KindColor("vertex"), Values: series(func(f frameRecord) float64 { return float64(f.uploaded) })},
			{Name: "moved (sweeps, compactions)", Color: inspect.KindColor("meshlet-rows"), Values: series(func(f frameRecord) float64 { return float64(f.bytesMoved) })},
			{Name: "copied into grown buffers", Color: inspect.KindColor("index"), Values: series(func(f frameRecord) float64 { return float64(f.grownCopy) })},
			{Name: "read back (checks)", Color: inspect.KindColor("pool"), Values: series(func(f frameRecord) float64 { return float64(f.readBack) })},
		}}},
		{"plot-moves", inspect.Plot{Title: "Moves per frame (sweeps and compactions)", Unit: inspect.UnitCount, FirstX: 1, XLabel: "frame", Markers: markers, Series: []inspect.Series{
			{Name: "moves", Color: inspect.KindColor("meshlet-data"), Fill: true, Values: series(func(f frameRecord) float64 { return float64(f.moves) })},
		}}},
		{"plot-fragmentation", inspect.Plot{Title: "Fragmentation: 1 - largest free / free (mesh slabs and meshlet arenas)", Unit: inspect.UnitRatio, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
			{Name: "fragmentation", Color: inspect.KindColor("texture"), Fill: true, Values: series(func(f frameRecord) float64 { return f.fragmentation })},
		}}},
		{"plot-time", inspect.Plot{Title: "Time per frame (CPU): the whole frame, with the demo's checks and device waits, and gpumem's calls alone", Unit: inspect.UnitMillis, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
			{Name: "frame", Color: "#5f6b76", Values: series(func(f frameRecord) float64 { return float64(f.dur) / float64(time.Millisecond) })},
			{Name: "gpumem's calls (Flush, Sweep, ring, pool, registry)", Color: inspect.KindColor("vertex"), Fill: true, Values: series(func(f frameRecord) float64 { return float64(f.gpumem) / float64(time.Millisecond) })},
		}}},
		{"plot-managers", inspect.Plot{Title: "gpumem's time per frame (CPU) by manager, stacked", Unit: inspect.UnitMillis, FirstX: 1, XLabel: "frame", Stacked: true, Series: byMgr}},
	}
	if r.usage != nil {
		u := r.usage
		plots = append(plots, struct {
			id string
			p  inspect.Plot
		}{"plot-budget", inspect.Plot{Title: fmt.Sprintf("Budget: the managers' usage against the limit of %s", inspect.FormatBytes(u.Limit)), Unit: inspect.UnitBytes, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
			{Name: "limit", Color: "#c0392b", Values: series(func(frameRecord) float64 { return float64(u.Limit) })},
			{Name: "pressure level", Color: "#909ca8", Dash: true, Values: series(func(frameRecord) float64 { return float64(u.Pressure) })},
			{Name: "usage", Color: inspect.KindColor("vertex"), Fill: true, Values: series(func(f frameRecord) float64 { return float64(f.budget) })},
		}}})
	}
	var plotSecs []plotSection
	for i := range plots {
		plotSecs = append(plotSecs, plotSection{plots[i].id, plots[i].p.Title, plots[i].p.SVG()})
	}

	type mapSection struct {
		ID, Label, Frame string
		SVG, Table       template.HTML
	}
	var maps []mapSection
	for i := range r.maps {
		d, idle := drawn(&r.maps[i])
		svg, err := inspect.MapSVG(d)
		if err != nil {
			return err
		}
		table, err := inspect.StatsTable(d.Buffers, d.Totals)
		if err != nil {
			return err
		}
		f := frameOf(*d)
		note := r.frameNote(f, d)
		if idle != "" {
			note += " " + idle
		}
		if l := d.BudgetLine(); l != "" {
			note += " " + l
		}
		maps = append(maps, mapSection{ID: "frame-" + strconv.Itoa(f), Label: d.Label, Frame: note, SVG: svg, Table: table})
	}
	return reportPage.Execute(w, struct {
		Frames   int
		Seed     uint64
		Device   string
		Summary  string
		Style    template.CSS
		Plots    []plotSection
		Headroom template.HTML
		Maps     []mapSection
		Markers  int
	}{r.opts.Frames, r.opts.Seed, r.device, sum.String(), inspect.PageStyle, plotSecs, r.headroom(), maps, len(markers)})
}

// managerColors are the managers' colors in the plot of gpumem's time:
// their memory's where they have one.
var managerColors = [numManagers]string{
	mgrMesh: inspect.KindColor("vertex"), mgrStaging: "#b8860b", mgrMeshlet: inspect.KindColor("meshlet-data"),
	mgrBindless: inspect.KindColor("texture"), mgrRing: inspect.KindColor("ring"), mgrFrame: "#3d7a76", mgrPool: inspect.KindColor("pool"),
}

// drawn returns what the report draws of d: every buffer but the pool's
// idle read-back buffers (whole, empty bars), which a note sums up.
func drawn(d *inspect.Dump) (*inspect.Dump, string) {
	var keep []memory.Buffer
	n, bytes := 0, uint64(0)
	for _, b := range d.Buffers {
		if b.Kind == memory.PoolBuffer && b.Stats.Allocations == 0 {
			n++
			bytes += b.CapacityBytes
			continue
		}
		keep = append(keep, b)
	}
	if n == 0 {
		return d, ""
	}
	k := inspect.New(d.Device, d.Label, keep...)
	k.Budget = d.Budget
	return &k, fmt.Sprintf("Not drawn: the pool's %d idle read-back buffers (%s).", n, inspect.FormatBytes(bytes))
}

// frameNote says what frame f did, for the heading of its map: the moves
// the managers recorded (the plot's figure) and the allocations the map
// stripes.
func (r *Run) frameNote(f int, d *inspect.Dump) string {
	if f < 1 || f > len(r.records) {
		return ""
	}
	rec := r.records[f-1]
	t := d.Totals
	s := fmt.Sprintf("This frame: %d moves recorded (%s), %s uploaded; %d allocations moved, striped on the map (at another place than the frame before, at the same size)",
		t.FrameMoves, inspect.FormatBytes(t.FrameBytesMoved), inspect.FormatBytes(rec.uploaded), t.Moving)
	if t.FrameMoves > uint64(t.Moving) {
		s += fmt.Sprintf("; the other %d moves moved allocations the frame then freed or moved again: no stripe of their own", t.FrameMoves-uint64(t.Moving))
	}
	s += "."
	if len(rec.rebind) > 0 {
		s += " Grown or added: " + strings.Join(rec.rebind, "; ") + " (rebuild bind groups)."
	}
	return s
}

// headroom returns the table of the last frame's buffers against the
// device's limits, with their usage flags, and what sharing slabs saves in
// buffer binds.
func (r *Run) headroom() template.HTML {
	lim := r.limits
	type row struct {
		Name, Usage, Size, OfMax, Binding, Layers string
	}
	pct := func(a, b uint64) string {
		if b == 0 {
			return "-"
		}
		return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 1, 64) + "%"
	}
	var rows []row
	var largest uint64
	slabs, arrays := 0, 0
	for _, b := range r.last.Buffers {
		rw := row{Name: b.Name, Usage: cmp.Or(b.UsageString(), "-"), Size: inspect.FormatBytes(b.CapacityBytes), OfMax: pct(b.CapacityBytes, lim.MaxBufferSize), Binding: "-", Layers: "-"}
		if b.Layers != 0 {
			rw.OfMax = "-" // a texture: its limits are layers and size
			rw.Layers = fmt.Sprintf("%d of %d", b.Layers, lim.MaxArrayLayers)
		} else {
			largest = max(largest, b.CapacityBytes)
		}
		if b.Usage.Has(device.Storage) {
			rw.Binding = pct(b.CapacityBytes, lim.MaxStorageBufferBindingSize) + " of a storage binding"
		}
		if b.Kind == memory.VertexSlab || b.Kind == memory.IndexSlab {
			slabs++
			arrays += b.Stats.Allocations
		}
		rows = append(rows, rw)
	}
	var b strings.Builder
	headroomTable.Execute(&b, struct {
		Rows                  []row
		MaxBuffer, MaxStorage string
		MaxLayers             uint32
		Largest               string
		LargestPct            string
		Slabs, Arrays         int
	}{rows, inspect.FormatBytes(lim.MaxBufferSize), inspect.FormatBytes(lim.MaxStorageBufferBindingSize), lim.MaxArrayLayers,
		inspect.FormatBytes(largest), pct(largest, lim.MaxBufferSize), slabs, arrays})
	return template.HTML(b.String())
}

var headroomTable = template.Must(template.New("headroom").Parse(`<p class="muted">The device's limits: largest buffer {{.MaxBuffer}},
largest storage binding {{.MaxStorage}}, {{.MaxLayers}} layers in a texture array. The largest buffer here is {{.Largest}}, {{.LargestPct}} of the limit.
{{if .Slabs}}The {{.Arrays}} vertex and index arrays in the mesh slabs draw from {{.Slabs}} buffers: {{.Slabs}} buffer binds where one buffer per array would take {{.Arrays}}.{{end}}</p>
<table class="headroom">
<tr><th>buffer</th><th>usage</th><th>size</th><th>of the largest buffer</th><th>binding</th><th>layers</th></tr>
{{range .Rows}}<tr><td>{{.Name}}</td><td>{{.Usage}}</td><td>{{.Size}}</td><td>{{.OfMax}}</td><td>{{.Binding}}</td><td>{{.Layers}}</td></tr>
{{end}}</table>`))

var reportPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>gpumem demo report</title>
<style>{{.Style}}
pre{background:#f3f5f7;padding:12px;font-size:12px;overflow-x:auto}
nav ol{margin:4px 0 0;padding-left:22px;font-size:14px;line-height:1.6}nav ol ol{font-size:13px}
details>summary{cursor:pointer}details>summary h3{display:inline;font-size:15px}
h3{font-size:15px;margin:20px 0 6px}</style>
</head>
<body>
<h1>gpumem demo report</h1>
<p class="muted">{{.Frames}} frames of scene streaming, seed {{.Seed}}, on {{.Device}}.
As a camera circles a loop of zones, each zone's meshes (the mesh allocator's slabs), meshlet batches (the meshlet manager) and
textures (the bindless registry's pages) stream in and out; per-frame constants and vertices go through the ring buffer and the frame arena, fenced; read-backs lease
buffers from the pool. Slabs and arenas sweep within a budget each frame; written data is read back and checked.</p>
<nav id="contents"><h2>Contents</h2>
<ol>
<li><a href="#summary">Summary of the run</a></li>
<li><a href="#over-time">Over time</a><ol>
{{range .Plots}}<li><a href="#{{.ID}}">{{.Title}}</a></li>
{{end}}</ol></li>
<li><a href="#headroom">Headroom against the device's limits</a></li>
<li><a href="#maps">Memory maps</a><ol>
{{range .Maps}}<li><a href="#{{.ID}}">{{.Label}}</a></li>
{{end}}</ol></li>
</ol></nav>
<h2 id="summary">Summary of the run</h2>
<pre>{{.Summary}}</pre>
<h2 id="over-time">Over time</h2>
<p class="muted">Hover over a chart for the values at a frame. {{if .Markers}}Purple lines mark the {{.Markers}} frames where a buffer grew or was added (a new buffer: bind groups that use it need rebuilding).{{end}}
GPU time is not shown: the device interface has no timestamp queries.</p>
{{range .Plots}}<div id="{{.ID}}">{{.SVG}}</div>
{{end}}
<h2 id="headroom">Headroom against the device's limits</h2>
{{.Headroom}}
<h2 id="maps">Memory maps</h2>
<p class="muted">One bar per buffer, to its own scale; texture pages as a grid of their layers. Allocations are colored by owner kind; the lighter part of one is bin-rounding slack;
striped allocations moved during that frame; gray is free. Hover over a region for its owner, offset and size. In each table, "now" is the state at the end of the frame,
"this frame" what the frame moved, "since start" the manager's history ("-" where the manager keeps none per buffer).</p>
{{range .Maps}}<details open id="{{.ID}}"><summary><h3>{{.Label}}</h3></summary>
<p class="muted frame-note">{{.Frame}}</p>
{{.SVG}}
{{.Table}}
</details>
{{end}}
</body>
</html>
`))
