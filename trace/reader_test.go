package trace_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/trace"
)

// readAll reads every op of a trace.
func readAll(t *testing.T, r io.Reader, name string) (*trace.Reader, []trace.Op, error) {
	t.Helper()
	tr, err := trace.NewReader(r, name)
	if err != nil {
		return nil, nil, err
	}
	var ops []trace.Op
	for {
		op, err := tr.Next()
		if err == io.EOF {
			return tr, ops, nil
		}
		if err != nil {
			return tr, ops, err
		}
		ops = append(ops, op)
	}
}

func alloc(id uint64, size, slot uint32) trace.Op {
	return trace.Op{Kind: trace.Alloc, ID: id, Size: size, Slot: slot}
}

func free(id uint64, slot uint32) trace.Op {
	return trace.Op{Kind: trace.Free, ID: id, Slot: slot}
}

func TestReaderValid(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		capacity uint32
		ops      []trace.Op
		slots    uint32
	}{
		{"capacity only", "capacity 1\n", 1, nil, 0},
		{"no trailing newline", "capacity 5\na 1 2", 5, []trace.Op{alloc(1, 2, 0)}, 1},
		{"max capacity", "capacity 4294967295\n", 1<<32 - 1, nil, 0},
		{"comments and blanks", "# gpumem-trace v1\n\n# c\n  \ncapacity 10\n# mid\n\na 0 1\n", 10, []trace.Op{alloc(0, 1, 0)}, 1},
		{"crlf and tabs", "capacity\t10\r\na\t1  3\r\n  f 1 \r\n", 10, []trace.Op{alloc(1, 3, 0), free(1, 0)}, 1},
		{"slot reuse is last freed first", "capacity 100\na 10 1\na 11 1\na 12 1\nf 10\nf 12\na 13 1\na 14 1\na 15 1\n", 100,
			[]trace.Op{alloc(10, 1, 0), alloc(11, 1, 1), alloc(12, 1, 2), free(10, 0), free(12, 2), alloc(13, 1, 2), alloc(14, 1, 0), alloc(15, 1, 3)}, 4},
		{"id reuse after free", "capacity 9\na 7 1\nf 7\na 7 2\n", 9, []trace.Op{alloc(7, 1, 0), free(7, 0), alloc(7, 2, 0)}, 1},
		{"zero and oversize sizes parse", "capacity 9\na 1 0\na 2 4294967295\n", 9, []trace.Op{alloc(1, 0, 0), alloc(2, 1<<32-1, 1)}, 2},
		{"big id and leading zeros", "capacity 009\na 18446744073709551615 0001\n", 9, []trace.Op{alloc(1<<64-1, 1, 0)}, 1},
		{"version line v1 again", "# gpumem-trace v1\ncapacity 3\n  # gpumem-trace v1 \r\na 1 1\n", 3, []trace.Op{alloc(1, 1, 0)}, 1},
		{"comments that are not version lines", "#gpumem-trace v2\n# gpumem-traces v2\n#  gpumem-trace v2\ncapacity 3\n", 3, nil, 0},
		{"long comments", "# " + strings.Repeat("x", 100<<10) + "\ncapacity 3\n#" + strings.Repeat(" ", 200<<10) + "\na 1 1\n# " + strings.Repeat("y", 70000), 3, []trace.Op{alloc(1, 1, 0)}, 1},
		{"long comment after blanks", strings.Repeat(" \t", 40000) + "# c\ncapacity 3\n", 3, nil, 0},
		{"blanks do not count against the line limit", "capacity 3\n" + strings.Repeat(" ", 70000) + "a 1 1\n", 3, []trace.Op{alloc(1, 1, 0)}, 1},
		{"longest operation line", "capacity 3\na 1 " + strings.Repeat("0", 65535-4) + "\n", 3, []trace.Op{alloc(1, 0, 0)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, ops, err := readAll(t, strings.NewReader(tt.in), "t")
			if err != nil {
				t.Fatal(err)
			}
			if tr.Capacity() != tt.capacity {
				t.Errorf("Capacity() = %d, want %d", tr.Capacity(), tt.capacity)
			}
			if !reflect.DeepEqual(ops, tt.ops) {
				t.Errorf("ops = %v\nwant %v", ops, tt.ops)
			}
			if tr.Slots() != tt.slots {
				t.Errorf("Slots() = %d, want %d", tr.Slots(), tt.slots)
			}
		})
	}
}

