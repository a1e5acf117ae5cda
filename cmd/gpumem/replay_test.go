package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpumem/gpumem/trace"
)

// jsonRows decodes the -json output into one map per line.
func jsonRows(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for line := range strings.Lines(out) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		rows = append(rows, m)
	}
	return rows
}

func TestReplayJSON(t *testing.T) {
	tests := []struct {
		policy string
		want   map[string]any // all keys but ns_per_op and allocs_per_op
	}{
		{"exact", map[string]any{"trace": "testdata/small.trace", "ops": 14.0, "failures": 3.0, "peak_end": 300.0, "free_at_end": 886.0, "largest_free_at_end": 886.0}},
		{"fit", map[string]any{"trace": "testdata/small.trace", "ops": 14.0, "failures": 2.0, "peak_end": 1000.0, "free_at_end": 886.0, "largest_free_at_end": 886.0}},
		// Rounded up: 100->104, 200->208, 50->52, 700->704, 10->10, 64->64.
		{"binround", map[string]any{"trace": "testdata/small.trace", "ops": 14.0, "failures": 3.0, "peak_end": 312.0, "free_at_end": 1000 - 52 - 64.0, "largest_free_at_end": 1000 - 52 - 64.0}},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			status, stdout, stderr := gpumem("replay", "-json", "-repeat", "3", "-policy", tt.policy, "testdata/small.trace")
			if status != 0 {
				t.Fatalf("status %d: %s", status, stderr)
			}
			rows := jsonRows(t, stdout)
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1", len(rows))
			}
			row := rows[0]
			keys := slices.Sorted(maps.Keys(row))
			wantKeys := []string{"allocs_per_op", "failures", "free_at_end", "largest_free_at_end", "ns_per_op", "ops", "peak_end", "trace"}
			if !reflect.DeepEqual(keys, wantKeys) {
				t.Fatalf("keys %v, want exactly %v", keys, wantKeys)
			}
			if ns, ok := row["ns_per_op"].(float64); !ok || ns <= 0 {
				t.Errorf("ns_per_op = %v", row["ns_per_op"])
			}
			if _, ok := row["allocs_per_op"].(float64); !ok {
				t.Errorf("allocs_per_op = %v", row["allocs_per_op"])
			}
			delete(row, "ns_per_op")
			delete(row, "allocs_per_op")
			if !reflect.DeepEqual(row, tt.want) {
				t.Errorf("row %v\nwant %v", row, tt.want)
			}
			// small.trace has a zero-size and an oversize request.
			check(t, "stderr", stderr, "2 of the")
		})
	}
}

func TestReplayJSONManyTraces(t *testing.T) {
	status, stdout, stderr := gpumem("replay", "-json", "-repeat", "1", "testdata/tiny.trace.gz", "testdata/small.trace")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	rows := jsonRows(t, stdout)
	if len(rows) != 2 || rows[0]["trace"] != "testdata/tiny.trace.gz" || rows[1]["trace"] != "testdata/small.trace" {
		t.Fatalf("rows %v", rows)
	}
	if rows[0]["ops"] != 3.0 || rows[0]["failures"] != 0.0 || rows[0]["free_at_end"] != 56.0 || rows[0]["peak_end"] != 16.0 {
		t.Errorf("tiny: %v", rows[0])
	}
}

func TestReplayEmptyTrace(t *testing.T) {
	status, stdout, stderr := gpumem("replay", "-json", "testdata/empty.trace")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	want := `{"trace":"testdata/empty.trace","ops":0,"failures":0,"ns_per_op":0,"peak_end":0,"free_at_end":10,"largest_free_at_end":10,"allocs_per_op":0}` + "\n"
	if stdout != want {
		t.Errorf("got %s\nwant %s", stdout, want)
	}
}

func TestReplayTable(t *testing.T) {
	status, stdout, stderr := gpumem("replay", "-repeat", "1", "testdata/tiny.trace.gz", "testdata/small.trace")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("output:\n%s", stdout)
	}
	check(t, "first line", lines[0], "policy exact, node limit 1048576, ns/op median of 1")
	if f := strings.Fields(lines[1]); !slices.Equal(f, strings.Fields("trace ops ns/op failures peak end free at end largest free at end")) {
		t.Errorf("header %q", lines[1])
	}
	f := strings.Fields(lines[3])
	if len(f) != 7 || f[0] != "testdata/small.trace" || f[1] != "14" || f[3] != "3" || f[4] != "300" || f[5] != "886" || f[6] != "886" {
		t.Errorf("row %q", lines[3])
	}
	// Columns line up: every line has the same length.
	for _, l := range lines[2:] {
		if len(l) != len(lines[1]) {
			t.Errorf("line %q not as wide as the header", l)
		}
	}
	if stderr == "" || strings.Contains(stderr, "\r") {
		t.Errorf("stderr %q: want the invalid-request note and no progress (not a terminal)", stderr)
	}
}

