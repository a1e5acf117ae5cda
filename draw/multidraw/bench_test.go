//go:build cgo && !js

package multidraw_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/draw/multidraw"
)

// BenchmarkDraw draws a world of 1,000, 10,000 and 100,000 meshes each
// way (see ways: a, own buffers and a DrawIndexed per mesh with its
// pipeline, bind group and buffers set; b, the slabs with a DrawIndexed
// per mesh; c, the slabs with one multi-draw per group; indirect, c's
// arguments drawn one DrawIndexedIndirect at a time). Before the ways
// run, their images are compared: they must be equal. Metrics per frame:
// cpu-ns (filling the list, encoding, submitting; for a, encoding and
// submitting), gpu-ns (the device's timestamps around the frame's
// submission, where it has them), draw calls.
func BenchmarkDraw(b *testing.B) {
	g := openGPU(b)
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("meshes=%d", n), func(b *testing.B) {
			w := newWorld(b, g, n, 1024, 1024, 0)
			imgs, err := w.images()
			if err != nil {
				b.Fatal(err)
			}
			for name, px := range imgs {
				if !bytes.Equal(px, imgs["a"]) {
					b.Fatalf("way %s differs from way a in %d pixels", name, countDiff(px, imgs["a"]))
				}
			}
			for _, way := range ways {
				if !way.own && way.mode > multidraw.Best(g.wd) {
					continue
				}
				b.Run("way="+way.name, func(b *testing.B) {
					w.cpu, w.gpuTime, w.frames, w.gpuFrm = 0, 0, 0, 0
					for b.Loop() {
						if err := w.frame(way.own, way.mode); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(w.cpu.Nanoseconds())/float64(w.frames), "cpu-ns/frame")
					if w.gpuFrm > 0 {
						b.ReportMetric(float64(w.gpuTime.Nanoseconds())/float64(w.gpuFrm), "gpu-ns/frame")
					}
					b.ReportMetric(float64(w.tab.Stats().Groups), "groups")
				})
			}
		})
	}
}