func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		err  error
		line int
		msg  string // the whole message
	}{
		{"empty", "", trace.ErrNoCapacity, 0, "trace: x.trace: missing capacity line"},
		{"comments only", "# gpumem-trace v1\n\n", trace.ErrNoCapacity, 0, "trace: x.trace: missing capacity line"},
		{"op before capacity", "# c\na 1 2\ncapacity 3\n", trace.ErrNoCapacity, 2, "trace: x.trace:2: missing capacity line before the first operation"},
		{"unknown first line", "cap 3\n", trace.ErrSyntax, 1, `trace: x.trace:1: malformed line: unknown operation "cap" (want capacity first)`},
		{"version 2", "# gpumem-trace v2\ncapacity 3\n", trace.ErrVersion, 1, `trace: x.trace:1: unsupported trace version "v2"`},
		{"capacity missing value", "capacity\n", trace.ErrSyntax, 1, "trace: x.trace:1: malformed line: capacity: missing value"},
		{"capacity extra", "capacity 1 2\n", trace.ErrSyntax, 1, `trace: x.trace:1: malformed line: capacity: extra field "2"`},
		{"capacity bad", "capacity -1\n", trace.ErrSyntax, 1, `trace: x.trace:1: malformed line: capacity: bad number "-1"`},
		{"capacity zero", "capacity 0\n", trace.ErrCapacity, 1, "trace: x.trace:1: capacity out of range: 0 (want 1 to 4294967295)"},
		{"capacity 2^32", "\ncapacity 4294967296\n", trace.ErrCapacity, 2, "trace: x.trace:2: capacity out of range: 4294967296 (want 1 to 4294967295)"},
		{"capacity twice", "capacity 3\ncapacity 3\n", trace.ErrSyntax, 2, "trace: x.trace:2: malformed line: capacity line repeated"},
		{"unknown op", "capacity 3\nx 1\n", trace.ErrSyntax, 2, `trace: x.trace:2: malformed line: unknown operation "x"`},
		{"alloc no id", "capacity 3\na\n", trace.ErrSyntax, 2, "trace: x.trace:2: malformed line: a: missing id"},
		{"alloc no size", "capacity 3\na 1\n", trace.ErrSyntax, 2, "trace: x.trace:2: malformed line: a: missing size"},
		{"alloc extra", "capacity 3\na 1 2 3\n", trace.ErrSyntax, 2, `trace: x.trace:2: malformed line: a: extra field "3"`},
		{"alloc trailing comment", "capacity 3\na 1 2 # no\n", trace.ErrSyntax, 2, `trace: x.trace:2: malformed line: a: extra field "#"`},
		{"alloc bad id", "capacity 3\na +1 2\n", trace.ErrSyntax, 2, `trace: x.trace:2: malformed line: a: bad id "+1"`},
		{"alloc id overflow", "capacity 3\na 18446744073709551616 2\n", trace.ErrSyntax, 2, `trace: x.trace:2: malformed line: a: bad id "18446744073709551616"`},
		{"alloc bad size", "capacity 3\na 1 2x\n", trace.ErrSyntax, 2, `trace: x.trace:2: malformed line: a: bad size "2x"`},
		{"alloc size 2^32", "capacity 3\na 1 4294967296\n", trace.ErrSyntax, 2, `trace: x.trace:2: malformed line: a: bad size "4294967296"`},
		{"free no id", "capacity 3\nf\n", trace.ErrSyntax, 2, "trace: x.trace:2: malformed line: f: missing id"},
		{"free extra", "capacity 3\na 1 1\nf 1 1\n", trace.ErrSyntax, 3, `trace: x.trace:3: malformed line: f: extra field "1"`},
		{"free bad id", "capacity 3\nf one\n", trace.ErrSyntax, 2, `trace: x.trace:2: malformed line: f: bad id "one"`},
		{"duplicate live id", "capacity 3\na 5 1\na 5 1\n", trace.ErrDuplicateID, 3, "trace: x.trace:3: duplicate live id 5"},
		{"free of unknown id", "capacity 3\n" + strings.Repeat("# pad\n", 15) + "f 42\n", trace.ErrUnknownID, 17, "trace: x.trace:17: free of unknown id 42"},
		{"double free", "capacity 3\na 1 1\nf 1\nf 1\n", trace.ErrUnknownID, 4, "trace: x.trace:4: free of unknown id 1"},
		{"version after capacity", "# gpumem-trace v1\ncapacity 3\n# gpumem-trace v3\na 1 1\n", trace.ErrVersion, 3, `trace: x.trace:3: unsupported trace version "v3"`},
		{"version after a comment", "# c\n# gpumem-trace v2\ncapacity 3\n", trace.ErrVersion, 2, `trace: x.trace:2: unsupported trace version "v2"`},
		{"version missing", "# gpumem-trace\r\ncapacity 3\n", trace.ErrVersion, 1, `trace: x.trace:1: unsupported trace version ""`},
		{"version with more", "capacity 3\n# gpumem-trace\tv1 beta\n", trace.ErrVersion, 2, `trace: x.trace:2: unsupported trace version "v1 beta"`},
		{"version line too long", "# gpumem-trace v1" + strings.Repeat(" ", 70000) + "\ncapacity 3\n", trace.ErrVersion, 1, `trace: x.trace:1: unsupported trace version: version line too long`},
		{"line too long after a long comment", "#" + strings.Repeat("c", 70000) + "\ncapacity 3\nf " + strings.Repeat("1", 65536-2) + "\n", trace.ErrSyntax, 3, "trace: x.trace:3: malformed line: line too long"},
		{"last line too long", "capacity 3\na 1 " + strings.Repeat("1", 65536-4), trace.ErrSyntax, 2, "trace: x.trace:2: malformed line: line too long"},
		{"line too long", "capacity 3\na 1 " + strings.Repeat("1", 70000) + "\n", trace.ErrSyntax, 2, "trace: x.trace:2: malformed line: line too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, _, err := readAll(t, strings.NewReader(tt.in), "x.trace")
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("error %v is not %v", err, tt.err)
			}
			var pe *trace.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			if pe.Line != tt.line || pe.Name != "x.trace" {
				t.Errorf("at %s:%d, want x.trace:%d", pe.Name, pe.Line, tt.line)
			}
			if err.Error() != tt.msg {
				t.Errorf("message\n%s\nwant\n%s", err, tt.msg)
			}
			if tr != nil { // errors are sticky
				if _, err2 := tr.Next(); err2 != err {
					t.Errorf("second Next: %v, want the same error", err2)
				}
			}
		})
	}
}

