package inspect

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"io"
	"strconv"
	"strings"

	"github.com/gpumem/gpumem/memory"
)

// MaxMapBuffers is the most buffers a map draws; a dump with more is
// refused by the renderers (ErrInvalidDump), since each is a bar 78 pixels
// high.
const MaxMapBuffers = 256

// fontFamily is the SVG's font; the PNG draws the Go fonts (font.go).
const fontFamily = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif"

func checkForMap(d *Dump) error {
	if err := d.Check(); err != nil {
		return err
	}
	if len(d.Buffers) > MaxMapBuffers {
		return fmt.Errorf("%w: %d buffers, a map draws at most %d", ErrInvalidDump, len(d.Buffers), MaxMapBuffers)
	}
	return nil
}

// WriteSVG draws d's memory map as an SVG document: a bar per buffer,
// allocations colored by owner kind (see KindColor), hover text (<title>)
// with each region's owner, offset and size. It checks d first (see
// Check). The output is deterministic. O(regions).
func WriteSVG(w io.Writer, d *Dump) error {
	if err := checkForMap(d); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	layoutMap(d).writeSVG(bw)
	return bw.Flush()
}

// MapSVG returns d's memory map as SVG markup, for embedding in an HTML
// page (see WriteSVG).
func MapSVG(d *Dump) (template.HTML, error) {
	var b strings.Builder
	if err := WriteSVG(&b, d); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

// num formats a coordinate with at most two decimals.
func num(v float64) string {
	return strconv.FormatFloat(float64(int64(v*100+0.5))/100, 'f', -1, 64)
}

func (l *layout) writeSVG(w *bufio.Writer) {
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s" role="img" aria-label="`,
		l.w, l.h, l.w, l.h, fontFamily)
	xml.EscapeText(w, []byte(l.title))
	w.WriteString(`">` + "\n")
	w.WriteString(`<defs><pattern id="gpumem-moving" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
		`<rect width="3" height="6" fill="#000" fill-opacity="0.35"/></pattern></defs>` + "\n")
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="%s"/>`+"\n", l.w, l.h, hexColor(colorBG))
	open := false // a region's <g> with its <title>
	inBuf := -1   // the buffer whose <g> is open
	closeTitle := func() {
		if open {
			w.WriteString("</g>\n")
			open = false
		}
	}
	next := 0 // the first span that does not end before the shape
	spanOf := func(i int) int {
		for next < len(l.spans) && i >= l.spans[next].end {
			next++
		}
		if next < len(l.spans) && i >= l.spans[next].start {
			return next
		}
		return -1
	}
	for i, s := range l.shapes {
		if !s.part {
			closeTitle()
		}
		if k := spanOf(i); k != inBuf {
			closeTitle()
			if inBuf >= 0 {
				w.WriteString("</g>\n")
			}
			if inBuf = k; k >= 0 {
				w.WriteString(`<g class="gpumem-buffer" data-buffer="`)
				xml.EscapeText(w, []byte(l.spans[k].name))
				w.WriteString(`">` + "\n")
			}
		}
		if s.title != "" {
			w.WriteString("<g><title>")
			xml.EscapeText(w, []byte(s.title))
			w.WriteString("</title>")
			open = true
		}
		geom := `x="` + num(s.x) + `" y="` + num(s.y) + `" width="` + num(s.w) + `" height="` + num(s.h) + `"`
		if s.stroke {
			fmt.Fprintf(w, `<rect %s fill="none" stroke="%s"/>`, geom, hexColor(colorBorder))
		} else {
			fmt.Fprintf(w, `<rect %s fill="%s"/>`, geom, hexColor(s.fill))
			if s.striped {
				fmt.Fprintf(w, `<rect %s fill="url(#gpumem-moving)"/>`, geom)
			}
		}
		if !open {
			w.WriteString("\n")
		}
	}
	closeTitle()
	if inBuf >= 0 {
		w.WriteString("</g>\n")
	}
	for _, t := range l.texts {
		anchor := map[byte]string{'s': "start", 'm': "middle", 'e': "end"}[t.anchor]
		fmt.Fprintf(w, `<text x="%s" y="%s" font-size="%d" text-anchor="%s" fill="%s"`, num(t.x), num(t.y), t.size, anchor, hexColor(t.fill))
		if t.bold {
			w.WriteString(` font-weight="bold"`)
		}
		w.WriteString(">")
		xml.EscapeText(w, []byte(t.s))
		w.WriteString("</text>\n")
	}
	w.WriteString("</svg>\n")
}

// WritePNG draws d's memory map as a PNG image, as WriteSVG draws it but
// without hover text, its text in the Go fonts. It checks d first. The output
// is deterministic. O(regions + pixels).
func WritePNG(w io.Writer, d *Dump) error {
	if err := checkForMap(d); err != nil {
		return err
	}
	img := layoutMap(d).raster()
	return (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(w, img)
}

func (l *layout) raster() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, l.w, l.h))
	fillRect(img, 0, 0, float64(l.w), float64(l.h), colorBG, false)
	for _, s := range l.shapes {
		if s.stroke {
			x0, y0 := int(s.x+0.5), int(s.y+0.5)
			x1, y1 := int(s.x+s.w+0.5)-1, int(s.y+s.h+0.5)-1
			for x := x0; x <= x1; x++ {
				img.SetRGBA(x, y0, colorBorder)
				img.SetRGBA(x, y1, colorBorder)
			}
			for y := y0; y <= y1; y++ {
				img.SetRGBA(x0, y, colorBorder)
				img.SetRGBA(x1, y, colorBorder)
			}
			continue
		}
		fillRect(img, s.x, s.y, s.w, s.h, s.fill, s.striped)
	}
	ts := typesetter{img: img}
	defer ts.close()
	for _, t := range l.texts {
		ts.draw(t)
	}
	return img
}

