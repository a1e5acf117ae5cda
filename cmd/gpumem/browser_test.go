package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// chromium finds a headless-capable Chromium, or skips the test with what
// to install; in CI (CI=true) a missing browser fails it instead, unless
// GPUMEM_NO_BROWSER=1 says the machine has none on purpose (a GPU machine
// that scripts/gpu-test runs on).
func chromium(t *testing.T) string {
	t.Helper()
	if os.Getenv("GPUMEM_NO_BROWSER") == "1" {
		t.Skip("GPUMEM_NO_BROWSER=1: this machine has no browser")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found for the browser test (on Debian: apt-get install -y chromium)"
	if os.Getenv("CI") == "true" {
		t.Fatal("CI must run the browser test: " + msg)
	}
	t.Skip(msg)
	return ""
}

// screenshot renders the page at path in headless Chromium, 1200 pixels
// wide and height high, and returns the screenshot.
// GPUMEM_SCREENSHOT_DIR=dir keeps it there.
func screenshot(t *testing.T, browser, page string, height int) image.Image {
	t.Helper()
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage",
		"--hide-scrollbars", "--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot,
		"--window-size=1200,"+strconv.Itoa(height), "file://"+abs)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	b, rerr := os.ReadFile(shot)
	if rerr != nil {
		t.Fatalf("chromium wrote no screenshot (%v): %v\n%s", err, rerr, out)
	}
	if keep := os.Getenv("GPUMEM_SCREENSHOT_DIR"); keep != "" {
		os.WriteFile(filepath.Join(keep, filepath.Base(page)+".png"), b, 0o644)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return img
}

// kindPixels counts the screenshot's pixels in each owner kind's color
// (within a small tolerance for color management).
func kindPixels(img image.Image, kinds []string) (map[string]int, int) {
	want := map[string]color.RGBA{}
	for _, k := range kinds {
		var c color.RGBA
		fmt.Sscanf(inspect.KindColor(k), "#%02x%02x%02x", &c.R, &c.G, &c.B)
		want[k] = c
	}
	near := func(a, b uint8) bool { return a-b < 4 || b-a < 4 }
	counts := map[string]int{}
	total := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			p := color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0}
			total++
			for k, c := range want {
				if near(p.R, c.R) && near(p.G, c.G) && near(p.B, c.B) {
					counts[k]++
				}
			}
		}
	}
	return counts, total
}

// TestBrowser renders the demo's report and a map made by gpumem map in
// headless Chromium and checks the screenshots show the memory maps: a
// good share of their pixels are in the owner kinds' colors, every kind
// among them.
func TestBrowser(t *testing.T) {
	testdevice.Long(t) // 10 s of Chromium screenshots; TestBrowserReport checks the report in every run
	browser := chromium(t)
	_, dir := runDemoTest(t, "-device", "host")
	mapPage := filepath.Join(dir, "map.html")
	if status, out, errOut := gpumem("map", filepath.Join(dir, "dump.json"), "-o", mapPage); status != 0 {
		t.Fatalf("map: %s%s", out, errOut)
	}
	kinds := []string{"vertex", "index", "meshlet-data", "meshlet-rows", "texture", "ring"}
	// The check tells a page without maps from one with them.
	blank := filepath.Join(dir, "blank.html")
	os.WriteFile(blank, []byte("<!DOCTYPE html><title>blank</title><p>No map here."), 0o644)
	if counts, _ := kindPixels(screenshot(t, browser, blank, 2000), kinds); len(counts) != 0 {
		t.Errorf("a page without maps has owner-kind pixels: %v", counts)
	}
	// The report's maps come after its contents, summary and plots: its
	// screenshot is of the whole page.
	heights := map[string]int{"report.html": 10000, "map.html": 2000}
	for _, page := range []string{filepath.Join(dir, "report.html"), mapPage} {
		t.Run(filepath.Base(page), func(t *testing.T) {
			img := screenshot(t, browser, page, heights[filepath.Base(page)])
			counts, total := kindPixels(img, kinds)
			sum := 0
			for _, k := range kinds {
				sum += counts[k]
				if counts[k] < 300 {
					t.Errorf("%s: %d pixels of %s's color %s, want the map's bars", filepath.Base(page), counts[k], k, inspect.KindColor(k))
				}
			}
			share := float64(sum) / float64(total)
			t.Logf("%s: %dx%d, %.1f%% of pixels in owner-kind colors %v", filepath.Base(page), img.Bounds().Dx(), img.Bounds().Dy(), 100*share, counts)
			if share < 0.02 {
				t.Errorf("%s: only %.2f%% of the screenshot in owner-kind colors: blank or error page?", filepath.Base(page), 100*share)
			}
		})
	}
}

