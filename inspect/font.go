package inspect

import (
	"image"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// The PNG's text is drawn with the Go fonts (regular and bold),
// anti-aliased, at the layout's sizes in pixels; textWidth measures with
// the same fonts, so a layout knows how wide the PNG draws a string.

// goFonts are the parsed Go fonts, regular and bold. A parsed sfnt.Font
// is only read after parsing, and safe for concurrent use with a Buffer
// per call.
var goFonts = sync.OnceValue(func() [2]*sfnt.Font {
	r, err1 := opentype.Parse(goregular.TTF)
	b, err2 := opentype.Parse(gobold.TTF)
	if err1 != nil || err2 != nil {
		panic("inspect: the Go fonts do not parse") // they are compiled in
	}
	return [2]*sfnt.Font{r, b}
})

func goFont(bold bool) *sfnt.Font {
	if bold {
		return goFonts()[1]
	}
	return goFonts()[0]
}

// textWidth returns the width in pixels of s drawn at size pixels, bold or
// not, in the Go fonts: advances and kerning, as the PNG draws it.
func textWidth(s string, size int, bold bool) int {
	f := goFont(bold)
	var buf sfnt.Buffer
	ppem := fixed.I(size)
	var w fixed.Int26_6
	prev := sfnt.GlyphIndex(0)
	for i, r := range s {
		g, err := f.GlyphIndex(&buf, r)
		if err != nil || g == 0 {
			g, _ = f.GlyphIndex(&buf, '?')
		}
		if i > 0 {
			if k, err := f.Kern(&buf, prev, g, ppem, font.HintingNone); err == nil {
				w += k
			}
		}
		if a, err := f.GlyphAdvance(&buf, g, ppem, font.HintingNone); err == nil {
			w += a
		}
		prev = g
	}
	return w.Ceil()
}

// typesetter draws text on one image, with a face per size and weight
// made on first use. It is used by one goroutine.
type typesetter struct {
	img   *image.RGBA
	faces map[[2]int]font.Face
}

func (ts *typesetter) face(size int, bold bool) font.Face {
	k := [2]int{size, 0}
	if bold {
		k[1] = 1
	}
	if f, ok := ts.faces[k]; ok {
		return f
	}
	f, err := opentype.NewFace(goFont(bold), &opentype.FaceOptions{Size: float64(size), DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		panic("inspect: a face of the Go fonts: " + err.Error()) // sizes are the layout's own
	}
	if ts.faces == nil {
		ts.faces = map[[2]int]font.Face{}
	}
	ts.faces[k] = f
	return f
}

// draw draws t; t.y is the baseline, t.anchor says where t.x is.
func (ts *typesetter) draw(t text) {
	x := t.x
	switch t.anchor {
	case 'm':
		x -= float64(textWidth(t.s, t.size, t.bold)) / 2
	case 'e':
		x -= float64(textWidth(t.s, t.size, t.bold))
	}
	d := font.Drawer{Dst: ts.img, Src: image.NewUniform(t.fill), Face: ts.face(t.size, t.bold),
		Dot: fixed.Point26_6{X: fixed.Int26_6(x * 64), Y: fixed.Int26_6(t.y * 64)}}
	d.DrawString(t.s)
}

// close releases the faces.
func (ts *typesetter) close() {
	for _, f := range ts.faces {
		f.Close()
	}
}