// fillRect fills a rectangle whose vertical edges may fall between pixels:
// the edge columns are blended by how much of them it covers. Rows are
// whole: y and h are rounded. Striped adds diagonal dark stripes.
func fillRect(img *image.RGBA, x, y, w, h float64, c color.RGBA, striped bool) {
	if w <= 0 || h <= 0 {
		return
	}
	y0, y1 := int(y+0.5), int(y+h+0.5)
	for px := int(x); float64(px) < x+w; px++ {
		cover := min(float64(px+1), x+w) - max(float64(px), x)
		if cover <= 0 {
			continue
		}
		for py := y0; py < y1; py++ {
			cc := c
			if striped && (px+py)%6 < 3 {
				cc = shade(c, 0.35)
			}
			blend(img, px, py, cc, cover)
		}
	}
}

// blend paints c over pixel (x, y) with opacity a.
func blend(img *image.RGBA, x, y int, c color.RGBA, a float64) {
	if !(image.Point{x, y}.In(img.Rect)) {
		return
	}
	if a >= 1 {
		img.SetRGBA(x, y, c)
		return
	}
	o := img.RGBAAt(x, y)
	m := func(p, q uint8) uint8 { return uint8(float64(p)*(1-a) + float64(q)*a + 0.5) }
	img.SetRGBA(x, y, color.RGBA{m(o.R, c.R), m(o.G, c.G), m(o.B, c.B), 0xff})
}

// WriteHTML writes a self-contained HTML page (no external assets) with
// d's memory map (as WriteSVG draws it) and a table of its buffers. It
// checks d first. The output is deterministic.
func WriteHTML(w io.Writer, d *Dump) error {
	svg, err := MapSVG(d)
	if err != nil {
		return err
	}
	table, err := StatsTable(d.Buffers, d.Totals)
	if err != nil {
		return err
	}
	return mapPage.Execute(w, struct {
		D          *Dump
		SVG, Table template.HTML
		Style      template.CSS
	}{d, svg, table, PageStyle})
}

