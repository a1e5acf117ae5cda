package trace_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/offset"
	"github.com/gpumem/gpumem/trace"
)

// FuzzReader feeds arbitrary bytes to the parser. It must never panic: it
// either returns a *ParseError or a trace that is well formed, in which case
// writing the ops back and reading them again gives the same ops, and the
// Program replays without error.
func FuzzReader(f *testing.F) {
	for _, name := range []string{"testdata/small.trace", "testdata/gzipped.trace"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"", "capacity 1\n", "capacity 0\n", "# gpumem-trace v2\ncapacity 3\n",
		"capacity 10\na 1 5\na 2 5\nf 1\na 1 1\nf 2\nf 1\n",
		"capacity 10\na 1 5\na 1 5\n", "capacity 10\nf 9\n", "capacity 4294967295\na 18446744073709551615 4294967295\n",
		"capacity 3\r\na\t1 1\r\n\n#\n",
		"capacity 3\n# gpumem-trace v3\n", "# gpumem-trace v1\ncapacity 3\n# gpumem-trace v1\n", "# gpumem-trace\ncapacity 1\n",
		"# " + strings.Repeat("c", 70000) + "\ncapacity 2\na 1 1\n", "capacity 2\n" + strings.Repeat(" ", 70000) + "# c\nf 1\n",
		"capacity 2\na 1 " + strings.Repeat("1", 70000) + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.NewReader(bytes.NewReader(data), "fuzz")
		if err != nil {
			checkParseError(t, err)
			return
		}
		var ops []trace.Op
		for {
			op, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				checkParseError(t, err)
				return
			}
			if op.Slot >= tr.Slots() {
				t.Fatalf("slot %d not below Slots %d", op.Slot, tr.Slots())
			}
			ops = append(ops, op)
		}

		var buf bytes.Buffer
		w, err := trace.NewWriter(&buf, tr.Capacity())
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			if op.Kind == trace.Alloc {
				w.Alloc(op.ID, op.Size)
			} else {
				w.Free(op.ID)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		text := buf.Bytes()
		tr2, ops2, err := readAll(t, bytes.NewReader(text), "again")
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		if tr2.Capacity() != tr.Capacity() || !reflect.DeepEqual(ops, ops2) {
			t.Fatalf("round trip changed the trace")
		}

		p, err := trace.ReadProgram(bytes.NewReader(text), "again")
		if err != nil {
			t.Fatal(err)
		}
		r, err := trace.NewReplayer(p)
		if err != nil {
			t.Fatalf("Program from Load refused: %v", err)
		}
		a, err := offset.New(p.Capacity, 64)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Run(a); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzWriterComment: what a Writer writes, its Reader reads. A comment is
// either refused with ErrVersion, writing nothing, or written and read
// back as a comment, whatever its length.
func FuzzWriterComment(f *testing.F) {
	for _, s := range []string{
		"", "\n", "a\r\nb", "gpumem-trace v1", "gpumem-trace v2", "x\ngpumem-trace", " gpumem-trace v2",
		"a 1 1", "capacity 2", strings.Repeat("long ", 20000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var buf bytes.Buffer
		w, err := trace.NewWriter(&buf, 1)
		if err != nil {
			t.Fatal(err)
		}
		cerr := w.Comment(text)
		w.Alloc(1, 1)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if cerr != nil {
			if !errors.Is(cerr, trace.ErrVersion) {
				t.Fatalf("Comment: %v, want ErrVersion or nil", cerr)
			}
			if want := trace.Header + "\ncapacity 1\na 1 1\n"; buf.String() != want {
				t.Fatalf("refused comment wrote %q", buf.String())
			}
			return
		}
		tr, ops, err := readAll(t, &buf, "buf")
		if err != nil {
			t.Fatalf("Comment(%q) written, then: %v", text, err)
		}
		if want := []trace.Op{{Kind: trace.Alloc, ID: 1, Size: 1}}; tr.Capacity() != 1 || !reflect.DeepEqual(ops, want) {
			t.Fatalf("read back capacity %d, ops %v", tr.Capacity(), ops)
		}
	})
}

func checkParseError(t *testing.T, err error) {
	t.Helper()
	var pe *trace.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v is not a *ParseError", err, err)
	}
	if pe.Name != "fuzz" || pe.Line < 0 {
		t.Fatalf("bad position in %v", err)
	}
}

// FuzzTruncatedGzip cuts a gzipped trace made from the input anywhere and
// streams it through Reader.Next: every operation returned must be the
// whole trace's, in order (never a line cut short), and the stream must
// end with io.ErrUnexpectedEOF unless nothing was cut. Each 3 bytes of
// data make one allocation (or the free of a live id).
func FuzzTruncatedGzip(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 1, 0, 0, 9, 9, 9}, uint16(40))
	f.Add([]byte{0, 255, 255, 1, 255, 255, 2, 255, 255, 0, 0, 0}, uint16(0xffff))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		var ids []uint64
		var sizes []uint32
		for ; len(data) >= 3 && len(ids) < 500; data = data[3:] {
			ids = append(ids, uint64(data[0]%32)*1_000_000_007)
			sizes = append(sizes, uint32(data[1])<<24|uint32(data[2])<<8|uint32(data[0]))
		}
		gz, ops := gzipTrace(t, ids, sizes)
		checkCut(t, gz, ops, 2+int(cut)%(len(gz)-1))
	})
}
