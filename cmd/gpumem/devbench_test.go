package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestDevbench runs devbench on small batches: a table, then JSON. It needs
// a WebGPU adapter; without one it skips, except in CI (CI=true).
func TestDevbench(t *testing.T) {
	var out, errb bytes.Buffer
	err := runDevbench([]string{"-total", "1", "-iters", "1"}, &out, &errb)
	if err != nil && strings.Contains(err.Error(), "no adapter") && os.Getenv("CI") != "true" {
		t.Skipf("no WebGPU adapter (apt-get install mesa-vulkan-drivers): %v", err)
	}
	if err != nil {
		t.Fatalf("devbench: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"copyBufferToBuffer 1 MiB", "moves of 4 KiB", "moves of 1 MiB", "compute", "GB/s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := runDevbench([]string{"-total", "1", "-iters", "1", "-json", "-path", "compute"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(out.String()) {
		var row devbenchRow
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if row.Path != "compute" || row.GBps <= 0 {
			t.Errorf("row %+v", row)
		}
		n++
	}
	if n != 4 {
		t.Errorf("%d compute rows, want 4 (4 KiB, 64 KiB, 1 MiB, 64 KiB skewed)", n)
	}
	if err := runDevbench([]string{"-path", "nope"}, &out, &errb); err == nil {
		t.Error("-path nope: no error")
	}
}
