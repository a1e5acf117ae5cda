package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

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

// TestDemoUnload runs 60 frames of streaming and 150 of a zone unload on
// the host: most of what was loaded unloads at frame 61, the mesh slabs
// and meshlet arenas shrink to within a few percent of what their data
// occupies (from four times it and more), the texture pages hold at most
// 1.15 times their textures from the unload's first frame (Compact moves
// the textures left down and the handles the demo holds follow), and
// everything left reads back intact.
func TestDemoUnload(t *testing.T) {
	out, _ := runDemoTest(t, "-device", "host", "-frames", "60", "-unload", "150", "-seed", "7")
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
	again, _ := runDemoTest(t, "-device", "host", "-frames", "60", "-unload", "150", "-seed", "7")
	if numbers(out) != numbers(again) {
		t.Errorf("same seed, different numbers:\n%s\n---\n%s", numbers(out), numbers(again))
	}
}

// TestDemoBudget runs 60 frames under a budget of 9 MiB, which the scene
// reaches: the other managers give memory back (reclaims) and the run
// completes with every byte intact; the summary, the report and the dump
// show usage against the limit.
func TestDemoBudget(t *testing.T) {
	out, dir := runDemoTest(t, "-device", "host", "-frames", "60", "-seed", "7", "-budget", "9MiB")
	m := regexp.MustCompile(`Budget: ([\d.]+ \w+) of 9\.0 MiB in use .*; pool .*, ring .*, meshes .*, meshlets .*, textures .*; (\d+) requests refused, (\d+) reclaims gave back ([\d.]+ \w+)\.`).FindStringSubmatch(out)
	if m == nil || m[3] == "0" || !strings.Contains(out, ", budget 9.0 MiB, on host") || !strings.Contains(out, "every byte intact") {
		t.Fatalf("summary without the budget's reclaims:\n%s", out)
	}
	t.Logf("in use %s, %s refused, %s reclaims gave back %s", m[1], m[2], m[3], m[4])
	report, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if r := string(report); !strings.Contains(r, "Budget: the managers&#39; usage against the limit of 9.0 MiB") && !strings.Contains(r, "Budget: the managers' usage against the limit of 9.0 MiB") {
		t.Error("report lacks the budget plot")
	} else if strings.Count(r, "Budget: ") < 3 {
		t.Error("report's maps lack the budget line")
	}
	d := readDump(t, filepath.Join(dir, "dump.json"))
	if d.Budget == nil || d.Budget.Limit != 9<<20 || len(d.Budget.Accounts) != 5 || d.Budget.Reclaims == 0 {
		t.Fatalf("dump's budget: %+v", d.Budget)
	}
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{{"24", 24 << 20}, {"64MiB", 64 << 20}, {"512KiB", 512 << 10}, {"1.5GiB", 3 << 29}, {"4096B", 4096}, {"2G", 2 << 30}, {"0.5M", 1 << 19}} {
		if got, err := parseSize(c.in); err != nil || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "0", "-1", "MiB", "12TB", "NaN", "1e30"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) succeeded", in)
		}
	}
}
