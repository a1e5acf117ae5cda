package inspect

import (
	"bufio"
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
// frame. The zero value is an empty chart.
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
}

// Series is one line of a Plot. Color is "#rrggbb" (KindColor gives the
// maps' colors); Fill shades the area under the line.
type Series struct {
	Name   string
	Color  string
	Fill   bool
	Values []float64
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
	top := 0.0
	for _, s := range p.Series {
		n = max(n, len(s.Values))
		for _, v := range s.Values {
			top = max(top, finite(v))
		}
	}
	top = niceCeil(top, p.Unit)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s" role="img" aria-label="`,
		plotW, plotH, plotW, plotH, fontFamily)
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
	// Legend, right of the title.
	lx := float64(plotLeft)
	for _, s := range p.Series {
		fmt.Fprintf(bw, `<rect x="%s" y="30" width="14" height="4" fill="%s"/>`+"\n", num(lx), template.HTMLEscapeString(s.Color))
		text(lx+19, 36, textSmall, "start", hexColor(colorText), s.Name)
		lx += 19 + float64(textWidth(s.Name, textSmall)) + 22
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
	for _, s := range p.Series {
		step := max(1, (len(s.Values)+plotMaxPoints-1)/plotMaxPoints)
		var pts strings.Builder
		for i := 0; i < len(s.Values); i += step {
			fmt.Fprintf(&pts, "%s,%s ", num(xAt(i)), num(yAt(s.Values[i])))
		}
		if last := len(s.Values) - 1; last >= 0 && last%step != 0 {
			fmt.Fprintf(&pts, "%s,%s ", num(xAt(last)), num(yAt(s.Values[last])))
		}
		c := template.HTMLEscapeString(s.Color)
		if s.Fill && len(s.Values) > 0 {
			fmt.Fprintf(bw, `<polygon points="%s,%d %s%s,%d" fill="%s" fill-opacity="0.25"/>`+"\n",
				num(xAt(0)), plotTop+plotInnerH, pts.String(), num(xAt(len(s.Values)-1)), plotTop+plotInnerH, c)
		}
		fmt.Fprintf(bw, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5" stroke-linejoin="round"/>`+"\n",
			strings.TrimSpace(pts.String()), c)
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
// too: 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten (times a
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
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if m*p >= top*(1-1e-9) {
			return m * p * scale
		}
	}
	return 10 * p * scale
}
