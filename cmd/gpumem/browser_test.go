package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpumem/gpumem/inspect"
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

// screenshot renders the page at path in headless Chromium, 1200x2000 (the
// demo's summary and its whole last map), and returns the screenshot. GPUMEM_SCREENSHOT_DIR=dir keeps it there.
func screenshot(t *testing.T, browser, page string) image.Image {
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
		"--window-size=1200,2000", "file://"+abs)
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
	if counts, _ := kindPixels(screenshot(t, browser, blank), kinds); len(counts) != 0 {
		t.Errorf("a page without maps has owner-kind pixels: %v", counts)
	}
	for _, page := range []string{filepath.Join(dir, "report.html"), mapPage} {
		t.Run(filepath.Base(page), func(t *testing.T) {
			img := screenshot(t, browser, page)
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
