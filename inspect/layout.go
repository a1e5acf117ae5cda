package inspect

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpumem/gpumem/memory"
)

// A memory map is laid out once, as rectangles and text in a 1100-pixel
// wide picture, and the layout is then written as SVG or rasterized to a
// PNG, so the two formats agree. Each buffer is one bar across the whole
// width, whatever its capacity (the axis under it gives the scale):
// allocations in their owner kind's color, with a darker left edge,
// bin-rounding slack in a lighter tint of it, free space in gray, moving
// allocations striped.

// Geometry of a map, in pixels.
const (
	mapWidth   = 1100
	mapMargin  = 16
	barHeight  = 28
	blockH     = 78 // one buffer: header, bar, axis
	emptyH     = 56 // the empty buffers of one kind: header and a row of boxes
	lineH      = 20 // a line of the map's header
	textSmall  = 11
	textNormal = 13
	textTitle  = 16
)

// Colors of the map.
var (
	colorFree   = rgb(0xdd, 0xe2, 0xe7)
	colorBorder = rgb(0x90, 0x9c, 0xa8)
	colorText   = rgb(0x20, 0x24, 0x28)
	colorMuted  = rgb(0x5f, 0x6b, 0x76)
	colorBG     = rgb(0xff, 0xff, 0xff)
)

// kindColors are the colors of the owner kinds gpumem's managers use;
// other kinds take one of extraColors by a hash of their name, so a kind
// has the same color in every map.
var kindColors = map[string]color.RGBA{
	"vertex":       rgb(0x4e, 0x79, 0xa7),
	"index":        rgb(0xf2, 0x8e, 0x2b),
	"meshlet-data": rgb(0x59, 0xa1, 0x4f),
	"meshlet-rows": rgb(0xb0, 0x7a, 0xa1),
	"texture":      rgb(0xe1, 0x57, 0x59),
	"ring":         rgb(0x76, 0xb7, 0xb2),
	"pool":         rgb(0xed, 0xc9, 0x48),
	"arena":        rgb(0x9c, 0x75, 0x5f),
	"offset":       rgb(0x6b, 0x6e, 0xcf),
}

var extraColors = []color.RGBA{
	rgb(0x17, 0xbe, 0xcf), rgb(0xbc, 0xbd, 0x22), rgb(0xff, 0x9d, 0xa7), rgb(0x8c, 0x56, 0x4b),
	rgb(0x1f, 0x77, 0xb4), rgb(0xd6, 0x27, 0x28), rgb(0x94, 0x67, 0xbd), rgb(0x2c, 0xa0, 0x2c),
}

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{r, g, b, 0xff} }

// KindColor returns the color maps draw allocations of an owner kind in,
// as "#rrggbb". The same kind always has the same color.
func KindColor(kind string) string { return hexColor(kindColor(kind)) }

func kindColor(kind string) color.RGBA {
	if c, ok := kindColors[kind]; ok {
		return c
	}
	h := fnv.New32a()
	h.Write([]byte(kind))
	return extraColors[h.Sum32()%uint32(len(extraColors))]
}

// tint mixes c with white: f of white.
func tint(c color.RGBA, f float64) color.RGBA {
	m := func(v uint8) uint8 { return uint8(float64(v) + (255-float64(v))*f + 0.5) }
	return rgb(m(c.R), m(c.G), m(c.B))
}

// shade mixes c with black: f of black.
func shade(c color.RGBA, f float64) color.RGBA {
	m := func(v uint8) uint8 { return uint8(float64(v)*(1-f) + 0.5) }
	return rgb(m(c.R), m(c.G), m(c.B))
}

