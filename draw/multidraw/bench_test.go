//go:build cgo && !js

package multidraw_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpumem/gpumem/draw/multidraw"
)

// BenchmarkDraw draws a world of 1,000, 10,000 and 100,000 meshes each
// way (see ways: a, own buffers and a DrawIndexed per mesh with its
// pipeline, bind group and buffers set; b, the slabs with a DrawIndexed
// per mesh; c, the slabs with one multi-draw per group; c-count, c with
// one multi-draw indirect count per group; c-kept, c-count with the list
// kept across frames (filled once); c-flip, c-count with the list filled
// in the opposite order every other frame, so that every frame packs,
// encodes and uploads it (c-count's list, filled again alike, keeps its
// version and does none of that); indirect, c's
// arguments drawn one DrawIndexedIndirect at a time; d, c culled on the
// GPU against a frustum that keeps about half the world and drawn with
// multi-draw indirect count; d-kept, d with the list kept across frames;
// d-zero, d's fallback without the count
// feature). Before the ways run, their images are compared: each must
// equal its reference (a's, or for the culled ways c's of the visible
// draws). Way a draws on a device of its own, the same meshes in a world
// of their own: wgpu-native sizes the resource tracking of every encoder
// and submission by the most resources its device ever held, so the other
// ways, on a device that had held a's 2n buffers, would pay for them every
// frame. Each way draws a frame before it is measured. Metrics per frame:
// cpu-ns (filling the list, encoding, submitting; for a, encoding and
// submitting) and its parts list-, prepare-, pass-, finish- and submit-ns
// (filling the list, Prepare, recording the render pass, finishing the
// encoder, submitting), gpu-ns (the device's timestamps around the frame's
// submission, where it has them, in up to 30 frames drawn after the
// measured ones: the stamps' encoder and submission would be CPU time of
// the frame), groups, and for the culled ways the fraction of draws
// culled. -indirect-validation=false measures without
// wgpu-native's validation of indirect draws.
func BenchmarkDraw(b *testing.B) {
	// ga, way a's device, serves every n in turn: n ascends, so the
	// buffers of an earlier n never exceed a's own.
	g, ga := openGPU(b), openGPU(b)
	info := g.ad.GetInfo()
	b.Logf("adapter %s (%v), best mode %v, indirect validation %v", info.Device, info.BackendType, multidraw.Best(g.wd), *indirectValidation)
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("meshes=%d", n), func(b *testing.B) {
			w, wa := newWorld(b, g, n, 1024, 1024, 0), newWorld(b, ga, n, 1024, 1024, 0)
			imgs, err := w.images(wa)
			if err != nil {
				b.Fatal(err)
			}
			if err := compare(imgs); err != nil {
				b.Fatal(err)
			}
			culled, _ := w.culled()
			for _, way := range ways {
				if !way.allowed(g.wd) || way.only || way.name == "d-indirect" {
					continue
				}
				b.Run("way="+way.name, func(b *testing.B) {
					w := w
					if way.own {
						w = wa
						if err := w.ownBuffers(); err != nil {
							b.Fatal(err)
						}
						defer w.releaseOwn()
					}
					// A frame first, unmeasured, makes what the
					// way makes once (a drawer, its pipelines).
					if err := w.frame(way); err != nil {
						b.Fatal(err)
					}
					// The measured frames take no timestamps, whose
					// encoder and submission would count as the way's CPU
					// time; up to 30 frames after them, unmeasured on the
					// CPU, do.
					w.cpu, w.gpuTime, w.frames, w.gpuFrm, w.phases = 0, 0, 0, 0, [5]time.Duration{}
					timed := w.timed
					w.timed = false
					for b.Loop() {
						if err := w.frame(way); err != nil {
							b.Fatal(err)
						}
					}
					w.timed = timed
					cpu, frames, phases := w.cpu, w.frames, w.phases
					for i := 0; timed && i < min(frames, 30); i++ {
						if err := w.frame(way); err != nil {
							b.Fatal(err)
						}
					}
					w.cpu, w.frames, w.phases = cpu, frames, phases
					b.ReportMetric(float64(w.cpu.Nanoseconds())/float64(w.frames), "cpu-ns/frame")
					if w.gpuFrm > 0 {
						b.ReportMetric(float64(w.gpuTime.Nanoseconds())/float64(w.gpuFrm), "gpu-ns/frame")
					}
					for i, name := range []string{"list", "prepare", "pass", "finish", "submit"} {
						b.ReportMetric(float64(w.phases[i].Nanoseconds())/float64(w.frames), name+"-ns/frame")
					}
					b.ReportMetric(float64(w.tab.Stats().Groups), "groups")
					if way.cull {
						b.ReportMetric(culled, "culled")
					}
				})
			}
		})
	}
}
