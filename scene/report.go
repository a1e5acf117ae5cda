package scene

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
)

// WriteReport writes the HTML report, to be read at a glance from the
// top: the problems (see figures), the key figures as cards, then plots
// over the frames, the buffers and gpumem's time by manager as tables,
// headroom against the device's limits, the memory maps, and the text
// summary. A run that stopped early is reported up to its last frame.
func (r *Run) WriteReport(w io.Writer) error {
	var sum strings.Builder
	r.WriteSummary(&sum)
	fig := r.figures()
	n := len(r.records)
	series := func(f func(frameRecord) float64) []float64 {
		v := make([]float64, n)
		for i, rec := range r.records {
			v[i] = f(rec)
		}
		return v
	}
	// Markers where buffers were replaced or added (bind groups that use
	// them need rebuilding), on the memory plot only, thinned so that
	// each stands for the frames near it.
	var markers []inspect.Marker
	for i, rec := range r.records {
		if len(rec.rebind) > 0 {
			markers = append(markers, inspect.Marker{X: i + 1, Color: "#7a4fa0", Legend: "buffer grown or added (rebuild bind groups)",
				Label: "grown or added: " + strings.Join(rec.rebind, "; ")})
		}
	}
	markers = thinMarkers(markers, n, maxMarkers)
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
	millis := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	plots := []reportPlot{
		{"plot-memory", "", inspect.Plot{Title: "Memory: capacity, reserved and occupied (all buffers)", Unit: inspect.UnitBytes, FirstX: 1, XLabel: "frame", Markers: markers, Series: []inspect.Series{
			{Name: "capacity", Color: "#909ca8", Values: series(func(f frameRecord) float64 { return float64(f.capacity) })},
			{Name: "occupied", Color: inspect.KindColor("vertex"), Fill: true, Values: series(func(f frameRecord) float64 { return float64(f.occupied) })},
			{Name: "reserved (occupied + bin slack)", Color: inspect.KindColor("index"), Dash: true, Values: series(func(f frameRecord) float64 { return float64(f.reserved) })},
		}}},
		{"plot-time", "", inspect.Plot{Title: "Time per frame (CPU): the whole frame, and gpumem's calls in it", Unit: inspect.UnitMillis, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
			{Name: "whole frame (with the demo's checks and device waits)", Color: "#b4bcc5", Fill: true, Values: series(func(f frameRecord) float64 { return millis(f.dur) })},
			{Name: "gpumem's calls (Flush, Sweep, ring, pool, registry)", Color: "#e8590c", Fill: true, Values: series(func(f frameRecord) float64 { return millis(f.gpumem) })},
		}}},
		{"plot-managers", "", inspect.Plot{Title: "gpumem's time per frame (CPU) by manager, stacked", Unit: inspect.UnitMillis, FirstX: 1, XLabel: "frame", Stacked: true, Series: byMgr}},
		{"plot-categories", "", inspect.Plot{Title: "Memory by category: capacity held, stacked", Unit: inspect.UnitBytes, FirstX: 1, XLabel: "frame", Stacked: true, Series: byCat}},
		{"plot-traffic", "", inspect.Plot{Title: "Bytes per frame: uploaded, moved, copied by growth, read back (stacked)", Unit: inspect.UnitBytes, FirstX: 1, XLabel: "frame", Stacked: true, Series: []inspect.Series{
			{Name: "uploaded (CPU to GPU)", Color: inspect.KindColor("vertex"), Values: series(func(f frameRecord) float64 { return float64(f.uploaded) })},
			{Name: "moved (sweeps, compactions)", Color: inspect.KindColor("meshlet-rows"), Values: series(func(f frameRecord) float64 { return float64(f.bytesMoved) })},
			{Name: "copied into grown buffers", Color: inspect.KindColor("index"), Values: series(func(f frameRecord) float64 { return float64(f.grownCopy) })},
			{Name: "read back (checks)", Color: inspect.KindColor("pool"), Values: series(func(f frameRecord) float64 { return float64(f.readBack) })},
		}}},
		{"plot-moves", "", inspect.Plot{Title: "Moves per frame (sweeps and compactions)", Unit: inspect.UnitCount, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
			{Name: "moves", Color: inspect.KindColor("meshlet-data"), Fill: true, Values: series(func(f frameRecord) float64 { return float64(f.moves) })},
		}}},
		{"plot-fragmentation", "", inspect.Plot{Title: "Fragmentation: 1 - largest free / free (mesh slabs and meshlet arenas)", Unit: inspect.UnitRatio, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
			{Name: "fragmentation", Color: inspect.KindColor("texture"), Fill: true, Values: series(func(f frameRecord) float64 { return f.fragmentation })},
		}}},
	}
	if u := r.usage; u != nil {
		plots = append(plots, reportPlot{"plot-budget", "", inspect.Plot{Title: fmt.Sprintf("Budget: the managers' usage against the limit of %s", inspect.FormatBytes(u.Limit)), Unit: inspect.UnitBytes, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
			{Name: "limit", Color: "#c0392b", Values: series(func(frameRecord) float64 { return float64(u.Limit) })},
			{Name: "pressure level", Color: "#909ca8", Dash: true, Values: series(func(frameRecord) float64 { return float64(u.Pressure) })},
			{Name: "usage", Color: inspect.KindColor("vertex"), Fill: true, Values: series(func(f frameRecord) float64 { return float64(f.budget) })},
		}}})
	}
	for i := range plots {
		plots[i].Note = clipOutliers(&plots[i].p)
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
	scale := ""
	if r.opts.Scale > 1 {
		scale = fmt.Sprintf(", scale %d", r.opts.Scale)
	}
	if r.opts.Budget > 0 {
		scale += ", budget " + inspect.FormatBytes(r.opts.Budget)
	}
	return reportPage.Execute(w, reportData{
		Frames: n, Of: r.opts.Frames + r.opts.Unload, Seed: r.opts.Seed, Scale: scale, Device: r.device,
		Problems: fig.problems, Cards: fig.cards(), Summary: sum.String(), Style: inspect.PageStyle,
		Plots: plots, Buffers: table{bufferColumns, r.bufferRows()}, Managers: table{managerColumns, r.managerRows()},
		Notes: joinNotes(r.notes), Headroom: r.headroom(), Maps: maps, Markers: len(markers),
	})
}

