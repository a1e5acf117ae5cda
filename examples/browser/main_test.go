//go:build js

package main

import (
	"strings"
	"testing"

	"github.com/gpumem/gpumem/internal/testdevice"
)

// TestPage runs the page for 300 frames: the scene streams (items come and
// go), the memory map is redrawn and changes, the status line ends with
// every mesh byte intact, and the canvas shows the scene.
func TestPage(t *testing.T) {
	testdevice.Long(t)
	res, err := run(config{frames: 300, mapEvery: 10, size: 256, seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.frames != 300 || res.stats.Added == 0 || res.stats.Removed == 0 {
		t.Fatalf("the scene did not stream: %v", res)
	}
	if res.mapDraws != 30 || res.mapChanges < 10 {
		t.Fatalf("memory map drawn %d times, changed %d: want 30, most of them changed", res.mapDraws, res.mapChanges)
	}
	if s := element("status", "p").Get("textContent").String(); !strings.HasSuffix(s, "every mesh byte intact") {
		t.Fatalf("status line %q", s)
	}
	if svg := element("map", "div").Get("innerHTML").String(); !strings.Contains(svg, "<svg") {
		t.Fatalf("no memory map on the page: %.200q", svg)
	}
	t.Log(res)
}
