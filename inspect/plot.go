package inspect

import (
	"bufio"
	"cmp"
	"encoding/xml"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
)

// Plot is a line chart of series over frames (or any steps), drawn as
// SVG: the demo's occupied vs reserved bytes, fragmentation and moves per
// frame. Hovering over the chart shows every series' value at the frame
// under the pointer (an SVG <title> per column, no script). The zero value
// is an empty chart.
type Plot struct {
	Title string
	// Unit formats the Y axis: UnitBytes, UnitRatio (0..1 as percent) or
	// UnitCount.
	Unit Unit
	// FirstX is the X of every series' first value (frame 1, say).
	FirstX int
	// XLabel names the X axis ("frame").
	XLabel string
	Series []Series
	// Stacked draws each series on top of the ones before it, as filled
	// bands (memory by category): the top line is their sum. Hover text
	// gives each series' own value and the total.
	Stacked bool
	// Markers are vertical lines at given steps (where a buffer grew, say).
	Markers []Marker
}

// Series is one line of a Plot. Color is "#rrggbb" (KindColor gives the
// maps' colors); Fill shades the area under the line; Dash draws the
// line dashed and on top of the others, so a line that runs along
// another stays visible.
type Series struct {
	Name   string
	Color  string
	Fill   bool
	Dash   bool
	Values []float64
}

// Marker is a vertical line of a Plot at step X (in the units of FirstX),
// in Color, with Label as its hover text. Markers of one Color share a
// legend entry named by Legend.
type Marker struct {
	X      int
	Color  string
	Legend string
	Label  string
}

// Unit is how a Plot labels its Y axis.
type Unit uint8

// The units of a Plot's Y axis.
const (
	UnitCount Unit = iota
	UnitBytes
	UnitRatio
	UnitMillis // milliseconds
)

