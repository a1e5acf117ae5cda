package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	cleanup := quietLoader()
	status := m.Run()
	cleanup()
	os.Exit(status)
}

// TestFlagsAfterArguments: every command takes flags after its arguments
// (replay a.trace -json printed the table, then failed to open "-json"),
// and "--" ends the flags.
func TestFlagsAfterArguments(t *testing.T) {
	status, stdout, stderr := gpumem("replay", "testdata/small.trace", "-json", "-repeat", "1")
	if status != 0 || !strings.HasPrefix(stdout, `{"trace":"testdata/small.trace"`) {
		t.Errorf("replay TRACE -json: status %d\n%s%s", status, stdout, stderr)
	}
	status, stdout, _ = gpumem("replay", "-repeat", "1", "testdata/small.trace", "-json", "testdata/tiny.trace.gz")
	if rows := jsonRows(t, stdout); status != 0 || len(rows) != 2 {
		t.Errorf("replay A -json B: status %d, %d rows", status, len(rows))
	}
	status, _, stderr = gpumem("replay", "-repeat", "1", "--", "-json")
	if status != 1 || !strings.Contains(stderr, "open -json: no such file") {
		t.Errorf("replay -- -json: status %d, stderr %q: want -json taken as a file", status, stderr)
	}
	status, _, stderr = gpumem("replay", "testdata/small.trace", "-nope")
	if status != 2 || !strings.Contains(stderr, "flag provided but not defined: -nope") {
		t.Errorf("replay TRACE -nope: status %d, stderr %q", status, stderr)
	}
	for _, args := range [][]string{{"demo", "extra", "-frames", "1"}, {"devbench", "extra", "-iters", "1"}} {
		status, _, stderr = gpumem(args...)
		if status != 2 || !strings.Contains(stderr, args[0]+" takes flags only") {
			t.Errorf("%s: status %d, stderr %q", strings.Join(args, " "), status, stderr)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "report.html")
	status, stdout, stderr = gpumem("demo", "-device", "host", "-frames", "3", "-o", out, "-dump", "")
	if status != 0 || !strings.Contains(stdout, "3 frames") {
		t.Fatalf("demo: status %d\n%s%s", status, stdout, stderr)
	}
}

// TestOutputCheckedFirst: a bad output path fails before the long work,
// not after it: no summary is printed.
func TestOutputCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "dir", "report.html")
	for _, args := range [][]string{
		{"demo", "-device", "host", "-frames", "100000", "-o", missing},
		{"demo", "-device", "host", "-frames", "100000", "-dump", missing},
		{"demo", "-device", "host", "-frames", "100000", "-o", dir},
		{"map", "testdata/none.json", "-o", missing},
		{"replay", "testdata/small.trace", "-offsets", missing},
	} {
		status, stdout, stderr := gpumem(args...)
		if status != 1 || stdout != "" || !strings.Contains(stderr, missing[:len(dir)]) {
			t.Errorf("%s: status %d, stdout %q, stderr %q: want a failure before any work", strings.Join(args, " "), status, stdout, stderr)
		}
	}
	// An existing file is not changed by the check.
	keep := filepath.Join(dir, "keep.html")
	os.WriteFile(keep, []byte("keep"), 0o644)
	if err := checkWritable(keep); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(keep); string(b) != "keep" {
		t.Errorf("checkWritable changed the file: %q", b)
	}
	if err := checkWritable(filepath.Join(dir, "new.html")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.html")); !os.IsNotExist(err) {
		t.Errorf("checkWritable left a new file behind: %v", err)
	}
}

