package scene

import (
	"bytes"
	"cmp"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// streamTest streams the scene on a host device with o and returns the
// run's summary and the run.
func streamTest(t *testing.T, o Options) (string, *Run) {
	t.Helper()
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	run, err := Stream(dev, "host (pure Go)", o)
	if err != nil {
		t.Fatalf("Stream(%+v): %v", o, err)
	}
	var b strings.Builder
	run.WriteSummary(&b)
	return b.String(), run
}

// TestStreamSeed: the same seed gives the same numbers, another seed
// others.
func TestStreamSeed(t *testing.T) {
	out, _ := streamTest(t, Options{Seed: 7, Frames: 60, FlushBytes: DefaultFlushBytes})
	again, _ := streamTest(t, Options{Seed: 7, Frames: 60, FlushBytes: DefaultFlushBytes})
	if numbers(out) != numbers(again) {
		t.Errorf("same seed, different numbers:\n%s\n---\n%s", numbers(out), numbers(again))
	}
	other, _ := streamTest(t, Options{Seed: 8, Frames: 60, FlushBytes: DefaultFlushBytes})
	if numbers(out) == numbers(other) {
		t.Error("seeds 7 and 8 gave the same numbers")
	}
}

// TestStreamUploadBound: the textures and the meshlets share the frame's
// upload budget (Options.FlushBytes): each takes items while some is
// left, the last one passing it by less than the largest item, and
// leaves the rest to the next; without a bound the count per frame
// bounds them.
func TestStreamUploadBound(t *testing.T) {
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	const scale, bound = 4, 48 << 10
	wo := &workloadOptions{dev: dev}
	tw, err := newTextureWorkload(dev, scale, wo)
	if err != nil {
		t.Fatal(err)
	}
	defer tw.release()
	rb, err := newReadbackWorkload(dev, scale, &stopwatch{}, wo)
	if err != nil {
		t.Fatal(err)
	}
	defer rb.release()
	mw, err := newMeshletWorkload(dev, scale, rb, wo)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.release()
	maxTexture := uint64(4 * textureSizes[len(textureSizes)-1] * textureSizes[len(textureSizes)-1])
	const maxBatch = 4 * 160 * (124*5/4 + meshletRowWords) // meshlets, words of each, rows
	for n, fb := range []uint64{bound, 640 << 10, math.MaxUint64} {
		f := &frameState{n: n + 1, rng: rand.New(rand.NewPCG(1, 2)), seed: 1, scale: scale, gpumem: &stopwatch{}, names: map[string]string{}, uploadBytes: fb}
		for z := range f.inView {
			f.inView[z] = true
		}
		texBytes, batchBytes, textures := tw.bytes, mw.bytes, tw.registered
		if err := tw.frame(f); err != nil {
			t.Fatal(err)
		}
		if err := mw.frame(f); err != nil {
			t.Fatal(err)
		}
		texBytes, batchBytes, textures = tw.bytes-texBytes, mw.bytes-batchBytes, tw.registered-textures
		t.Logf("frame %d, bound %d: textures %d bytes (%d), meshlets %d bytes", n+1, fb, texBytes, textures, batchBytes)
		total := texBytes + batchBytes
		switch {
		case texBytes == 0:
			t.Fatalf("frame %d streamed no texture", n+1)
		case fb == math.MaxUint64:
			if batchBytes == 0 || textures != uint64(f.loads(textureLoads)) {
				t.Errorf("unbound frame %d streamed %d bytes of meshlets, %d textures", n+1, batchBytes, textures)
			}
		case total >= fb+max(maxTexture, maxBatch):
			t.Errorf("frame %d streamed %d bytes of textures and %d of meshlets, bound %d", n+1, texBytes, batchBytes, fb)
		case texBytes >= fb && batchBytes != 0:
			t.Errorf("frame %d: the textures took the bound (%d bytes of %d), the meshlets %d more", n+1, texBytes, fb, batchBytes)
		case texBytes < fb && batchBytes == 0:
			t.Errorf("frame %d: the textures left %d bytes of %d, the meshlets took none", n+1, fb-texBytes, fb)
		case f.uploadBytes != fb-min(fb, total):
			t.Errorf("frame %d: %d bytes of the bound left, after %d of %d", n+1, f.uploadBytes, total, fb)
		}
	}
}

// TestStreamWebGPU streams on webgpu (skipped locally without an
// adapter, failed in CI) and checks it gives the host's numbers.
func TestStreamWebGPU(t *testing.T) {
	dev := testdevice.WebGPU(t, webgpu.Options{})
	o := Options{Seed: 1, Frames: 40, FlushBytes: DefaultFlushBytes}
	run, err := Stream(dev, "webgpu", o)
	if err != nil {
		t.Fatal(err)
	}
	var gpu strings.Builder
	run.WriteSummary(&gpu)
	cpu, host := streamTest(t, o)
	checkGPUTime(t, dev, run, gpu.String(), host)
	// The GPU times are the one thing the host lacks.
	onGPU := regexp.MustCompile(`(?m)^  on the GPU \(timestamps.*\n`)
	if g := onGPU.ReplaceAllString(gpu.String(), ""); numbers(g) != numbers(cpu) {
		t.Errorf("webgpu and host differ:\n%s\n---\n%s", numbers(g), numbers(cpu))
	}
}

// checkGPUTime: on a device with timestamps every frame has the GPU time
// of gpumem's work, and the summary and the report's card show it; on the
// host device the card says it is not measured.
func checkGPUTime(t *testing.T, dev device.Device, run *Run, summary string, host *Run) {
	t.Helper()
	if c := host.figures().gpuCard(); c.Value != "not measured" {
		t.Errorf("host card %+v", c)
	}
	if _, ok := device.TimerOf(dev); !ok {
		t.Log("the adapter has no timestamp queries: no GPU time")
		return
	}
	for i, rec := range run.records {
		if !rec.gpuOK || rec.gpu <= 0 {
			t.Fatalf("frame %d: GPU time %v (measured %v)", i+1, rec.gpu, rec.gpuOK)
		}
	}
	if !strings.Contains(summary, "on the GPU (timestamps") {
		t.Errorf("the summary has no GPU time:\n%s", summary)
	}
	if c := run.figures().gpuCard(); c.Value == "not measured" {
		t.Errorf("card %+v", c)
	}
}

// TestStreamOptions: Stream refuses options out of range.
func TestStreamOptions(t *testing.T) {
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	for _, o := range []Options{{}, {Frames: MaxFrames + 1}, {Frames: 1, Scale: -1}, {Frames: 1, Scale: MaxScale + 1},
		{Frames: 1, Speed: 2}, {Frames: 1, Unload: -1}} {
		if _, err := Stream(dev, "host", o); err == nil {
			t.Errorf("Stream(%+v) succeeded", o)
		}
	}
}

// reportOf returns run's HTML report.
func reportOf(t *testing.T, run *Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := run.WriteReport(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// numbers is the summary without what varies from run to run: timings
// and the device.
func numbers(summary string) string {
	var keep []string
	managers := false // in the table of gpumem's time by manager, or its slowest frames
	for _, l := range strings.Split(summary, "\n") {
		if managers && strings.HasPrefix(l, "  ") {
			continue
		}
		managers = strings.HasPrefix(l, "gpumem's time per frame by manager") || strings.HasPrefix(l, "gpumem's slowest frames")
		switch {
		case managers, strings.HasPrefix(l, "time per frame"), strings.HasPrefix(l, "  (the rest of a frame"),
			strings.HasPrefix(l, "made ahead of need"): // on a device that prepares buffers and textures
			continue
		case strings.HasPrefix(l, "gpumem demo:"):
			l = regexp.MustCompile(`, on .*`).ReplaceAllString(l, "")
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// TestStreamScale runs the scene at scale 3: three times the meshes,
// batches and textures resident, and gpumem's own time reported apart.
func TestStreamScale(t *testing.T) {
	one, _ := streamTest(t, Options{Seed: 1, Frames: 40, FlushBytes: DefaultFlushBytes})
	three, _ := streamTest(t, Options{Seed: 1, Frames: 40, Scale: 3, FlushBytes: DefaultFlushBytes})
	resident := func(out string) float64 {
		m := regexp.MustCompile(`peak live allocations (\d+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no peak live allocations in\n%s", out)
		}
		n, _ := strconv.Atoi(m[1])
		return float64(n)
	}
	if r := resident(three) / resident(one); r < 2.5 || r > 3.5 {
		t.Errorf("scale 3 holds %.2f times the allocations of scale 1", r)
	}
	if !strings.Contains(three, ", scale 3, on host") || !strings.Contains(three, "in gpumem's calls") {
		t.Errorf("summary at scale 3:\n%s", three)
	}
}

// TestStreamFlushBytes bounds each mesh Flush well below what the scene
// stages a frame: meshes wait staged over frames, their spot checks are
// skipped, the run flushes the rest after the last frame, and every mesh
// is read back intact. Unbounded, no frame ends with a mesh staged.
func TestStreamFlushBytes(t *testing.T) {
	staged := regexp.MustCompile(`each Flush takes (.*): (\d+) frames ended with meshes staged \((\d+) at most\), (\d+) spot checks skipped them; (\d+) Flushes after the last frame`)
	parse := func(out string) (string, []int) {
		m := staged.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no line of bounded Flushes in\n%s", out)
		}
		var n []int
		for _, s := range m[2:] {
			v, _ := strconv.Atoi(s)
			n = append(n, v)
		}
		return m[1], n
	}
	out, _ := streamTest(t, Options{Seed: 1, Frames: 20, Scale: 3, FlushBytes: 64 << 10})
	bound, n := parse(out)
	if bound != "at most 64.0 KiB" || n[0] < 10 || n[1] < 20 || n[3] == 0 {
		t.Errorf("bounded at 64 KiB: %q, %d frames ended with meshes staged (%d at most), %d checks skipped, %d Flushes after:\n%s",
			bound, n[0], n[1], n[2], n[3], out)
	}
	if !strings.Contains(out, "every byte intact") {
		t.Errorf("not every byte intact:\n%s", out)
	}
	out, _ = streamTest(t, Options{Seed: 1, Frames: 20, Scale: 3, FlushBytes: 0})
	if bound, n := parse(out); bound != "unbounded" || n[0] != 0 || n[2] != 0 || n[3] != 0 {
		t.Errorf("unbounded: %q, %v", bound, n)
	}
}

// TestStreamManagerTimes checks the summary's table of gpumem's time by
// manager, and the stopwatch that fills it: a call's time goes to its
// manager, what the demo excludes comes out of that manager's too.
func TestStreamManagerTimes(t *testing.T) {
	var sw stopwatch
	t0 := sw.start(mgrRing)
	time.Sleep(2 * time.Millisecond)
	sw.exclude(time.Millisecond)
	sw.stop(t0)
	t0 = sw.start(mgrMesh)
	sw.stop(t0)
	sw.exclude(time.Hour) // not in a call: nothing to take out
	if sw.by[mgrRing] < time.Millisecond || sw.by[mgrRing]+sw.by[mgrMesh] != sw.d {
		t.Errorf("stopwatch: %v in all, by manager %v", sw.d, sw.by)
	}
	for m, d := range sw.by {
		if m != int(mgrRing) && m != int(mgrMesh) && d != 0 {
			t.Errorf("%s: %v, timed nothing", managerNames[m], d)
		}
	}

	out, run := streamTest(t, Options{Seed: 1, Frames: 20, FlushBytes: DefaultFlushBytes})
	if !strings.Contains(out, "gpumem's time per frame by manager") {
		t.Fatalf("no table of time by manager:\n%s", out)
	}
	var share float64
	for _, m := range []string{"mesh", "meshlet", "bindless", "ring", "frame arena", "pool"} {
		row := regexp.MustCompile(`(?m)^  +` + m + ` +(\d+\.\d+) ms +(\d+\.\d+) ms +(\d+\.\d+) ms +(\d+\.\d+) ms +(\d+\.\d+) ms +(\d+\.\d+) ms +(\d+\.\d)%$`).FindStringSubmatch(out)
		if row == nil {
			t.Errorf("no row for %s:\n%s", m, out)
			continue
		}
		med, _ := strconv.ParseFloat(row[1], 64)
		p99, _ := strconv.ParseFloat(row[2], 64)
		mx, _ := strconv.ParseFloat(row[3], 64)
		if !(med <= p99 && p99 <= mx) {
			t.Errorf("%s: median %v, p99 %v, max %v", m, med, p99, mx)
		}
		sh, _ := strconv.ParseFloat(row[7], 64)
		share += sh
	}
	if share < 99.5 || share > 100.5 {
		t.Errorf("the managers' shares sum to %.1f%%", share)
	}
	if strings.Contains(out, "  staging ") {
		t.Errorf("a staging row without -belt:\n%s", out)
	}
	// The slowest frames: three, longest first, the first the longest.
	slow := regexp.MustCompile(`(?m)^  frame (\d+): (\d+\.\d+) ms \(([^)]*)\); live allocations [+-]\d+, uploaded .*, moved [^,]*, (buffers new or grown: \d+|every buffer new)$`).FindAllStringSubmatch(out, -1)
	if len(slow) != 3 {
		t.Fatalf("%d slowest frames, want 3:\n%s", len(slow), out)
	}
	var longest []float64
	for _, f := range slow {
		d, _ := strconv.ParseFloat(f[2], 64)
		longest = append(longest, d)
		if n, _ := strconv.Atoi(f[1]); n < 1 || n > 20 || f[3] == "" {
			t.Errorf("slowest frame %q", f[0])
		}
	}
	if !sort.Float64sAreSorted([]float64{longest[2], longest[1], longest[0]}) {
		t.Errorf("slowest frames not longest first: %v", longest)
	}
	if want := ms(slices.MaxFunc(run.records, func(a, b frameRecord) int { return cmp.Compare(a.gpumem, b.gpumem) }).gpumem); !strings.Contains(slow[0][0], want) {
		t.Errorf("the slowest frame %q is not the longest, %s", slow[0][0], want)
	}
	report := reportOf(t, run)
	if !strings.Contains(report, "gpumem&#39;s time per frame (CPU) by manager") {
		t.Error("report lacks the plot of gpumem's time by manager")
	}
}

// TestStreamBelt runs the meshes, the meshlets, the textures and the
// constants through a staging belt: its uploads are the Flushes', the
// meshlet batches', the texels' and the ring's writes, its time a row of
// its own, every byte intact; without Belt the meshlets and textures go
// up in queue writes.
func TestStreamBelt(t *testing.T) {
	out, _ := streamTest(t, Options{Seed: 1, Frames: 20, FlushBytes: DefaultFlushBytes})
	if !regexp.MustCompile(`(?m)^meshlets: [1-9]\d* batches added .* uploaded in [1-9]\d* writes$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^textures: [1-9]\d* registered, `).MatchString(out) {
		t.Errorf("without Belt, the summary does not show the meshlets and textures in queue writes:\n%s", out)
	}
	out, _ = streamTest(t, Options{Seed: 1, Frames: 20, Belt: true, FlushBytes: DefaultFlushBytes})
	if !regexp.MustCompile(`meshlets: [1-9]\d* batches added .* uploaded in [1-9]\d* writes, [1-9]\d* of them through the meshes' staging belt`).MatchString(out) {
		t.Errorf("with Belt, the summary does not show the meshlets through the belt:\n%s", out)
	}
	if !regexp.MustCompile(`textures: ([1-9]\d*) registered \(([1-9]\d*) of them through the meshes' staging belt\)`).MatchString(out) {
		t.Errorf("with Belt, the summary does not show the textures through the belt:\n%s", out)
	}
	for _, want := range []string{"through a staging belt: ", "written through the meshes' staging belt", "  staging ", "every byte intact"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`through a staging belt: 0 uploads`).MatchString(out) {
		t.Errorf("nothing went through the belt:\n%s", out)
	}
}

// unloadRow returns the figures of manager's row in the zone unload's
// table: capacity/reserved, capacity/occupied, before and at the unload,
// and the two "from" columns.
func unloadRow(t *testing.T, out, manager string) (ratios [4]float64, from [2]string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  ` + manager + ` .*? ([\d.]+)x +([\d.]+)x +([\d.]+)x +([\d.]+)x +(never|frame \d+ \(\+\d+\)) +(never|frame \d+ \(\+\d+\))$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no row of %s in the zone unload's table:\n%s", manager, out)
	}
	for i := range ratios {
		ratios[i], _ = strconv.ParseFloat(m[1+i], 64)
	}
	return ratios, [2]string{m[5], m[6]}
}

// TestStreamUnload runs 60 frames of streaming and 150 of a zone unload on
// the host: most of what was loaded unloads at frame 61, the mesh slabs
// and meshlet arenas shrink to within a few percent of what their data
// occupies (from four times it and more), the texture pages hold at most
// 1.15 times their textures from the unload's first frame (Compact moves
// the textures left down and the handles the demo holds follow), and
// everything left reads back intact.
func TestStreamUnload(t *testing.T) {
	out, _ := streamTest(t, Options{Frames: 60, Unload: 150, Seed: 7, FlushBytes: DefaultFlushBytes})
	for _, want := range []string{"gpumem demo: 60 frames, seed 7, then 150 of a zone unload, on host",
		"zone unload at frame 61: the camera stops, 3 of the zones in view unload (70 of 109 meshes, batches and textures)",
		"150 frames after, with shrinking on", "every byte intact"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	meshes, _ := unloadRow(t, out, "meshes")
	meshlets, from := unloadRow(t, out, "meshlets")
	t.Logf("capacity/occupied: meshes %.2fx at the unload, %.2fx 150 frames after; meshlets %.2fx, %.2fx (%.2fx of reserved from %s)",
		meshes[3], meshes[1], meshlets[3], meshlets[1], meshlets[0], from[1])
	if meshes[3] < 3 || meshes[1] > 1.2 || meshlets[3] < 3 || meshlets[1] > 1.2 || meshlets[0] > 1.15 || from[1] == "never" {
		t.Errorf("the slabs and arenas did not shrink as they should: meshes %v, meshlets %v, %v", meshes, meshlets, from)
	}
	textures, tfrom := unloadRow(t, out, "textures")
	t.Logf("textures: capacity/occupied %.2fx before the unload, %.2fx after (from %s)", textures[2], textures[1], tfrom[0])
	if m := regexp.MustCompile(`; ([1-9]\d*) textures moved, `).FindString(out); textures[1] > 1.15 || textures[0] > 1.15 || tfrom[0] != "frame 61 (+0)" || m == "" {
		t.Errorf("the texture pages were not compacted: %v, %v", textures, tfrom)
	}
	// The same seed gives the same figures.
	again, _ := streamTest(t, Options{Frames: 60, Unload: 150, Seed: 7, FlushBytes: DefaultFlushBytes})
	if numbers(out) != numbers(again) {
		t.Errorf("same seed, different numbers:\n%s\n---\n%s", numbers(out), numbers(again))
	}
}

// TestStreamBudget runs 60 frames under a budget of 9 MiB, which the scene
// reaches: the other managers give memory back (reclaims) and the run
// completes with every byte intact; the summary, the report and the dump
// show usage against the limit.
func TestStreamBudget(t *testing.T) {
	out, run := streamTest(t, Options{Frames: 60, Seed: 7, Budget: 9 << 20, FlushBytes: DefaultFlushBytes})
	m := regexp.MustCompile(`Budget: ([\d.]+ \w+) of 9\.0 MiB in use .*; pool .*, ring .*, meshes .*, meshlets .*, textures .*; (\d+) requests refused, (\d+) reclaims gave back ([\d.]+ \w+)\.`).FindStringSubmatch(out)
	if m == nil || m[3] == "0" || !strings.Contains(out, ", budget 9.0 MiB, on host") || !strings.Contains(out, "every byte intact") {
		t.Fatalf("summary without the budget's reclaims:\n%s", out)
	}
	t.Logf("in use %s, %s refused, %s reclaims gave back %s", m[1], m[2], m[3], m[4])
	report := reportOf(t, run)
	if r := report; !strings.Contains(r, "Budget: the managers&#39; usage against the limit of 9.0 MiB") && !strings.Contains(r, "Budget: the managers' usage against the limit of 9.0 MiB") {
		t.Error("report lacks the budget plot")
	} else if strings.Count(r, "Budget: ") < 3 {
		t.Error("report's maps lack the budget line")
	}
	d := run.Last()
	if d.Budget == nil || d.Budget.Limit != 9<<20 || len(d.Budget.Accounts) != 5 || d.Budget.Reclaims == 0 {
		t.Fatalf("dump's budget: %+v", d.Budget)
	}
}