func (u Unit) format(v float64) string {
	switch u {
	case UnitBytes:
		return FormatBytes(uint64(max(v, 0)))
	case UnitRatio:
		return strconv.FormatFloat(100*v, 'f', 0, 64) + "%"
	case UnitMillis:
		if v >= 100 {
			return strconv.FormatFloat(v, 'f', 0, 64) + " ms"
		}
		return strconv.FormatFloat(v, 'g', 3, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Geometry of a plot, in pixels.
const (
	plotW, plotH           = 1100, 260
	plotLeft, plotRight    = 80, 20
	plotTop, plotBottom    = 52, 36
	plotInnerW, plotInnerH = plotW - plotLeft - plotRight, plotH - plotTop - plotBottom
	plotMaxPoints          = 2000 // longer series are thinned to this many points
	plotTicksY             = 4
)

// WriteSVG draws the plot as an SVG document. Values that are NaN or
// infinite are drawn as 0. The output is deterministic. O(values).
func (p *Plot) WriteSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	n := 0
	for _, s := range p.Series {
		n = max(n, len(s.Values))
	}
	// drawn holds what each series' line is drawn at: its values, or
	// with Stacked the running sums.
	drawn := make([][]float64, len(p.Series))
	top := 0.0
	var sum []float64
	if p.Stacked {
		sum = make([]float64, n)
	}
	for k, s := range p.Series {
		v := make([]float64, len(s.Values))
		for i, x := range s.Values {
			v[i] = finite(x)
			if p.Stacked {
				sum[i] += v[i]
				v[i] = sum[i]
			}
			top = max(top, v[i])
		}
		drawn[k] = v
	}
	top = niceCeil(top, p.Unit)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s" role="img" class="gpumem-plot`,
		plotW, plotH, plotW, plotH, fontFamily)
	if p.Stacked {
		bw.WriteString(" stacked")
	}
	bw.WriteString(`" aria-label="`)
	xml.EscapeText(bw, []byte(p.Title))
	bw.WriteString(`">` + "\n")
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", plotW, plotH)
	text := func(x, y float64, size int, anchor string, fill, s string) {
		fmt.Fprintf(bw, `<text x="%s" y="%s" font-size="%d" text-anchor="%s" fill="%s">`, num(x), num(y), size, anchor, fill)
		xml.EscapeText(bw, []byte(s))
		bw.WriteString("</text>\n")
	}
	fmt.Fprintf(bw, `<text x="%d" y="20" font-size="%d" font-weight="bold" fill="%s">`, plotLeft, textTitle-1, hexColor(colorText))
	xml.EscapeText(bw, []byte(p.Title))
	bw.WriteString("</text>\n")
	// Legend, under the title: the series, then the markers' kinds.
	lx := float64(plotLeft)
	legend := func(name, color string, tall bool) {
		h := "4"
		y := "30"
		if tall {
			h, y = "12", "26"
		}
		fmt.Fprintf(bw, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`+"\n", num(lx), y, map[bool]string{false: "14", true: "3"}[tall], h, template.HTMLEscapeString(color))
		text(lx+19, 36, textSmall, "start", hexColor(colorText), name)
		lx += 19 + float64(drawnWidth(name, textSmall, false)) + 22
	}
	for _, s := range p.Series {
		legend(s.Name, s.Color, false)
	}
	seen := map[string]bool{}
	for _, m := range p.Markers {
		if m.Legend != "" && !seen[m.Legend] {
			seen[m.Legend] = true
			legend(m.Legend, m.Color, true)
		}
	}
	// Axes and grid.
	for i := 0; i <= plotTicksY; i++ {
		y := float64(plotTop) + float64(plotInnerH)*(1-float64(i)/plotTicksY)
		fmt.Fprintf(bw, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-width="1"/>`+"\n",
			plotLeft, num(y), plotW-plotRight, num(y), hexColor(colorFree))
		text(plotLeft-6, y+4, textSmall, "end", hexColor(colorMuted), p.Unit.format(top*float64(i)/plotTicksY))
	}
	xAt := func(i int) float64 {
		if n <= 1 {
			return plotLeft
		}
		return plotLeft + float64(plotInnerW)*float64(i)/float64(n-1)
	}
	yAt := func(v float64) float64 {
		return float64(plotTop) + float64(plotInnerH)*(1-finite(v)/top)
	}
	for i := 0; i <= 4 && n > 0; i++ {
		k := (n - 1) * i / 4
		text(xAt(k), plotH-plotBottom+16, textSmall, "middle", hexColor(colorMuted), strconv.Itoa(p.FirstX+k))
	}
	if p.XLabel != "" {
		text(plotW-plotRight, plotH-4, textSmall, "end", hexColor(colorMuted), p.XLabel)
	}
	fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="%s"/>`+"\n",
		plotLeft, plotTop, plotInnerW, plotInnerH, hexColor(colorBorder))
	step := max(1, (n+plotMaxPoints-1)/plotMaxPoints)
	points := func(v []float64) string {
		var pts strings.Builder
		for i := 0; i < len(v); i += step {
			fmt.Fprintf(&pts, "%s,%s ", num(xAt(i)), num(yAt(v[i])))
		}
		if last := len(v) - 1; last >= 0 && last%step != 0 {
			fmt.Fprintf(&pts, "%s,%s ", num(xAt(last)), num(yAt(v[last])))
		}
		return strings.TrimSpace(pts.String())
	}
	// Fills first, then lines, dashed lines last: no line hides under a
	// fill, and a dashed line shows over one it runs along.
	for k, s := range p.Series {
		v := drawn[k]
		if len(v) == 0 || !(s.Fill || p.Stacked) {
			continue
		}
		c := template.HTMLEscapeString(s.Color)
		if p.Stacked {
			// The band between this series' sums and the ones below.
			var below string
			if k == 0 {
				below = num(xAt(len(v)-1)) + "," + strconv.Itoa(plotTop+plotInnerH) + " " + num(xAt(0)) + "," + strconv.Itoa(plotTop+plotInnerH)
			} else {
				prev := drawn[k-1]
				var b strings.Builder
				for i := len(prev) - 1; i >= 0; i-- {
					if i%step == 0 || i == len(prev)-1 {
						fmt.Fprintf(&b, "%s,%s ", num(xAt(i)), num(yAt(prev[i])))
					}
				}
				below = strings.TrimSpace(b.String())
			}
			fmt.Fprintf(bw, `<polygon class="band" data-series="%s" points="%s %s" fill="%s" fill-opacity="0.8"/>`+"\n",
				template.HTMLEscapeString(s.Name), points(v), below, c)
			continue
		}
		fmt.Fprintf(bw, `<polygon points="%s,%d %s %s,%d" fill="%s" fill-opacity="0.25"/>`+"\n",
			num(xAt(0)), plotTop+plotInnerH, points(v), num(xAt(len(v)-1)), plotTop+plotInnerH, c)
	}
	for _, dashed := range []bool{false, true} {
		for k, s := range p.Series {
			if s.Dash != dashed || len(drawn[k]) == 0 {
				continue
			}
			width, dash := "1.5", ""
			if s.Dash {
				width, dash = "2.5", ` stroke-dasharray="7 4"`
			}
			fmt.Fprintf(bw, `<polyline data-series="%s" points="%s" fill="none" stroke="%s" stroke-width="%s" stroke-linejoin="round"%s/>`+"\n",
				template.HTMLEscapeString(s.Name), points(drawn[k]), template.HTMLEscapeString(s.Color), width, dash)
		}
	}
	for _, m := range p.Markers {
		i := m.X - p.FirstX
		if i < 0 || i >= n {
			continue
		}
		x := num(xAt(i))
		fmt.Fprintf(bw, `<g class="marker"><title>`)
		xml.EscapeText(bw, []byte(m.Label))
		fmt.Fprintf(bw, `</title><line x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s" stroke-width="1.5" stroke-opacity="0.8"/></g>`+"\n",
			x, plotTop, x, plotTop+plotInnerH, template.HTMLEscapeString(m.Color))
	}
	// Hover: a transparent column per drawn step, titled with the values.
	if n > 0 {
		colW := float64(plotInnerW) / float64(max(1, (n-1+step-1)/step))
		var tb strings.Builder
		for i := 0; i < n; i += step {
			tb.Reset()
			fmt.Fprintf(&tb, "%s %d", cmp.Or(p.XLabel, "step"), p.FirstX+i)
			total := 0.0
			for _, s := range p.Series {
				if i < len(s.Values) {
					fmt.Fprintf(&tb, "\n%s: %s", s.Name, p.Unit.format(finite(s.Values[i])))
					total += finite(s.Values[i])
				}
			}
			if p.Stacked {
				fmt.Fprintf(&tb, "\ntotal: %s", p.Unit.format(total))
			}
			for _, m := range p.Markers {
				if m.X == p.FirstX+i {
					tb.WriteString("\n" + m.Label)
				}
			}
			x := max(float64(plotLeft), xAt(i)-colW/2)
			wd := min(float64(plotW-plotRight), xAt(i)+colW/2) - x
			fmt.Fprintf(bw, `<rect class="hover" x="%s" y="%d" width="%s" height="%d" fill="#000" fill-opacity="0"><title>`, num(x), plotTop, num(wd), plotInnerH)
			xml.EscapeText(bw, []byte(tb.String()))
			bw.WriteString("</title></rect>\n")
		}
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// SVG returns the plot as SVG markup, for embedding in an HTML page.
func (p *Plot) SVG() template.HTML {
	var b strings.Builder
	p.WriteSVG(&b)
	return template.HTML(b.String())
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// niceCeil rounds top up to a round axis maximum, whose quarters are round
// too: 1, 1.2, 2, 3, 4, 5, 6 or 8 times a power of ten (times a
// power of 1024 for bytes); 1 for ratios up to 1 and for an empty chart.
func niceCeil(top float64, u Unit) float64 {
	if top <= 0 {
		return 1
	}
	if u == UnitRatio && top <= 1 {
		return 1
	}
	base := 10.0
	scale := 1.0
	if u == UnitBytes {
		for top/scale >= 1024 {
			scale *= 1024
		}
		top /= scale
	}
	p := math.Pow(base, math.Floor(math.Log10(top)))
	for _, m := range []float64{1, 1.2, 2, 3, 4, 5, 6, 8, 10} {
		if m*p >= top*(1-1e-9) {
			return m * p * scale
		}
	}
	return 10 * p * scale
}
