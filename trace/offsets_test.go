package trace_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/trace"
)

func TestOffsetsRoundTrip(t *testing.T) {
	offsets := []uint32{0, trace.Refused, 4294967294, 17}
	var buf bytes.Buffer
	if err := trace.WriteOffsets(&buf, offsets); err != nil {
		t.Fatal(err)
	}
	if want := "0\n-\n4294967294\n17\n"; buf.String() != want {
		t.Errorf("wrote %q, want %q", buf.String(), want)
	}
	for _, name := range []string{"o.offsets", "o.offsets.gz"} {
		path := filepath.Join(t.TempDir(), name)
		if err := trace.SaveOffsets(path, offsets); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if gz := b[0] == 0x1f && b[1] == 0x8b; gz != strings.HasSuffix(name, ".gz") {
			t.Errorf("%s: gzip = %v", name, gz)
		}
		got, err := trace.LoadOffsets(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, offsets) {
			t.Errorf("%s: read back %v, want %v", name, got, offsets)
		}
	}
}

func TestReadOffsetsErrors(t *testing.T) {
	tests := []struct {
		in   string
		line int
		msg  string
	}{
		{"1\n2\nx\n", 3, `trace: o:3: malformed line: bad offset "x"`},
		{"1\n\n", 2, `trace: o:2: malformed line: bad offset ""`},
		{"4294967295\n", 1, `trace: o:1: malformed line: bad offset "4294967295"`},
		{"--\n", 1, `trace: o:1: malformed line: bad offset "--"`},
		{" 1\n", 1, `trace: o:1: malformed line: bad offset " 1"`},
	}
	for _, tt := range tests {
		_, err := trace.ReadOffsets(strings.NewReader(tt.in), "o")
		var pe *trace.ParseError
		if !errors.As(err, &pe) || !errors.Is(err, trace.ErrSyntax) || pe.Line != tt.line || err.Error() != tt.msg {
			t.Errorf("%q: got %v, want %s", tt.in, err, tt.msg)
		}
	}
	got, err := trace.ReadOffsets(strings.NewReader("5\r\n-\r\n"), "o")
	if err != nil || !reflect.DeepEqual(got, []uint32{5, trace.Refused}) {
		t.Errorf("crlf: %v, %v", got, err)
	}
	if _, err := trace.LoadOffsets(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestReadOffsetsTruncatedGzip: a gzipped offsets file cut anywhere is a
// *ParseError wrapping io.ErrUnexpectedEOF, never ErrSyntax for the line
// the cut ends in (issue 21's class).
func TestReadOffsetsTruncatedGzip(t *testing.T) {
	offs := make([]uint32, 400)
	for i := range offs {
		offs[i] = uint32(i) * 1_000_003
	}
	offs[7] = trace.Refused
	var text bytes.Buffer
	if err := trace.WriteOffsets(&text, offs); err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(text.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	gz := z.Bytes()
	for cut := 2; cut < len(gz); cut++ {
		_, err := trace.ReadOffsets(bytes.NewReader(gz[:cut]), "cut.gz")
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d of %d: %v, want io.ErrUnexpectedEOF", cut, len(gz), err)
		}
	}
	got, err := trace.ReadOffsets(bytes.NewReader(gz), "whole.gz")
	if err != nil || len(got) != len(offs) {
		t.Fatalf("whole file: %d offsets, %v", len(got), err)
	}
}