// TestDeviceFlag: demo and devbench pick the device with the same flag,
// and a backend this system cannot have is refused up front, without
// advice to install Linux's Vulkan driver.
func TestDeviceFlag(t *testing.T) {
	status, _, stderr := gpumem("devbench", "-device", "host")
	if status != 2 || !strings.Contains(stderr, "no GPU to measure") {
		t.Errorf("devbench -device host: status %d, stderr %q", status, stderr)
	}
	for _, cmd := range []string{"demo", "devbench"} {
		status, _, stderr = gpumem(cmd, "-device", "nope")
		if status != 2 || !strings.Contains(stderr, `-device "nope": want`) {
			t.Errorf("%s -device nope: status %d, stderr %q", cmd, status, stderr)
		}
		if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
			status, _, stderr = gpumem(cmd, "-device", "metal")
			if status != 2 || !strings.Contains(stderr, "Metal is Apple's") || strings.Contains(stderr, "mesa") {
				t.Errorf("%s -device metal on %s: status %d, stderr %q", cmd, runtime.GOOS, status, stderr)
			}
		}
		if runtime.GOOS != "windows" {
			status, _, stderr = gpumem(cmd, "-device", "dx12")
			if status != 2 || !strings.Contains(stderr, "DirectX 12 is Windows'") {
				t.Errorf("%s -device dx12 on %s: status %d, stderr %q", cmd, runtime.GOOS, status, stderr)
			}
		}
	}
	if h := noAdapterHint("metal"); strings.Contains(h, "mesa") {
		t.Errorf("hint for metal: %q", h)
	}
}

// TestReplayOffsetsFiles: replay of a folder of traces and their offsets
// files (testdata/traces/*) checks each trace against its offsets file
// instead of stopping at the first offsets file.
func TestReplayOffsetsFiles(t *testing.T) {
	names, _ := filepath.Glob("../../testdata/traces/*")
	if len(names) < 2 {
		t.Skip("no traces in ../../testdata/traces")
	}
	status, stdout, stderr := gpumem(append([]string{"replay", "-json", "-repeat", "1"}, names...)...)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	rows := jsonRows(t, stdout)
	if len(rows) != len(names)/2 {
		t.Errorf("%d rows for %d files, want one per trace", len(rows), len(names))
	}
	for _, r := range rows {
		if r["reference_offsets"] != "match" {
			t.Errorf("%v: reference_offsets %v", r["trace"], r["reference_offsets"])
		}
	}

	dir := t.TempDir()
	tr, offs := filepath.Join(dir, "s.trace"), filepath.Join(dir, "s.offsets")
	b, _ := os.ReadFile("testdata/small.trace")
	os.WriteFile(tr, b, 0o644)
	// The offsets of small.trace under -policy exact, one of them wrong.
	os.WriteFile(offs, []byte("0\n100\n0\n-\n-\n-\n50\n51\n"), 0o644)
	status, stdout, stderr = gpumem("replay", "-repeat", "1", tr, offs)
	if status != 1 || !strings.Contains(stdout, "1 differ, first allocation 7") || !strings.Contains(stderr, "replay differs from "+offs) {
		t.Errorf("a wrong offsets file: status %d\n%s%s", status, stdout, stderr)
	}
	// Alone, an offsets file is skipped with a note; beside another trace
	// too; under another name it is recognised by its contents.
	status, _, stderr = gpumem("replay", offs)
	if status != 2 || !strings.Contains(stderr, "only offsets files") {
		t.Errorf("offsets file alone: status %d, stderr %q", status, stderr)
	}
	status, stdout, stderr = gpumem("replay", "-repeat", "1", offs, "testdata/small.trace")
	if status != 0 || !strings.Contains(stderr, offs+": an offsets file") || !strings.Contains(stdout, "testdata/small.trace") {
		t.Errorf("offsets file without its trace: status %d\n%s%s", status, stdout, stderr)
	}
	other := filepath.Join(dir, "answers.txt")
	os.WriteFile(other, []byte("0\n100\n"), 0o644)
	status, stdout, stderr = gpumem("replay", "-repeat", "1", other, "testdata/small.trace")
	if status != 0 || !strings.Contains(stderr, other+": an offsets file") || !strings.Contains(stdout, "testdata/small.trace") {
		t.Errorf("offsets file by contents: status %d\n%s%s", status, stdout, stderr)
	}
	// A broken trace among good ones is reported and the others still run.
	status, stdout, stderr = gpumem("replay", "-repeat", "1", "testdata/doublefree.trace", "testdata/small.trace")
	if status != 1 || !strings.Contains(stdout, "testdata/small.trace") || !strings.Contains(stderr, "1 of 2 traces failed") {
		t.Errorf("a broken trace first: status %d\n%s%s", status, stdout, stderr)
	}
}