func hexColor(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// shape is one rectangle of a layout. A rectangle with a title is the
// hover target of a region; its parts (used, slack, edge) follow it, with
// part set.
type shape struct {
	x, y, w, h float64
	fill       color.RGBA
	stroke     bool // outline in colorBorder, no fill
	striped    bool // moving: diagonal stripes over the fill
	title      string
	part       bool
}

// span is the shapes of one buffer: shapes[start:end].
type span struct {
	name       string
	start, end int
}

// text is one line of text of a layout; anchor is 's'tart, 'm'iddle or 'e'nd.
type text struct {
	x, y   float64
	size   int
	anchor byte
	bold   bool
	fill   color.RGBA
	s      string
}

type layout struct {
	w, h   int
	title  string
	shapes []shape
	texts  []text
	spans  []span // one per buffer, in order
}

// Geometry of a texture array's grid of layers, in pixels.
const (
	cellW, cellH = 16, 16 // a layer, gap included
	cellGap      = 2
)

// gridCols returns how many layers a grid row holds.
func gridCols() int { return (mapWidth - 2*mapMargin) / cellW }

// blockHeight returns the height of b's block: a bar and its axis, or a
// grid of its layers.
func blockHeight(b *memory.Buffer) int {
	if b.Layers == 0 {
		return blockH
	}
	rows := (int(b.Layers) + gridCols() - 1) / gridCols()
	return 22 + rows*cellH + 6
}

// layoutMap lays out d, which must be checked: the header (the title and
// the totals, wrapped to the width, and the legend), then a block per
// buffer, except that the empty buffers (no allocation) of a kind, where
// there are two or more, share one row of boxes.
func layoutMap(d *Dump) *layout {
	l := &layout{w: mapWidth}
	title := "gpumem memory map"
	if d.Label != "" {
		title += " - " + d.Label
	}
	if d.Device != "" {
		title += " - " + d.Device
	}
	l.title = title
	width := mapWidth - 2*mapMargin
	y := 24.0
	for _, line := range wrap(title, textTitle, true, width) {
		l.text(mapMargin, y, textTitle, 's', true, colorText, line)
		y += lineH + 2
	}
	y -= 2
	t := d.Totals
	totals := fmt.Sprintf("%d buffers, %s capacity: %s occupied, %s bin slack, %s free in %d regions (largest %s), fragmentation %s, %d allocations",
		len(d.Buffers), FormatBytes(t.CapacityBytes), FormatBytes(t.OccupiedBytes), FormatBytes(t.SlackBytes),
		FormatBytes(t.FreeBytes), t.FreeRegions, FormatBytes(t.LargestFreeBytes), percent(t.Fragmentation), t.Allocations)
	for _, line := range wrap(totals, textNormal, false, width) {
		l.text(mapMargin, y, textNormal, 's', false, colorMuted, line)
		y += lineH - 2
	}
	y = l.legend(d, y) + 8
	empty := map[memory.Kind][]*memory.Buffer{}
	for i := range d.Buffers {
		if b := &d.Buffers[i]; isEmptyBar(b) {
			empty[b.Kind] = append(empty[b.Kind], b)
		}
	}
	for i := range d.Buffers {
		b := &d.Buffers[i]
		if group := empty[b.Kind]; isEmptyBar(b) && len(group) > 1 {
			if b == group[0] {
				l.emptyRow(group, y)
				y += emptyH
			}
			continue
		}
		start := len(l.shapes)
		if b.Layers != 0 {
			l.grid(b, y)
		} else {
			l.buffer(b, y)
		}
		l.spans = append(l.spans, span{b.Name, start, len(l.shapes)})
		y += float64(blockHeight(b))
	}
	l.h = int(y) + mapMargin
	return l
}

// isEmptyBar reports whether b is a buffer (not a texture array) with no
// allocation in it.
func isEmptyBar(b *memory.Buffer) bool { return b.Layers == 0 && b.Stats.Allocations == 0 }

// emptyRow lays out the empty buffers of one kind at y: a heading, then a
// box per buffer, side by side, each as wide as its share of their
// capacity (at least a few pixels), each a span of its own.
func (l *layout) emptyRow(bufs []*memory.Buffer, y float64) {
	var total uint64
	for _, b := range bufs {
		total += b.CapacityBytes
	}
	l.text(mapMargin, y+14, textNormal, 's', true, colorText, fmt.Sprintf("%d empty %ss", len(bufs), cmp.Or(bufs[0].Kind.String(), "buffer")))
	l.text(mapWidth-mapMargin, y+14, textSmall, 'e', false, colorMuted, FormatBytes(total)+" in all, nothing allocated in them")
	const gap, least = 3.0, 6.0
	width := float64(mapWidth-2*mapMargin) - gap*float64(len(bufs)-1)
	free := width - least*float64(len(bufs)) // shared by capacity
	x := float64(mapMargin)
	for _, b := range bufs {
		w := least + max(free, 0)*float64(b.CapacityBytes)/float64(max(total, 1))
		start := len(l.shapes)
		l.shapes = append(l.shapes, shape{x: x, y: y + 22, w: w, h: barHeight, fill: colorFree,
			title: fmt.Sprintf("%s: %s, empty", b.Name, FormatBytes(b.CapacityBytes))},
			shape{x: x, y: y + 22, w: w, h: barHeight, stroke: true})
		l.spans = append(l.spans, span{b.Name, start, len(l.shapes)})
		x += w + gap
	}
}

func (l *layout) text(x, y float64, size int, anchor byte, bold bool, fill color.RGBA, s string) {
	l.texts = append(l.texts, text{x, y, size, anchor, bold, fill, s})
}

// legend draws a swatch per owner kind present in d, in name order, then
// slack, moving and free, in rows from y (the top of the first), and
// returns the y under the last row.
func (l *layout) legend(d *Dump, y float64) float64 {
	var kinds []string
	for _, b := range d.Buffers {
		for _, r := range b.Regions {
			if r.Live() {
				kinds = append(kinds, r.Kind)
			}
		}
	}
	slices.Sort(kinds)
	kinds = slices.Compact(kinds)
	x := float64(mapMargin)
	item := func(label string, c color.RGBA, striped bool) {
		w := 19 + float64(drawnWidth(label, textSmall, false))
		if x > mapMargin && x+w > mapWidth-mapMargin {
			x, y = mapMargin, y+lineH
		}
		l.shapes = append(l.shapes, shape{x: x, y: y, w: 14, h: 14, fill: c, striped: striped})
		l.text(x+19, y+11, textSmall, 's', false, colorText, label)
		x += w + 18
	}
	for _, k := range kinds {
		item(cmp.Or(k, "(no kind)"), kindColor(k), false)
	}
	item("bin slack", tint(colorMuted, 0.55), false)
	item("moving", colorMuted, true)
	item("free", colorFree, false)
	return y + lineH
}

// head lays out the line above a buffer's bar or grid: its name, kind
// and element size on the left, its figures on the right.
func (l *layout) head(b *memory.Buffer, y float64) {
	s := b.Stats
	head := b.Name
	if b.Kind != memory.Other {
		head += " (" + b.Kind.String()
		switch {
		case b.Layers != 0:
			head += fmt.Sprintf(", %d layers of %s", b.Layers, FormatBytes(uint64(b.ElemBytes)))
		case b.ElemBytes != 0:
			head += ", " + FormatBytes(uint64(b.ElemBytes)) + " elements"
		}
		head += ")"
	}
	occ := 0.0
	if b.CapacityBytes > 0 {
		occ = float64(s.ReservedBytes) / float64(b.CapacityBytes)
	}
	info := fmt.Sprintf("%s, %s allocations, %s reserved, %s free in %d", FormatBytes(b.CapacityBytes), group(s.Allocations),
		percent(occ), FormatBytes(s.FreeBytes), s.FreeRegions)
	if b.Layers == 0 {
		info += ", frag " + percent(s.Fragmentation)
	}
	if s.Moving > 0 || s.FrameMoves > 0 {
		info += fmt.Sprintf("; this frame %s moved", group(s.Moving))
	}
	if s.Growths+s.Moves > 0 {
		info += fmt.Sprintf("; since start %d growths, %s moves", s.Growths, group(int(min(s.Moves, 1<<62))))
	}
	l.text(mapMargin, y+14, textNormal, 's', true, colorText, fit(head, textNormal, true, mapWidth-2*mapMargin-drawnWidth(info, textSmall, false)-12))
	l.text(mapWidth-mapMargin, y+14, textSmall, 'e', false, colorMuted, info)
}

// fit returns s, or as much of it as fits in width pixels at size, bold,
// with an ellipsis after, so a heading never runs into the figures beside
// it (the full name is in the table).
func fit(s string, size int, bold bool, width int) string {
	if drawnWidth(s, size, bold) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && drawnWidth(string(r)+"…", size, bold) > width {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// drawnWidth bounds the width of s at size in both renderings: the PNG's
// Go fonts (textWidth) and a browser's sans-serif in the SVG, whose
// glyphs average about 0.56 of the size across (0.62 bold: DejaVu Sans,
// measured on the maps' headings).
func drawnWidth(s string, size int, bold bool) int {
	em := 0.56
	if bold {
		em = 0.62
	}
	return max(textWidth(s, size, bold), int(em*float64(size)*float64(len([]rune(s)))+0.5))
}

// wrap breaks s into lines no wider than width at size, between words;
// a word wider than the line is cut with an ellipsis.
func wrap(s string, size int, bold bool, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case drawnWidth(line+" "+w, size, bold) <= width:
			line += " " + w
		default:
			lines = append(lines, fit(line, size, bold, width))
			line = w
		}
	}
	return append(lines, fit(line, size, bold, width))
}

// grid lays out a texture array's block at y: a cell per layer, in rows.
func (l *layout) grid(b *memory.Buffer, y float64) {
	l.head(b, y)
	lb := uint64(b.ElemBytes)
	cols := gridCols()
	cell := func(i uint64) (float64, float64) {
		return float64(mapMargin + int(i)%cols*cellW), y + 22 + float64(int(i)/cols*cellH)
	}
	for _, r := range b.Regions {
		for i := r.Offset / lb; i < (r.Offset+r.Size+lb-1)/lb && i < uint64(b.Layers); i++ {
			x, cy := cell(i)
			w, h := float64(cellW-cellGap), float64(cellH-cellGap)
			if !r.Live() {
				l.shapes = append(l.shapes, shape{x: x, y: cy, w: w, h: h, fill: colorFree,
					title: fmt.Sprintf("layer %d: free", i)})
				continue
			}
			name := r.Name
			if name == "" {
				name = "(unnamed)"
			}
			title := fmt.Sprintf("layer %d: %s (%s)\nsize %s", i, name, r.Kind, exact(lb))
			if r.State == memory.StateMoving {
				title += "\nmoving"
			}
			l.shapes = append(l.shapes, shape{x: x, y: cy, w: w, h: h, fill: kindColor(r.Kind), striped: r.State == memory.StateMoving, title: title})
		}
	}
}

// buffer lays out one buffer's block at y.
func (l *layout) buffer(b *memory.Buffer, y float64) {
	l.head(b, y)

	bx, by, bw := float64(mapMargin), y+22, float64(mapWidth-2*mapMargin)
	l.shapes = append(l.shapes, shape{x: bx, y: by, w: bw, h: barHeight, fill: colorFree,
		title: fmt.Sprintf("%s: %s", b.Name, FormatBytes(b.CapacityBytes))})
	scale := bw / float64(b.CapacityBytes)
	for _, r := range b.Regions {
		x, w := bx+float64(r.Offset)*scale, float64(r.Size)*scale
		if !r.Live() {
			l.shapes = append(l.shapes, shape{x: x, y: by, w: w, h: barHeight, fill: colorFree,
				title: fmt.Sprintf("free\noffset %s\nsize %s", exact(r.Offset), exact(r.Size))})
			continue
		}
		c := kindColor(r.Kind)
		name := r.Name
		if name == "" {
			name = "(unnamed)"
		}
		title := fmt.Sprintf("%s (%s)\noffset %s\nsize %s", name, r.Kind, exact(r.Offset), exact(r.Size))
		if r.Used < r.Size {
			title += fmt.Sprintf(", used %s, slack %s", FormatBytes(r.Used), FormatBytes(r.Size-r.Used))
		}
		if r.State == memory.StateMoving {
			title += "\nmoving"
		}
		uw := float64(r.Used) * scale
		l.shapes = append(l.shapes, shape{x: x, y: by, w: uw, h: barHeight, fill: c, striped: r.State == memory.StateMoving, title: title})
		if r.Used < r.Size {
			l.shapes = append(l.shapes, shape{x: x + uw, y: by, w: w - uw, h: barHeight, fill: tint(c, 0.55), part: true})
		}
		if w >= 4 {
			l.shapes = append(l.shapes, shape{x: x, y: by, w: 1, h: barHeight, fill: shade(c, 0.35), part: true})
		}
	}
	l.shapes = append(l.shapes, shape{x: bx, y: by, w: bw, h: barHeight, stroke: true})
	// Axis: round ticks in the unit that suits the capacity, and the
	// capacity at the end.
	tick := func(off uint64, label string, anchor byte) {
		x := bx + bw*float64(off)/float64(b.CapacityBytes)
		l.shapes = append(l.shapes, shape{x: x - 0.5, y: by + barHeight, w: 1, h: 4, fill: colorBorder})
		l.text(x, by+barHeight+16, textSmall, anchor, false, colorMuted, label)
	}
	step, unit, name := axisStep(b.CapacityBytes)
	tick(0, "0", 's')
	for k := 1.0; ; k++ {
		v := k * step // in unit
		// No tick within an eighth of the end, where the capacity is.
		if v*float64(unit) >= 0.88*float64(b.CapacityBytes) {
			break
		}
		tick(uint64(math.Round(v*float64(unit))), strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)+" "+name, 'm')
	}
	tick(b.CapacityBytes, FormatBytes(b.CapacityBytes), 'e')
}