// joinNotes returns the managers' notes a manager to an item: the
// summary continues a manager's note on lines that start with two spaces.
func joinNotes(lines []string) []string {
	var notes []string
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "  "); ok && len(notes) > 0 {
			notes[len(notes)-1] += " " + rest
			continue
		}
		notes = append(notes, l)
	}
	return notes
}

// reportPlot is one plot of the report, with a note on what clipping hid.
type reportPlot struct {
	ID   string
	Note string
	p    inspect.Plot
}

func (p reportPlot) Title() string      { return p.p.Title }
func (p reportPlot) SVG() template.HTML { return p.p.SVG() }

type mapSection struct {
	ID, Label, Frame string
	SVG, Table       template.HTML
}

// table is a table of the report: a header row, then rows of cells.
type table struct {
	Head []string
	Rows [][]string
}

type reportData struct {
	Frames, Of    int
	Seed          uint64
	Scale, Device string
	Problems      []string
	Cards         []card
	Summary       string
	Style         template.CSS
	Plots         []reportPlot
	Buffers       table
	Managers      table
	Notes         []string
	Headroom      template.HTML
	Maps          []mapSection
	Markers       int
}

// card is one key figure at the top of the report: Value large, Detail
// under it; Bad colors it as a problem, Good as a pass.
type card struct {
	Label, Value, Detail string
	Bad, Good            bool
}