// reportChecks is a script the report test appends to a copy of the page:
// it inspects the page as Chromium laid it out and writes what it found,
// as JSON, into the document's title.
const reportChecks = `<script>
(function () {
  var r = {errors: []};
  function fail(s) { r.errors.push(s); }
  // Contents: every link leads to an element of the page.
  var links = document.querySelectorAll('nav#contents a[href^="#"]');
  r.contents = links.length;
  links.forEach(function (a) {
    if (!document.getElementById(a.getAttribute('href').slice(1))) fail('contents link ' + a.getAttribute('href') + ' leads nowhere');
  });
  // The first screen: the problems (or none) and the key figures, whole.
  var top = document.getElementById('problems'), figs = document.getElementById('figures');
  r.cards = figs ? figs.querySelectorAll('.card').length : 0;
  r.firstScreen = !!top && !!figs && figs.getBoundingClientRect().bottom <= 1000;
  // The stacked chart of memory by category: a band per category, each
  // drawn with some height.
  var st = document.querySelector('svg.gpumem-plot.stacked[aria-label^="Memory by category"]');
  r.bands = 0;
  if (st) st.querySelectorAll('polygon.band').forEach(function (b) { if (b.getBBox().height > 0) r.bands++; });
  // Hover values: columns titled with the frame's values.
  r.hover = document.querySelectorAll('svg.gpumem-plot rect.hover > title').length;
  // The reserved line is dashed and drawn over the occupied fill.
  var res = document.querySelector('polyline[data-series^="reserved"]');
  r.reservedOnTop = !!res && res.getAttribute('stroke-dasharray') !== null && !res.parentNode.querySelector('polyline[data-series^="reserved"] ~ polygon');
  // Each map: its striped regions per buffer agree with the table's
  // "moved this frame", and the heading's count with their sum.
  r.maps = [];
  document.querySelectorAll('details[id^="frame-"]').forEach(function (sec) {
    var m = {id: sec.id, striped: 0, tableMoved: 0, layers: 0};
    sec.querySelectorAll('g.gpumem-buffer').forEach(function (g) {
      var name = g.getAttribute('data-buffer');
      var striped = g.querySelectorAll('rect[fill="url(#gpumem-moving)"]').length;
      if (name.indexOf('textures/') === 0) m.layers += g.querySelectorAll('title').length;
      var row = Array.prototype.find.call(sec.querySelectorAll('tr[data-buffer]'), function (tr) { return tr.getAttribute('data-buffer') === name; });
      if (!row) { fail(sec.id + ': no table row for ' + name); return; }
      var moved = parseInt(row.querySelector('td.moving').textContent.replace(/,/g, ''), 10);
      var moves = parseInt(row.querySelector('td.frame-moves').textContent, 10);
      if (moved !== striped) fail(sec.id + ': ' + name + ': table says ' + moved + ' moved, map stripes ' + striped);
      if (moves < moved) fail(sec.id + ': ' + name + ': ' + moves + ' moves for ' + moved + ' allocations moved');
      m.striped += striped;
      m.tableMoved += moved;
    });
    var total = sec.querySelector('tr.total td.moving');
    if (!total || parseInt(total.textContent.replace(/,/g, ''), 10) !== m.striped) fail(sec.id + ': total row does not add up to ' + m.striped);
    var note = sec.querySelector('.frame-note').textContent;
    var k = note.match(/(\d+) allocations moved, striped/);
    if (!k || parseInt(k[1], 10) !== m.striped) fail(sec.id + ': heading says "' + note + '", map stripes ' + m.striped);
    m.label = sec.querySelector('summary').textContent;
    r.maps.push(m);
  });
  document.title = JSON.stringify(r);
})();
</script>`

// TestBrowserReport renders the demo's report in headless Chromium with
// reportChecks and checks the new parts as laid out: the contents, the
// problems and the key figures on the first screen, the stacked chart of
// memory by category, values on hover, the reserved line
// over the occupied fill, each map once, texture pages as grids of layers,
// and per-frame moves per buffer agreeing with the striped regions (the
// tables said 0 for every mesh slab while the map striped 211 regions).
func TestBrowserReport(t *testing.T) {
	browser := chromium(t)
	_, dir := runDemoTest(t, "-device", "host", "-frames", "120")
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	checked := filepath.Join(dir, "checked.html")
	if err := os.WriteFile(checked, append(page, reportChecks...), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1200,2000",
		"--dump-dom", "file://"+checked)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	m := regexp.MustCompile(`<title>(\{.*?\})</title>`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the checks wrote no result; the page's head:\n%.2000s", out)
	}
	var r struct {
		Errors        []string
		Cards         int
		FirstScreen   bool
		Contents      int
		Bands         int
		Hover         int
		ReservedOnTop bool
		Maps          []struct {
			ID, Label           string
			Striped, TableMoved int
			Layers              int
		}
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &r); err != nil {
		t.Fatalf("%s: %v", m[1], err)
	}
	for _, e := range r.Errors {
		t.Error(e)
	}
	t.Logf("contents %d links, %d bands, %d hover columns, maps %+v", r.Contents, r.Bands, r.Hover, r.Maps)
	if r.Contents < 7 {
		t.Errorf("contents: %d links, want the plots, the tables, headroom, the maps and the summary", r.Contents)
	}
	if r.Cards != 9 || !r.FirstScreen {
		t.Errorf("%d cards of key figures, on the first screen %v: want 9 (GPU time among them), above 1000 pixels", r.Cards, r.FirstScreen)
	}
	// One band per category: vertex, index, meshlet, texture, uniform,
	// scratch, readback, ahead (buffers and pages made ahead of need).
	if r.Bands != 8 {
		t.Errorf("stacked chart: %d bands drawn, want 8 (one per category)", r.Bands)
	}
	if r.Hover < 7*120 {
		t.Errorf("%d hover columns, want one per frame in each of the 7 plots", r.Hover)
	}
	if !r.ReservedOnTop {
		t.Error("the reserved line is not dashed over the occupied fill")
	}
	seen := map[string]bool{}
	busiest := false
	for _, mp := range r.Maps {
		if seen[mp.Label] {
			t.Errorf("map %q twice", mp.Label)
		}
		seen[mp.Label] = true
		if strings.Contains(mp.Label, "most moves") {
			busiest = mp.Striped > 0
		}
		if mp.Layers < 16 {
			t.Errorf("%s: %d layer cells in the texture pages, want a grid of layers", mp.ID, mp.Layers)
		}
	}
	if len(r.Maps) < 3 || !busiest {
		t.Errorf("maps %+v: want frames 1, 60, 120 and the busiest, whose map stripes what moved", r.Maps)
	}
}
