package trace_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/trace"
)

func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, 1000)
	if err != nil {
		t.Fatal(err)
	}
	w.Comment("made by a test\nsecond line")
	w.Alloc(1, 10)
	w.Alloc(1<<64-1, 1<<32-1)
	w.Free(1)
	w.Alloc(1, 0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "# gpumem-trace v1\ncapacity 1000\n# made by a test\n# second line\na 1 10\na 18446744073709551615 4294967295\nf 1\na 1 0\n"
	if buf.String() != want {
		t.Fatalf("wrote\n%s\nwant\n%s", buf.String(), want)
	}
	tr, ops, err := readAll(t, &buf, "buf")
	if err != nil {
		t.Fatal(err)
	}
	wantOps := []trace.Op{alloc(1, 10, 0), alloc(1<<64-1, 1<<32-1, 1), free(1, 0), alloc(1, 0, 0)}
	if tr.Capacity() != 1000 || !reflect.DeepEqual(ops, wantOps) {
		t.Errorf("read back capacity %d, ops %v", tr.Capacity(), ops)
	}
}

// TestWriterLongComment: a comment of any length is written, and read
// back as a comment.
func TestWriterLongComment(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Comment(strings.Repeat("x", 100<<10) + "\nshort\n" + strings.Repeat("y", 1<<20)); err != nil {
		t.Fatal(err)
	}
	w.Alloc(1, 2)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr, ops, err := readAll(t, &buf, "buf")
	if err != nil {
		t.Fatal(err)
	}
	if want := []trace.Op{alloc(1, 2, 0)}; tr.Capacity() != 8 || !reflect.DeepEqual(ops, want) {
		t.Errorf("read back capacity %d, ops %v", tr.Capacity(), ops)
	}
}

// TestWriterVersionComment: Comment refuses, writing nothing, text with a
// line that would read as a version line; the Writer stays usable, and
// what it wrote reads back.
func TestWriterVersionComment(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"gpumem-trace v2", "gpumem-trace v1", "first\ngpumem-trace\r\n", "gpumem-trace\tv3"} {
		if err := w.Comment(text); !errors.Is(err, trace.ErrVersion) {
			t.Errorf("Comment(%q): %v, want ErrVersion", text, err)
		}
	}
	for _, text := range []string{" gpumem-trace v2", "gpumem-traces v2", "not gpumem-trace v2"} {
		if err := w.Comment(text); err != nil {
			t.Errorf("Comment(%q): %v", text, err)
		}
	}
	w.Alloc(1, 2)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "# gpumem-trace v1\ncapacity 8\n#  gpumem-trace v2\n# gpumem-traces v2\n# not gpumem-trace v2\na 1 2\n"
	if buf.String() != want {
		t.Fatalf("wrote\n%s\nwant\n%s", buf.String(), want)
	}
	if _, ops, err := readAll(t, &buf, "buf"); err != nil || len(ops) != 1 {
		t.Fatalf("read back %v, %v", ops, err)
	}
}

func TestNewWriterZeroCapacity(t *testing.T) {
	if _, err := trace.NewWriter(&bytes.Buffer{}, 0); !errors.Is(err, trace.ErrCapacity) {
		t.Errorf("NewWriter(0): %v, want ErrCapacity", err)
	}
	if _, err := trace.Create(filepath.Join(t.TempDir(), "x"), 0); !errors.Is(err, trace.ErrCapacity) {
		t.Errorf("Create(0): %v, want ErrCapacity", err)
	}
}

func TestCreate(t *testing.T) {
	for _, tt := range []struct {
		name string
		gzip bool
	}{{"t.trace", false}, {"t.trace.gz", true}} {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), tt.name)
			w, err := trace.Create(name, 64)
			if err != nil {
				t.Fatal(err)
			}
			w.Alloc(3, 4)
			w.Free(3)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b; got != tt.gzip {
				t.Errorf("gzip = %v, want %v", got, tt.gzip)
			}
			p, err := trace.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			if p.Capacity != 64 || len(p.Steps) != 2 || p.Allocs != 1 {
				t.Errorf("loaded %+v", p)
			}
		})
	}
}

type failWriter struct{ n int }

var errDisk = errors.New("disk full")

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errDisk
	}
	return len(p), nil
}

func TestWriterStickyError(t *testing.T) {
	w, err := trace.NewWriter(&failWriter{n: 100}, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100000 {
		w.Alloc(uint64(i), 1)
	}
	if err := w.Free(1); !errors.Is(err, errDisk) {
		t.Errorf("Free after failure: %v", err)
	}
	if err := w.Close(); !errors.Is(err, errDisk) {
		t.Errorf("Close: %v, want %v", err, errDisk)
	}
}