func TestReplayOffsetsFile(t *testing.T) {
	for _, name := range []string{"small.offsets", "small.offsets.gz"} {
		path := filepath.Join(t.TempDir(), name)
		status, _, stderr := gpumem("replay", "-json", "-repeat", "2", "-policy", "fit", "-offsets", path, "testdata/small.trace")
		if status != 0 {
			t.Fatalf("status %d: %s", status, stderr)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if gz := bytes.HasPrefix(b, []byte{0x1f, 0x8b}); gz != strings.HasSuffix(name, ".gz") {
			t.Errorf("%s: gzip %v", name, gz)
		}
		got, err := trace.LoadOffsets(path)
		if err != nil {
			t.Fatal(err)
		}
		R := trace.Refused
		if want := []uint32{0, 100, 0, R, R, 300, 50, 50}; !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}

func TestReplayErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.trace")
	// A Go file is not a trace. It is written here, not read from the
	// package's folder: scripts/gpu-test runs this binary where only
	// testdata travels.
	goFile := filepath.Join(t.TempDir(), "main.go")
	if err := os.WriteFile(goFile, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A version line other than v1 is refused wherever it is.
	v3 := filepath.Join(t.TempDir(), "v3.trace")
	if err := os.WriteFile(v3, []byte("# gpumem-trace v1\ncapacity 8\n# gpumem-trace v3\na 1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		status int
		stderr string
	}{
		{"no trace", nil, 2, "gpumem replay: no TRACE given\nRun 'gpumem help replay' for usage.\n"},
		{"unknown flag", []string{"-x", "t"}, 2, "flag provided but not defined: -x"},
		{"bad repeat", []string{"-repeat", "0", "t"}, 2, "gpumem replay: -repeat 0: want at least 1"},
		{"repeat not a number", []string{"-repeat", "many", "t"}, 2, `invalid value "many" for flag -repeat`},
		{"bad policy", []string{"-policy", "best", "t"}, 2, `gpumem replay: -policy "best": want exact, fit or binround`},
		{"max-allocs too small", []string{"-max-allocs", "1", "t"}, 2, "gpumem replay: -max-allocs 1: want 2 to 134217470"},
		{"max-allocs too large", []string{"-max-allocs", "134217471", "t"}, 2, "gpumem replay: -max-allocs 134217471: want 2 to 134217470"},
		{"offsets with two traces", []string{"-offsets", "o", "a", "b"}, 2, "-offsets takes one TRACE, got 2"},
		{"missing file", []string{missing}, 1, "gpumem replay: open " + missing + ": no such file or directory\n"},
		{"malformed trace", []string{"testdata/doublefree.trace"}, 1, "gpumem replay: trace: testdata/doublefree.trace:5: free of unknown id 1\n"},
		{"not a trace", []string{goFile}, 1, "gpumem replay: trace: " + goFile + ":1: malformed line: unknown operation \"package\" (want capacity first)\n"},
		{"version after capacity", []string{v3}, 1, "gpumem replay: trace: " + v3 + ":3: unsupported trace version \"v3\"\n"},
		{"unwritable offsets", []string{"-offsets", filepath.Join(missing, "o"), "testdata/tiny.trace.gz"}, 1, "gpumem replay: -offsets: open "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, stderr := gpumem(append([]string{"replay"}, tt.args...)...)
			if status != tt.status {
				t.Errorf("status %d, want %d", status, tt.status)
			}
			check(t, "stderr", stderr, tt.stderr)
		})
	}
}

// TestReplayLongComment: a trace whose Writer wrote a comment longer than
// a line may be replays.
func TestReplayLongComment(t *testing.T) {
	name := filepath.Join(t.TempDir(), "long.trace")
	w, err := trace.Create(name, 8)
	if err != nil {
		t.Fatal(err)
	}
	w.Comment(strings.Repeat("x", 100<<10))
	w.Alloc(1, 4)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	status, stdout, stderr := gpumem("replay", "-json", "-repeat", "1", name)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	if row := jsonRows(t, stdout)[0]; row["ops"] != 1.0 || row["failures"] != 0.0 {
		t.Errorf("row %v", row)
	}
}

// TestReplayReference replays the prefixes of the shared traces kept in
// the repository and compares -offsets with the reference's offsets.
func TestReplayReference(t *testing.T) {
	names, _ := filepath.Glob("../../testdata/traces/*.trace.gz")
	if len(names) == 0 {
		t.Skip("no traces in ../../testdata/traces")
	}
	for _, name := range names {
		ref := strings.TrimSuffix(name, ".trace.gz") + ".offsets.gz"
		if _, err := os.Stat(ref); err != nil {
			continue
		}
		t.Run(filepath.Base(name), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "offsets")
			status, stdout, stderr := gpumem("replay", "-json", "-repeat", "1", "-offsets", out, name)
			if status != 0 {
				t.Fatalf("status %d: %s", status, stderr)
			}
			got, err := trace.LoadOffsets(out)
			if err != nil {
				t.Fatal(err)
			}
			want, err := trace.LoadOffsets(ref)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("offsets differ from %s", ref)
			}
			row := jsonRows(t, stdout)[0]
			if row["allocs_per_op"] != 0.0 {
				t.Errorf("allocs_per_op = %v, want 0", row["allocs_per_op"])
			}
		})
	}
}

func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf) // not a terminal: silent
	p.start("t")
	p.mute = 0
	p.show("loading")
	if buf.Len() != 0 {
		t.Fatalf("progress on a non-terminal: %q", buf.String())
	}
	p = &progress{w: &buf, mute: time.Hour}
	p.start("t")
	p.show("loading") // a short run shows nothing
	if buf.Len() != 0 {
		t.Fatalf("progress on a short run: %q", buf.String())
	}
	p.mute = 0
	p.show("replay 1/5")
	p.done()
	p.done()
	if want := "\r\033[Kt: replay 1/5\r\033[K"; buf.String() != want {
		t.Errorf("progress wrote %q, want %q", buf.String(), want)
	}
}
