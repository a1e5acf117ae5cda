package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/inspect"
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
	for _, l := range strings.Split(stdout, "\n") {
		switch {
		case strings.HasPrefix(l, "time per frame"), strings.HasPrefix(l, "  (the rest of a frame"), strings.HasPrefix(l, "report:"), strings.HasPrefix(l, "dump:"):
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
	if n := strings.Count(r, "<svg"); n < 3+6 || n > 4+6 {
		t.Errorf("report has %d SVGs, want 3 or 4 maps and 6 plots", n)
	}
	if !strings.Contains(r, ", the frame with the most moves") && !strings.Contains(out, "moves per frame mean 0.0") {
		t.Error("report lacks the map of the frame with the most moves")
	}
	// Links only within the page (the contents).
	if regexp.MustCompile(`src=|href="[^#]|url\(http|@import`).MatchString(r) {
		t.Error("report refers to external assets")
	}

	f, err := os.Open(filepath.Join(dir, "dump.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := inspect.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if d.Label != "frame 60" || d.Totals.Allocations == 0 {
		t.Errorf("dump %q: totals %+v", d.Label, d.Totals)
	}
	// Every manager's buffers: a slab per mesh layout at least, the
	// meshlet arenas, the texture pages, the ring, the frame arena's
	// blocks in flight.
	kinds := map[string]int{}
	for _, b := range d.Buffers {
		kinds[b.Kind]++
	}
	if kinds["mesh slab"] < 6 || kinds["meshlet"] != 2 || kinds["bindless page"] < 4 || kinds["ring"] != 1 || kinds["ring frame"] < 2 || kinds["pool"] == 0 {
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