// axisStep returns the step between the round ticks of an axis from 0 to
// capacity bytes, in a binary unit that suits the capacity: 1, 2, 2.5 or 5
// times a power of ten of the unit, at least a fifth of the capacity.
func axisStep(capacity uint64) (step float64, unit uint64, name string) {
	unit, name = 1, "B"
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if capacity < unit<<10 {
			break
		}
		unit, name = unit<<10, u
	}
	raw := float64(capacity) / float64(unit) / 5
	if raw <= 0 {
		return 1, unit, name
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*p >= raw {
			return m * p, unit, name
		}
	}
	return 10 * p, unit, name
}

// FormatBytes formats n bytes in the largest binary unit that keeps it at
// least 1, with one decimal (two below 10 GiB, TiB, ...): "512 B",
// "1.5 KiB", "12.0 MiB", "2.00 GiB".
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 5 {
		v /= unit
		i++
	}
	prec := 1
	if v < 10 && i >= 2 {
		prec = 2
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + " " + [...]string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}[i]
}

// exact is FormatBytes with the exact count of bytes after it.
func exact(n uint64) string {
	if n < 1024 {
		return FormatBytes(n)
	}
	return FormatBytes(n) + " (" + group(int(min(n, 1<<62))) + " B)"
}

func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

// group formats n with commas between groups of three digits.
func group(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
