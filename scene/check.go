package scene

import (
	"fmt"
	"image"
	"image/color"
)

// CheckImage returns an error when img does not look like the scene: when
// fewer than a tenth of its pixels differ from its most common colour (the
// background) or it has fewer than 64 distinct colours. A blank target, a
// clear colour alone or a screenshot of an empty window fails.
func CheckImage(img image.Image) error {
	counts := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			counts[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}]++
		}
	}
	total, background := b.Dx()*b.Dy(), 0
	for _, n := range counts {
		background = max(background, n)
	}
	drawn := total - background
	if drawn < total/10 || len(counts) < 64 {
		return fmt.Errorf("image looks blank: %d of %d pixels differ from the background, %d colours", drawn, total, len(counts))
	}
	return nil
}