// PageStyle is the CSS of the pages this package writes, for pages that
// embed its maps and plots (put it in a <style> element).
const PageStyle = `body{font-family:DejaVu Sans,Verdana,Helvetica,Arial,sans-serif;color:#202428;margin:24px;background:#fff}
h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:24px 0 8px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border-bottom:1px solid #dde2e7;padding:3px 6px;text-align:right}td{white-space:nowrap}
tr.total td{font-weight:bold;border-top:1px solid #909ca8}
th:first-child,td:first-child{text-align:left}table.headroom td:nth-child(2),table.headroom th:nth-child(2){text-align:left}
.scroll{overflow-x:auto}table.stats{font-size:11px}table.stats td,table.stats th{padding:2px 4px}
th{background:#f3f5f7}th.group,th.group:first-child{text-align:center;border-left:1px solid #dde2e7}.muted{color:#5f6b76;font-size:13px}svg{display:block;max-width:100%;height:auto}`

var mapPage = template.Must(template.New("map").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>gpumem memory map{{with .D.Label}} - {{.}}{{end}}</title>
<style>{{.Style}}</style>
</head>
<body>
<h1>gpumem memory map{{with .D.Label}} - {{.}}{{end}}</h1>
<p class="muted">Device: {{.D.Device}}. Hover over a region for its owner, offset and size.</p>
{{with .D.BudgetLine}}<p class="budget">{{.}}</p>{{end}}
{{.SVG}}
{{.Table}}
</body>
</html>
`))

// StatsTable returns an HTML table of the buffers' stats, one row each,
// and a row of totals, for pages that embed maps. Its columns say which
// figures are the state at the dump's moment, which are of the dump's
// frame (allocations moved, striped on the map; moves recorded; bytes
// moved) and which count since the manager started ("-" for a buffer
// whose manager keeps no history). Each row carries its buffer's name in
// data-buffer, and the frame cells the classes moving, frame-moves and
// frame-bytes, for scripts that check a page.
func StatsTable(buffers []memory.Buffer, totals memory.Stats) (template.HTML, error) {
	var b strings.Builder
	err := statsTable.Execute(&b, struct {
		Buffers []memory.Buffer
		Totals  memory.Stats
	}{buffers, totals})
	return template.HTML(b.String()), err
}

var statsTable = template.Must(template.New("table").Funcs(template.FuncMap{
	"bytes": FormatBytes, "pct": percent, "group": group,
}).Parse(`<div class="scroll"><table class="stats">
<tr><th colspan="9" class="group">now</th><th colspan="3" class="group">this frame</th><th colspan="3" class="group">since start</th></tr>
<tr><th>buffer</th><th>capacity</th><th>occupied</th><th>bin slack</th><th>free</th><th>largest free</th><th>allocations</th><th>free regions</th><th>fragmentation</th><th title="allocations moved during the frame: striped on the map">moved</th><th title="moves recorded during the frame (an allocation moved twice counts twice)">moves</th><th>bytes moved</th><th>growths</th><th>moves</th><th>bytes moved</th></tr>
{{range .Buffers}}<tr data-buffer="{{.Name}}"><td title="{{.Kind}}">{{.Name}}</td>{{template "cells" .Stats}}</tr>
{{end}}{{with .Totals}}<tr class="total" data-buffer=""><td>total</td>{{template "cells" .}}</tr>{{end}}
</table></div>
{{define "cells"}}<td>{{bytes .CapacityBytes}}</td><td>{{bytes .OccupiedBytes}}</td><td>{{bytes .SlackBytes}}</td><td>{{bytes .FreeBytes}}</td><td>{{bytes .LargestFreeBytes}}</td><td>{{group .Allocations}}</td><td>{{group .FreeRegions}}</td><td>{{pct .Fragmentation}}</td><td class="moving">{{group .Moving}}</td><td class="frame-moves">{{.FrameMoves}}</td><td class="frame-bytes">{{bytes .FrameBytesMoved}}</td>{{if .History}}<td>{{.Growths}}</td><td>{{.Moves}}</td><td>{{bytes .BytesMoved}}</td>{{else}}<td>-</td><td>-</td><td>-</td>{{end}}{{end}}`))
