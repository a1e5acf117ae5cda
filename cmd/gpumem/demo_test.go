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
	"strings"
	"testing"

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

func TestDemoHost(t *testing.T) {
	out, dir := runDemoTest(t, "-device", "host", "-frames", "60", "-seed", "7")
	for _, want := range []string{"gpumem demo: 60 frames, seed 7, on host", "vertex slabs of 12-byte elements", "vertex slabs of 20-byte elements",
		"vertex slabs of 24-byte elements", "vertex slabs of 6-byte elements", "index slabs of 2-byte elements", "index slabs of 4-byte elements", "meshlet arenas", "texture pages of ", "ring buffers", "frame blocks", "pool buffers",
		"total", "growths", "fragmentation", "time per frame", "in gpumem's calls", "99th percentile", "resident: ", "streamed in (meshes, meshlets, textures): ",
		"every byte intact", "report: ", "dump: ",
		"binding slots", "fence 58 of 60 completed", "2 in flight", "served by an idle buffer", "Moved reported"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "staging belt") {
		t.Errorf("a staging belt on the host device without -belt:\n%s", out)
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

// TestDemoWebGPU runs the demo on webgpu (where an adapter is found; in CI
// it must be). That it gives the host's numbers is package scene's test.
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
	gpu, _ := runDemoTest(t, "-device", "webgpu", "-frames", "10")
	if !strings.Contains(gpu, "on webgpu: ") || !strings.Contains(gpu, "every byte intact") {
		t.Errorf("not on webgpu:\n%s", gpu)
	}
	// On a GPU the belt is the default; -belt=false takes queue writes.
	if !strings.Contains(gpu, "through a staging belt: ") {
		t.Errorf("on webgpu without -belt, no staging belt:\n%s", gpu)
	}
	queue, _ := runDemoTest(t, "-device", "webgpu", "-frames", "10", "-belt=false")
	if strings.Contains(queue, "staging belt") || !strings.Contains(queue, "every byte intact") {
		t.Errorf("on webgpu with -belt=false:\n%s", queue)
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
	if b, err := io.ReadAll(z); err != nil || !bytes.Contains(b, []byte("scene.Stream")) {
		t.Fatalf("profile of %d bytes without the demo's frames (scene.Stream): %v", len(b), err)
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

// TestDemoOverBudget: a budget too small for the run fails naming the
// budget, not the device, and the report and summary of the frames before
// are written, the problem at the top, and the error names a budget that
// passes.
func TestDemoOverBudget(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report.html")
	status, stdout, stderr := gpumem("demo", "-device", "host", "-budget", "8MiB", "-o", out)
	if status != 1 || !strings.HasPrefix(stderr, "gpumem demo: over the budget of 8.0 MiB in frame ") ||
		strings.Contains(stderr, "device: out of memory") || !strings.Contains(stderr, "at their peak") {
		t.Fatalf("status %d, stderr:\n%s", status, stderr)
	}
	if !strings.Contains(stdout, "The run stopped in frame ") || !strings.Contains(stdout, "report: "+out) {
		t.Errorf("summary:\n%s", stdout)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if p := string(page); !strings.Contains(p, `<div class="verdict bad" id="problems">`) || !strings.Contains(p, "Over budget: the budget of 8.0 MiB refused memory in frame ") {
		t.Error("the report does not flag the budget at the top")
	}
	// The budget it names passes.
	m := regexp.MustCompile(`Without a limit the run peaks at [\d.]+ MiB: -budget ([\d.]+MiB) or more passes\.`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no budget that passes in:\n%s", stderr)
	}
	if status, _, stderr := gpumem("demo", "-device", "host", "-budget", m[1], "-o", ""); status != 0 {
		t.Errorf("-budget %s: status %d\n%s", m[1], status, stderr)
	}
}
