package trace_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/gpumem/gpumem/offset"
	"github.com/gpumem/gpumem/trace"
)

// The Recorder wraps *offset.Allocator without an adapter.
var _ trace.Allocator[offset.Allocation] = (*offset.Allocator)(nil)
var _ trace.Allocator[offset.Allocation] = (*trace.Recorder[offset.Allocation])(nil)

func TestRecorder(t *testing.T) {
	a, err := offset.New(100, 16)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, _ := trace.NewWriter(&buf, a.Capacity())
	rec := trace.NewRecorder[offset.Allocation](a, w)

	h1, _ := rec.Allocate(40)
	h2, _ := rec.Allocate(50)
	if _, err := rec.Allocate(60); !errors.Is(err, offset.ErrOutOfSpace) {
		t.Fatalf("Allocate(60): %v, want out of space", err)
	}
	if _, err := rec.Allocate(0); !errors.Is(err, offset.ErrZeroSize) {
		t.Fatalf("Allocate(0): %v, want zero size", err)
	}
	if err := rec.Free(h1); err != nil {
		t.Fatal(err)
	}
	if err := rec.Free(h1); !errors.Is(err, offset.ErrInvalidAllocation) {
		t.Errorf("double Free: %v", err)
	}
	other, _ := a.Allocate(5) // made behind the Recorder's back
	if err := rec.Free(other); err != nil {
		t.Errorf("Free of another handle: %v", err)
	}
	h3, _ := rec.Allocate(30)
	if rec.Live() != 2 {
		t.Errorf("Live() = %d, want 2", rec.Live())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "# gpumem-trace v1\ncapacity 100\na 1 40\na 2 50\na 3 60\na 4 0\nf 1\na 5 30\n"
	if buf.String() != want {
		t.Fatalf("recorded\n%s\nwant\n%s", buf.String(), want)
	}

	// Replaying the recording reproduces the run.
	p, err := trace.ReadProgram(&buf, "recorded")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := trace.NewReplayer(p)
	b, _ := offset.New(100, 16)
	res, err := r.Run(b)
	if err != nil {
		t.Fatal(err)
	}
	if wantOff := []uint32{h1.Offset, h2.Offset, trace.Refused, trace.Refused, h3.Offset}; !reflect.DeepEqual(r.Offsets(), wantOff) {
		t.Errorf("replayed offsets %v, recorded run %v", r.Offsets(), wantOff)
	}
	if res.Failures != 2 || res.Invalid != 1 {
		t.Errorf("Result %+v, want 2 failures, 1 invalid", res)
	}
}