// cards returns the key figures as the report's cards.
func (f figures) cards() []card {
	cs := []card{
		{Label: "Resident", Value: inspect.FormatBytes(f.resident), Detail: fmt.Sprintf("occupied at the last frame; peak %s; buffers hold %s", inspect.FormatBytes(f.residentPeak), inspect.FormatBytes(f.capacity))},
		{Label: "Streamed in", Value: inspect.FormatBytes(f.streamedPerSecond) + "/s", Detail: "meshes, meshlets and textures, at 60 frames a second"},
		{Label: "gpumem per frame, median", Value: ms(f.gpumemMedian), Detail: fmt.Sprintf("the whole frame, with the demo's work: %s", ms(f.frameMedian))},
		{Label: "gpumem per frame, 99th percentile", Value: ms(f.gpumemP99), Bad: f.gpumemP99 > frameBudget,
			Detail: fmt.Sprintf("a frame at 60 frames a second is %s; the whole frame's: %s", ms(frameBudget), ms(f.frameP99))},
		f.gpuCard(),
		{Label: "Moves", Value: strconv.FormatUint(f.moves, 10), Detail: fmt.Sprintf("%s moved by sweeps and compactions, %.1f moves a frame", inspect.FormatBytes(f.movedBytes), float64(f.moves)/float64(max(f.frames, 1)))},
		{Label: "Fragmentation", Value: pct(f.fragmentation), Detail: fmt.Sprintf("mean over the frames (1 - largest free / free); %s at the last frame", pct(f.fragLast))},
	}
	if u := f.budget; u != nil {
		c := card{Label: "Budget headroom", Value: inspect.FormatBytes(u.Limit - min(u.Peak, u.Limit)),
			Detail: fmt.Sprintf("peak %s of the limit of %s; %d refusals", inspect.FormatBytes(u.Peak), inspect.FormatBytes(u.Limit), u.Refusals)}
		c.Bad = u.Refusals > 0
		cs = append(cs, c)
	} else {
		cs = append(cs, card{Label: "Headroom (no budget)", Value: inspect.FormatBytes(f.maxBuffer - min(f.largestBuffer, f.maxBuffer)),
			Detail: fmt.Sprintf("to the device's largest buffer, %s; the largest here is %s (%s)", inspect.FormatBytes(f.maxBuffer), inspect.FormatBytes(f.largestBuffer), percentOf(f.largestBuffer, f.maxBuffer))})
	}
	if f.intact {
		cs = append(cs, card{Label: "Data", Value: "every byte intact", Good: true,
			Detail: fmt.Sprintf("%d spot checks during the run; all %d live items read back at the end", f.spot, f.final)})
	} else {
		cs = append(cs, card{Label: "Data", Value: "not checked to the end", Bad: true,
			Detail: fmt.Sprintf("the run stopped; %d spot checks passed before it", f.spot)})
	}
	return cs
}

// percentOf formats a as a percentage of b, "-" when b is 0.
func percentOf(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 1, 64) + "%"
}

// maxMarkers is the most markers a plot draws: more are merged with their
// neighbours, so the lines stay apart on a plot a thousand pixels wide.
const maxMarkers = 16

// thinMarkers merges markers closer than n/most frames apart into the
// first of them, whose label then names the frames and what each had.
func thinMarkers(ms []inspect.Marker, n, most int) []inspect.Marker {
	if len(ms) <= most {
		return ms
	}
	gap := (n + most - 1) / most
	var out []inspect.Marker
	var labels []string
	flush := func(last int) {
		k := &out[len(out)-1]
		if len(labels) > 1 {
			k.Label = fmt.Sprintf("frames %d to %d, %d with buffers grown or added:\n%s", k.X, last, len(labels), strings.Join(labels, "\n"))
		}
	}
	last := 0
	for _, m := range ms {
		if len(out) > 0 && m.X-out[len(out)-1].X < gap {
			labels = append(labels, fmt.Sprintf("frame %d: %s", m.X, m.Label))
			last = m.X
			continue
		}
		if len(out) > 0 {
			flush(last)
		}
		out = append(out, m)
		labels = []string{fmt.Sprintf("frame %d: %s", m.X, m.Label)}
		last = m.X
	}
	flush(last)
	return out
}

