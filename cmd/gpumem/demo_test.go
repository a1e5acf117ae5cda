package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
)

// runDemoTest runs gpumem demo with args plus an output directory's
// report and dump, and returns stdout and the directory.
func runDemoTest(t *testing.T, args ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	args = append([]string{"demo", "-o", filepath.Join(dir, "report.html"), "-dump", filepath.Join(dir, "dump.json")}, args...)
	status, stdout, stderr := gpumem(args...)
	if status != 0 {
		t.Fatalf("gpumem %s: status %d\n%s%s", strings.Join(args, " "), status, stdout, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr not a terminal, yet: %q", stderr)
	}
	return stdout, dir
}

// numbers is the summary without what varies from run to run: timings,
// the device and the output paths.
func numbers(stdout string) string {
	var keep []string
	managers := false // in the table of gpumem's time by manager
	for _, l := range strings.Split(stdout, "\n") {
		if managers && strings.HasPrefix(l, "  ") {
			continue
		}
		managers = strings.HasPrefix(l, "gpumem's time per frame by manager")
		switch {
		case managers, strings.HasPrefix(l, "time per frame"), strings.HasPrefix(l, "  (the rest of a frame"), strings.HasPrefix(l, "report:"), strings.HasPrefix(l, "dump:"):
			continue
		case strings.HasPrefix(l, "gpumem demo:"):
			l = regexp.MustCompile(`, on .*`).ReplaceAllString(l, "")
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

func TestDemoHost(t *testing.T) {
	out, dir := runDemoTest(t, "-device", "host", "-frames", "60", "-seed", "7")
	for _, want := range []string{"gpumem demo: 60 frames, seed 7, on host", "meshes: slab of", "12-byte vertices", "20-byte vertices",
		"24-byte vertices", "6-byte vertices", "uint16 indices", "uint32 indices", "meshlets/data", "meshlets/rows", "textures/bindless pages", "ring/constants", "ring/scratch", "pool/readback",
		"total", "growths", "fragmentation", "time per frame", "in gpumem's calls", "99th percentile", "resident: ", "streamed in (meshes, meshlets, textures): ",
		"every byte intact", "report: ", "dump: ",
		"binding slots", "fence 58 of 60 completed", "2 in flight", "served by an idle buffer", "Moved reported"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	again, _ := runDemoTest(t, "-device", "host", "-frames", "60", "-seed", "7")
	if numbers(out) != numbers(again) {
		t.Errorf("same seed, different numbers:\n%s\n---\n%s", numbers(out), numbers(again))
	}
	other, _ := runDemoTest(t, "-device", "host", "-frames", "60", "-seed", "8")
	if numbers(out) == numbers(other) {
		t.Error("seeds 7 and 8 gave the same numbers")
	}

	report, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	r := string(report)
	for _, want := range []string{"<!DOCTYPE html>", "frame 1", "frame 30", "frame 60", "Fragmentation", "Moves per frame",
		"occupied", inspect.KindColor("vertex"), inspect.KindColor("index"), inspect.KindColor("meshlet-rows"),
		inspect.KindColor("texture"), inspect.KindColor("ring")} {
		if !strings.Contains(r, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Each map once, in order: frames 1, 30 and 60, and the busiest
	// frame's when it is another; six plots.
	if n := strings.Count(r, "<svg"); n < 3+7 || n > 4+7 {
		t.Errorf("report has %d SVGs, want 3 or 4 maps and 7 plots", n)
	}
	if !strings.Contains(r, ", the frame with the most moves") && !strings.Contains(out, "moves per frame mean 0.0") {
		t.Error("report lacks the map of the frame with the most moves")
	}
	// Links only within the page (the contents).
	if regexp.MustCompile(`src=|href="[^#]|url\(http|@import`).MatchString(r) {
		t.Error("report refers to external assets")
	}

	d := readDump(t, filepath.Join(dir, "dump.json"))
	if d.Label != "frame 60" || d.Totals.Allocations == 0 {
		t.Errorf("dump %q: totals %+v", d.Label, d.Totals)
	}
	// Every manager's buffers: a slab per mesh layout at least, the
	// meshlet arenas, the texture pages, the ring, the frame arena's
	// blocks in flight.
	kinds := map[memory.Kind]int{}
	for _, b := range d.Buffers {
		kinds[b.Kind]++
	}
	if kinds[memory.VertexSlab] < 4 || kinds[memory.IndexSlab] < 2 || kinds[memory.MeshletArena] != 2 || kinds[memory.TexturePage] < 4 ||
		kinds[memory.RingBuffer] != 1 || kinds[memory.FrameBlock] < 2 || kinds[memory.PoolBuffer] == 0 {
		t.Errorf("dump's buffers by kind: %v", kinds)
	}
}

// TestDemoScale runs the scene at scale 3: three times the meshes,
// batches and textures resident, and gpumem's own time reported apart.
func TestDemoScale(t *testing.T) {
	one, _ := runDemoTest(t, "-device", "host", "-frames", "40")
	three, _ := runDemoTest(t, "-device", "host", "-frames", "40", "-scale", "3")
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

// TestDemoWebGPU runs the demo on webgpu (where an adapter is found; in CI
// it must be) and checks it gives the host's numbers.
func TestDemoWebGPU(t *testing.T) {
	dev, err := webgpu.New(webgpu.Options{})
	if errors.Is(err, webgpu.ErrNoAdapter) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must run the webgpu demo: %v", err)
		}
		t.Skipf("no WebGPU adapter (on Debian without a GPU: apt-get install mesa-vulkan-drivers): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	dev.Release()
	gpu, _ := runDemoTest(t, "-device", "webgpu", "-frames", "40")
	if !strings.Contains(gpu, "on webgpu: ") {
		t.Errorf("not on webgpu:\n%s", gpu)
	}
	cpu, _ := runDemoTest(t, "-device", "host", "-frames", "40")
	if numbers(gpu) != numbers(cpu) {
		t.Errorf("webgpu and host differ:\n%s\n---\n%s", numbers(gpu), numbers(cpu))
	}
}

func TestDemoUsage(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"demo", "-device", "cuda"}, 2, `-device "cuda": want host, webgpu, vulkan, metal, dx12 or gl`},
		{[]string{"demo", "-frames", "0"}, 2, "-frames 0"},
		{[]string{"demo", "-scale", "0"}, 2, "-scale 0"},
		{[]string{"demo", "-scale", "100000"}, 2, "-scale 100000"},
		{[]string{"demo", "-speed", "0"}, 2, "-speed 0"},
		{[]string{"demo", "-speed", "NaN"}, 2, "-speed NaN"},
		{[]string{"demo", "extra"}, 2, "unexpected arguments: extra"},
		{[]string{"demo", "-unload", "-1"}, 2, "-unload -1"},
		{[]string{"demo", "-budget", "lots"}, 2, `"lots": want a size`},
		{[]string{"demo", "-flush-bytes", "-1"}, 2, `"-1": want a size`},
		{[]string{"demo", "-nope"}, 2, "flag provided but not defined"},
		{[]string{"demo", "-h"}, 0, "usage: gpumem demo"},
		{[]string{"demo", "-device", "host", "-frames", "2", "-o", filepath.Join(t.TempDir(), "no", "such", "dir.html")}, 1, "no such file"},
	} {
		status, _, stderr := gpumem(tt.args...)
		if status != tt.status || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", tt.args, status, stderr, tt.status, tt.stderr)
		}
	}
}

// TestDemoFlushBytes bounds each mesh Flush well below what the scene
// stages a frame: meshes wait staged over frames, their spot checks are
// skipped, the run flushes the rest after the last frame, and every mesh
// is read back intact. Unbounded, no frame ends with a mesh staged.
func TestDemoFlushBytes(t *testing.T) {
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
	out, _ := runDemoTest(t, "-device", "host", "-frames", "20", "-scale", "3", "-flush-bytes", "64KiB")
	bound, n := parse(out)
	if bound != "at most 64.0 KiB" || n[0] < 10 || n[1] < 20 || n[3] == 0 {
		t.Errorf("bounded at 64 KiB: %q, %d frames ended with meshes staged (%d at most), %d checks skipped, %d Flushes after:\n%s",
			bound, n[0], n[1], n[2], n[3], out)
	}
	if !strings.Contains(out, "every byte intact") {
		t.Errorf("not every byte intact:\n%s", out)
	}
	out, _ = runDemoTest(t, "-device", "host", "-frames", "20", "-scale", "3", "-flush-bytes", "0")
	if bound, n := parse(out); bound != "unbounded" || n[0] != 0 || n[2] != 0 || n[3] != 0 {
		t.Errorf("unbounded: %q, %v", bound, n)
	}
}

// TestDemoManagerTimes checks the summary's table of gpumem's time by
// manager, and the stopwatch that fills it: a call's time goes to its
// manager, what the demo excludes comes out of that manager's too.
func TestDemoManagerTimes(t *testing.T) {
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

	out, dir := runDemoTest(t, "-device", "host", "-frames", "20")
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
	report, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "gpumem&#39;s time per frame (CPU) by manager") {
		t.Error("report lacks the plot of gpumem's time by manager")
	}
}

// TestDemoBelt runs the meshes and the constants through a staging belt:
// its uploads are the Flushes' and the ring's writes, its time a row of
// its own, every byte intact.
func TestDemoBelt(t *testing.T) {
	out, _ := runDemoTest(t, "-device", "host", "-frames", "20", "-belt")
	for _, want := range []string{"through a staging belt: ", "written through the meshes' staging belt", "  staging ", "every byte intact"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`through a staging belt: 0 uploads`).MatchString(out) {
		t.Errorf("nothing went through the belt:\n%s", out)
	}
}

// TestDemoCPUProfile writes a CPU profile whose samples carry the
// managers' labels (read with go tool pprof -tags where go is at hand).
func TestDemoCPUProfile(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	runDemoTest(t, "-device", "host", "-frames", "120", "-scale", "8", "-cpuprofile", prof)
	f, err := os.Open(prof)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("profile: %v", err)
	}
	if b, err := io.ReadAll(z); err != nil || !bytes.Contains(b, []byte(".simulate")) {
		t.Fatalf("profile of %d bytes without the demo's frames (simulate): %v", len(b), err)
	}
	status, _, stderr := gpumem("demo", "-device", "host", "-frames", "2", "-o", "", "-cpuprofile", filepath.Join(t.TempDir(), "no", "such", "dir"))
	if status != 1 || !strings.Contains(stderr, "-cpuprofile") {
		t.Errorf("unwritable -cpuprofile: status %d, %q", status, stderr)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to read the profile's labels with")
	}
	tags, err := exec.Command(goTool, "tool", "pprof", "-tags", prof).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -tags: %v\n%s", err, tags)
	}
	// Scale 8 spends over a second in the mesh allocator's Flushes.
	for _, want := range []string{"gpumem: Total", "): demo", "): mesh"} {
		if !strings.Contains(string(tags), want) {
			t.Errorf("profile's labels lack %q:\n%s", want, tags)
		}
	}
}

// readDump reads the dump the demo wrote at path.
func readDump(t *testing.T, path string) inspect.Dump {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := inspect.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
