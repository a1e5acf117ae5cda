package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/inspect"
)

// demoDump writes a dump of a short host demo and returns its path.
func demoDump(t *testing.T) string {
	t.Helper()
	_, dir := runDemoTest(t, "-device", "host", "-frames", "20")
	return filepath.Join(dir, "dump.json")
}

func TestMap(t *testing.T) {
	dump := demoDump(t)
	dir := t.TempDir()
	for _, ext := range []string{"html", "svg", "png", "HTML"} {
		out := filepath.Join(dir, "map."+ext)
		status, stdout, stderr := gpumem("map", dump, "-o", out)
		if status != 0 || !regexp.MustCompile(`^wrote `+regexp.QuoteMeta(out)+` \([0-9]+ buffers`).MatchString(stdout) {
			t.Fatalf("map -o %s: status %d\n%s%s", out, status, stdout, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		switch strings.ToLower(ext) {
		case "png":
			if _, err := png.Decode(bytes.NewReader(b)); err != nil {
				t.Error(err)
			}
		default:
			if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte(inspect.KindColor("vertex"))) {
				t.Errorf("%s: no map", out)
			}
		}
	}
	// Flags before the dump work too, and the output is deterministic.
	a, b := filepath.Join(dir, "a.svg"), filepath.Join(dir, "b.svg")
	gpumem("map", "-o", a, dump)
	gpumem("map", dump, "-o", b)
	x, _ := os.ReadFile(a)
	y, _ := os.ReadFile(b)
	if len(x) == 0 || !bytes.Equal(x, y) {
		t.Error("map output not deterministic")
	}
}

func TestMapErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"version":1,"buffers":[{"capacity_bytes":8,"regions":[]}]}`), 0o644)
	newer := filepath.Join(dir, "v2.json")
	os.WriteFile(newer, []byte(`{"version":2}`), 0o644)
	junk := filepath.Join(dir, "junk.json")
	os.WriteFile(junk, []byte("\x00{["), 0o644)
	out := filepath.Join(dir, "m.png")
	for _, tt := range []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"map"}, 2, "want one dump file, got 0"},
		{[]string{"map", "a.json", "b.json"}, 2, "want one dump file, got 2"},
		{[]string{"map", bad, "-o", filepath.Join(dir, "m.txt")}, 2, "must end in .html, .svg or .png"},
		{[]string{"map", filepath.Join(dir, "missing.json"), "-o", out}, 1, "no such file"},
		{[]string{"map", bad, "-o", out}, 1, "invalid dump: buffer 0"},
		{[]string{"map", newer, "-o", out}, 1, "unsupported dump version: version 2"},
		{[]string{"map", junk, "-o", out}, 1, "invalid dump"},
		{[]string{"map", "-h"}, 0, "usage: gpumem map"},
	} {
		status, _, stderr := gpumem(tt.args...)
		if status != tt.status || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", tt.args, status, stderr, tt.status, tt.stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed map wrote its output")
	}
}