// clipOutliers lowers the axis of a plot whose few highest frames would
// flatten the rest: where the top of a frame (the sum, stacked) is more
// than clipFactor times the 95th percentile of the tops, the axis ends at
// clipFactor times that percentile, those frames are drawn at the axis'
// top and marked, and their values are in the markers' hover text. It
// returns a note saying so, "" where nothing was clipped.
func clipOutliers(p *inspect.Plot) string {
	n := 0
	for _, s := range p.Series {
		n = max(n, len(s.Values))
	}
	if n < 20 {
		return ""
	}
	tops := make([]float64, n)
	for i := range n {
		for _, s := range p.Series {
			if i < len(s.Values) {
				if p.Stacked {
					tops[i] += s.Values[i]
				} else {
					tops[i] = max(tops[i], s.Values[i])
				}
			}
		}
	}
	sorted := slices.Clone(tops)
	slices.Sort(sorted)
	q := sorted[int(math.Ceil(0.95*float64(n)))-1]
	ceiling := clipFactor * q
	if !(q > 0) || sorted[n-1] <= ceiling {
		return ""
	}
	var clipped []int
	for i, t := range tops {
		if t <= ceiling {
			continue
		}
		clipped = append(clipped, i)
		for k := range p.Series {
			v := p.Series[k].Values
			if i >= len(v) {
				continue
			}
			if p.Stacked {
				v[i] *= ceiling / t
			} else {
				v[i] = min(v[i], ceiling)
			}
		}
		label := fmt.Sprintf("frame %d: %s, above the axis", p.FirstX+i, formatUnit(p.Unit, t))
		p.Markers = append(p.Markers, inspect.Marker{X: p.FirstX + i, Color: outlierColor, Legend: "frame above the axis", Label: label})
	}
	slices.SortStableFunc(p.Markers, func(a, b inspect.Marker) int { return a.X - b.X })
	hi := slices.Max(tops)
	frames := fmt.Sprintf("%d frames above it (up to %s) do", len(clipped), formatUnit(p.Unit, hi))
	if len(clipped) == 1 {
		frames = fmt.Sprintf("frame %d above it (%s) does", p.FirstX+clipped[0], formatUnit(p.Unit, hi))
	}
	return fmt.Sprintf("The axis ends at %s, %d times the 95th percentile, so %s not flatten the rest: drawn at the top, marked in red.",
		formatUnit(p.Unit, ceiling), clipFactor, frames)
}