func TestParseErrorWithoutName(t *testing.T) {
	_, _, err := readAll(t, strings.NewReader("capacity 3\nf 1\n"), "")
	if got, want := err.Error(), "trace: line 2: free of unknown id 1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, _, err = readAll(t, strings.NewReader(""), "")
	if got, want := err.Error(), "trace: <input>: missing capacity line"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestGzipByMagic checks that compression is found from the content, not
// the name: gzipped.trace is compressed, plain-named.trace.gz is not.
func TestGzipByMagic(t *testing.T) {
	want, err := os.ReadFile("testdata/small.trace")
	if err != nil {
		t.Fatal(err)
	}
	_, wantOps, err := readAll(t, strings.NewReader(string(want)), "small")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"testdata/gzipped.trace", "testdata/plain-named.trace.gz"} {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		_, ops, err := readAll(t, f, name)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(ops, wantOps) {
			t.Errorf("%s: ops differ from small.trace", name)
		}
	}
}

func TestCorruptGzip(t *testing.T) {
	b, err := os.ReadFile("testdata/gzipped.trace")
	if err != nil {
		t.Fatal(err)
	}
	b = b[:len(b)-6] // cut the trailer: checksum and length
	_, err = trace.ReadProgram(strings.NewReader(string(b)), "cut.gz")
	var pe *trace.ParseError
	if !errors.As(err, &pe) || pe.Name != "cut.gz" {
		t.Fatalf("got %v, want a *ParseError naming cut.gz", err)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("got %v, want it to wrap io.ErrUnexpectedEOF", err)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[trace.Kind]string{trace.Alloc: "alloc", trace.Free: "free", 0: "Kind(0)"} {
		if k.String() != want {
			t.Errorf("%d: %q, want %q", k, k.String(), want)
		}
	}
}

func TestReaderAll(t *testing.T) {
	tr, err := trace.NewReader(strings.NewReader("capacity 9\na 1 2\nf 1\nf 1\na 3 3\n"), "all")
	if err != nil {
		t.Fatal(err)
	}
	var ops []trace.Op
	var errs []error
	for op, err := range tr.All() {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ops = append(ops, op)
	}
	if want := []trace.Op{alloc(1, 2, 0), free(1, 0)}; !reflect.DeepEqual(ops, want) {
		t.Errorf("ops %v, want %v", ops, want)
	}
	if len(errs) != 1 || !errors.Is(errs[0], trace.ErrUnknownID) {
		t.Errorf("errors %v, want one ErrUnknownID", errs)
	}
}

// gzipTrace returns a trace of n allocations with long sizes, as text and
// gzipped, and its operations.
func gzipTrace(t testing.TB, ids []uint64, sizes []uint32) (gz []byte, ops []trace.Op) {
	t.Helper()
	var text bytes.Buffer
	w, err := trace.NewWriter(&text, 1<<32-1)
	if err != nil {
		t.Fatal(err)
	}
	live := map[uint64]bool{}
	for i, id := range ids {
		if live[id] {
			if err := w.Free(id); err != nil {
				t.Fatal(err)
			}
			delete(live, id)
			continue
		}
		if err := w.Alloc(id, sizes[i]); err != nil {
			t.Fatal(err)
		}
		live[id] = true
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := trace.NewReader(bytes.NewReader(text.Bytes()), "whole")
	if err != nil {
		t.Fatal(err)
	}
	for op, err := range tr.All() {
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(text.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes(), ops
}

// checkCut streams gz cut to cut bytes through Next: every operation it
// returns is the whole trace's, in order, and the stream ends with
// io.ErrUnexpectedEOF (io.EOF only when nothing was cut).
func checkCut(t testing.TB, gz []byte, ops []trace.Op, cut int) {
	t.Helper()
	tr, err := trace.NewReader(bytes.NewReader(gz[:cut]), "cut.gz")
	if err != nil {
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d of %d: NewReader: %v, want io.ErrUnexpectedEOF", cut, len(gz), err)
		}
		return
	}
	for i := 0; ; i++ {
		op, err := tr.Next()
		if err == io.EOF {
			if cut != len(gz) {
				t.Fatalf("cut at %d of %d: io.EOF after %d operations, want io.ErrUnexpectedEOF", cut, len(gz), i)
			}
			if i != len(ops) {
				t.Fatalf("whole trace: %d operations, want %d", i, len(ops))
			}
			return
		}
		if err != nil {
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("cut at %d of %d: after %d operations: %v, want io.ErrUnexpectedEOF", cut, len(gz), i, err)
			}
			if again, _ := tr.Next(); again != (trace.Op{}) {
				t.Fatalf("cut at %d: an operation after the error", cut)
			}
			return
		}
		if i >= len(ops) || op != ops[i] {
			t.Fatalf("cut at %d of %d: operation %d is %+v, want %+v (a line cut short)", cut, len(gz), i, op, ops[min(i, len(ops)-1)])
		}
	}
}

// TestTruncatedLongComment: a gzip trace cut inside a comment longer than
// a line may be ends with io.ErrUnexpectedEOF, as one cut elsewhere does.
func TestTruncatedLongComment(t *testing.T) {
	var text bytes.Buffer
	w, err := trace.NewWriter(&text, 100)
	if err != nil {
		t.Fatal(err)
	}
	w.Alloc(1, 10)
	w.Comment(strings.Repeat("incompressible? no, but long ", 10000))
	w.Alloc(2, 20)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.NoCompression)
	zw.Write(text.Bytes())
	zw.Close()
	gz := z.Bytes()
	ops := []trace.Op{alloc(1, 10, 0), alloc(2, 20, 1)}
	for cut := 2; cut < len(gz); cut += 997 {
		checkCut(t, gz, ops, cut)
	}
	checkCut(t, gz, ops, len(gz))
}

// TestTruncatedGzip: a gzip trace cut anywhere streams through Next as the
// operations before the cut and then io.ErrUnexpectedEOF; the line the cut
// ends in is never returned, though it may parse (issue 21).
func TestTruncatedGzip(t *testing.T) {
	var ids []uint64
	var sizes []uint32
	for i := range 300 {
		ids = append(ids, uint64(i%40)*1_000_003)
		sizes = append(sizes, uint32(100037+i*7919))
	}
	gz, ops := gzipTrace(t, ids, sizes)
	for cut := 2; cut <= len(gz); cut++ {
		checkCut(t, gz, ops, cut)
	}
}