// formatUnit formats v as a plot's axis does.
func formatUnit(u inspect.Unit, v float64) string {
	switch u {
	case inspect.UnitBytes:
		return inspect.FormatBytes(uint64(max(v, 0)))
	case inspect.UnitRatio:
		return pct(v)
	case inspect.UnitMillis:
		return strconv.FormatFloat(v, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// clipFactor times the 95th percentile of a plot's frames is where
// clipOutliers ends its axis.
const clipFactor = 3

// outlierColor marks the frames a plot's axis clips.
const outlierColor = "#d62728"

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
	var rows []headroomRow
	var largest uint64
	slabs, arrays := 0, 0
	// Idle buffers (no allocation in them) of one kind share a row.
	idle := map[memory.Kind][]memory.Buffer{}
	var idleKinds []memory.Kind
	for _, b := range r.last.Buffers {
		if b.Layers == 0 {
			largest = max(largest, b.CapacityBytes)
		}
		if b.Stats.Allocations == 0 {
			if idle[b.Kind] == nil {
				idleKinds = append(idleKinds, b.Kind)
			}
			idle[b.Kind] = append(idle[b.Kind], b)
			continue
		}
		rows = append(rows, r.headroomRow(b))
		if b.Kind == memory.VertexSlab || b.Kind == memory.IndexSlab {
			slabs++
			arrays += b.Stats.Allocations
		}
	}
	for _, k := range idleKinds {
		bufs := idle[k]
		if len(bufs) == 1 {
			rows = append(rows, r.headroomRow(bufs[0]))
			continue
		}
		t := memory.Totals(bufs)
		var most uint64
		for _, b := range bufs {
			most = max(most, b.CapacityBytes)
		}
		rw := r.headroomRow(bufs[0])
		rw.Name = fmt.Sprintf("%d idle %ss (nothing in them)", len(bufs), cmp.Or(k.String(), "buffer"))
		rw.Size = inspect.FormatBytes(t.CapacityBytes) + " in all"
		rw.OfMax = "at most " + pct(float64(most)/float64(max(lim.MaxBufferSize, 1)))
		rw.Idle = true
		rows = append(rows, rw)
	}
	var b strings.Builder
	headroomTable.Execute(&b, struct {
		Rows                  []headroomRow
		MaxBuffer, MaxStorage string
		MaxLayers             uint32
		Largest               string
		LargestPct            string
		Slabs, Arrays         int
	}{rows, inspect.FormatBytes(lim.MaxBufferSize), inspect.FormatBytes(lim.MaxStorageBufferBindingSize), lim.MaxArrayLayers,
		inspect.FormatBytes(largest), percentOf(largest, lim.MaxBufferSize), slabs, arrays})
	return template.HTML(b.String())
}

// headroomRow is a row of the headroom table: a buffer, or the idle
// buffers of one kind.
type headroomRow struct {
	Name, Usage, Size, OfMax, Binding, Layers string
	Idle                                      bool
}

// headroomRow returns b's row of the headroom table.
func (r *Run) headroomRow(b memory.Buffer) headroomRow {
	lim := r.limits
	rw := headroomRow{Name: b.Name, Usage: cmp.Or(b.UsageString(), "-"), Size: inspect.FormatBytes(b.CapacityBytes), OfMax: percentOf(b.CapacityBytes, lim.MaxBufferSize), Binding: "-", Layers: "-"}
	if b.Layers != 0 {
		rw.OfMax = "-" // a texture: its limits are layers and size
		rw.Layers = fmt.Sprintf("%d of %d", b.Layers, lim.MaxArrayLayers)
	}
	if b.Usage.Has(device.Storage) {
		rw.Binding = percentOf(b.CapacityBytes, lim.MaxStorageBufferBindingSize) + " of a storage binding"
	}
	return rw
}

var headroomTable = template.Must(template.New("headroom").Parse(`<p class="muted">The device's limits: largest buffer {{.MaxBuffer}},
largest storage binding {{.MaxStorage}}, {{.MaxLayers}} layers in a texture array. The largest buffer here is {{.Largest}}, {{.LargestPct}} of the limit.
{{if .Slabs}}The {{.Arrays}} vertex and index arrays in the mesh slabs draw from {{.Slabs}} buffers: {{.Slabs}} buffer binds where one buffer per array would take {{.Arrays}}.{{end}}</p>
<table class="headroom">
<tr><th>buffer</th><th>usage</th><th>size</th><th>of the largest buffer</th><th>binding</th><th>layers</th></tr>
{{range .Rows}}<tr{{if .Idle}} class="idle"{{end}}><td>{{.Name}}</td><td>{{.Usage}}</td><td>{{.Size}}</td><td>{{.OfMax}}</td><td>{{.Binding}}</td><td>{{.Layers}}</td></tr>
{{end}}</table>`))

var reportPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>gpumem demo report</title>
<style>{{.Style}}
body{max-width:1180px}
.sub{color:#5f6b76;font-size:14px;margin:-6px 0 14px}
.verdict{border-radius:6px;padding:10px 14px;margin:0 0 14px;font-size:14px}
.verdict.ok{background:#e8f5e9;border:1px solid #a5d6a7}
.verdict.bad{background:#fdecea;border:1px solid #f5a9a3}
.verdict ul{margin:4px 0 0;padding-left:20px}.verdict li{margin:3px 0}
.cards{display:grid;grid-template-columns:repeat(4,1fr);gap:10px;margin:0 0 16px}
.card{border:1px solid #dde2e7;border-radius:6px;padding:10px 12px;background:#fafbfc}
.card .label{font-size:12px;color:#5f6b76;text-transform:uppercase;letter-spacing:.03em}
.card .value{font-size:24px;font-weight:bold;margin:4px 0 2px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.card .detail{font-size:12px;color:#5f6b76}
.card.bad{border-color:#f5a9a3;background:#fdf3f2}.card.bad .value{color:#c62828}
.card.good .value{color:#2e7d32}
nav{font-size:13px;margin:0 0 8px}nav a{margin-right:12px}
.note{font-size:12px;color:#5f6b76;margin:-2px 0 12px}
tr.idle td{color:#5f6b76;font-style:italic}
ul.notes{font-size:13px;line-height:1.5}
pre{background:#f3f5f7;padding:12px;font-size:12px;white-space:pre-wrap}
details>summary{cursor:pointer}details>summary h3{display:inline;font-size:15px}
h3{font-size:15px;margin:20px 0 6px}</style>
</head>
<body>
<h1>gpumem demo report</h1>
<p class="sub">{{.Frames}}{{if ne .Frames .Of}} of {{.Of}}{{end}} frames of scene streaming, seed {{.Seed}}{{.Scale}}, on {{.Device}}</p>
{{if .Problems}}<div class="verdict bad" id="problems"><b>{{len .Problems}} problem{{if gt (len .Problems) 1}}s{{end}}</b><ul>
{{range .Problems}}<li>{{.}}</li>
{{end}}</ul></div>
{{else}}<div class="verdict ok" id="problems"><b>No problems:</b> every frame ran, every byte read back intact, no meshes left waiting, gpumem's 99th percentile within a frame at 60 frames a second.</div>
{{end}}<div class="cards" id="figures">
{{range .Cards}}<div class="card{{if .Bad}} bad{{end}}{{if .Good}} good{{end}}"><div class="label">{{.Label}}</div><div class="value">{{.Value}}</div><div class="detail">{{.Detail}}</div></div>
{{end}}</div>
<nav id="contents"><a href="#over-time">Over time</a><a href="#buffers">Buffers</a><a href="#managers">Time by manager</a><a href="#notes">Managers' notes</a><a href="#headroom">Headroom</a><a href="#maps">Memory maps</a><a href="#summary">Text summary</a></nav>
<h2 id="over-time">Over time</h2>
<p class="muted">Hover over a chart for the values at a frame. {{if .Markers}}Purple lines on the memory chart mark frames where a buffer grew or was added (bind groups that use it need rebuilding); nearby frames share a line.{{end}}
The charts show CPU time; the GPU time of gpumem's work is in the cards above and the text summary.</p>
{{range .Plots}}<div id="{{.ID}}">{{.SVG}}</div>
{{with .Note}}<p class="note">{{.}}</p>{{end}}
{{end}}
<h2 id="buffers">Buffers at the last frame</h2>
<p class="muted">The managers' buffers as they show them, grouped by kind and element size; growths, moves and moved over each live buffer's life; fragmentation of the mesh slabs and meshlet arenas.</p>
{{template "table" .Buffers}}
<h2 id="managers">gpumem's time per frame by manager</h2>
<p class="muted">Each manager's own quantiles, over all frames and over the second half; share: of gpumem's time over the run.</p>
{{template "table" .Managers}}
<h2 id="notes">Managers' notes</h2>
<ul class="notes">{{range .Notes}}<li>{{.}}</li>
{{end}}</ul>
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
<h2 id="summary">Text summary</h2>
<details><summary>As gpumem demo printed it</summary><pre>{{.Summary}}</pre></details>
</body>
</html>
{{define "table"}}<div class="scroll"><table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></div>{{end}}`))

// gpuCard is the card of the GPU's time for gpumem's work a frame.
func (f figures) gpuCard() card {
	if !f.gpuOK {
		return card{Label: "GPU per frame", Value: "not measured", Detail: "the device has no timestamp queries"}
	}
	return card{Label: "GPU per frame, median", Value: ms(f.gpuMedian), Bad: f.gpuP99 > frameBudget,
		Detail: fmt.Sprintf("the work gpumem recorded (copies, moves, mips), by timestamps; 99th percentile %s", ms(f.gpuP99))}
}
