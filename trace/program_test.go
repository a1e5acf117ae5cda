package trace_test

import (
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/gpumem/gpumem/trace"
)

func TestLoadSmall(t *testing.T) {
	p, err := trace.Load("testdata/small.trace")
	if err != nil {
		t.Fatal(err)
	}
	A, F := trace.AllocStep, trace.FreeStep
	want := &trace.Program{
		Name:     "testdata/small.trace",
		Capacity: 1000,
		Steps: []trace.Step{
			A(0, 100), A(1, 200), F(0), A(0, 50), A(2, 2000), A(3, 0), F(2), F(3),
			A(3, 700), A(2, 10), F(3), F(1), F(2), A(2, 64),
		},
		Slots:  4,
		Allocs: 8,
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Load =\n%+v\nwant\n%+v", p, want)
	}
}

func TestLoadErrors(t *testing.T) {
	_, err := trace.Load("testdata/no-such.trace")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestStep(t *testing.T) {
	tests := []struct {
		step   trace.Step
		free   bool
		slot   uint32
		size   uint32
		reason string
	}{
		{trace.AllocStep(0, 0), false, 0, 0, "zero"},
		{trace.AllocStep(trace.MaxLive-1, 1<<32-1), false, trace.MaxLive - 1, 1<<32 - 1, "largest"},
		{trace.FreeStep(7), true, 7, 0, "free"},
		{trace.FreeStep(trace.MaxLive - 1), true, trace.MaxLive - 1, 0, "largest free"},
	}
	for _, tt := range tests {
		if tt.step.IsFree() != tt.free || tt.step.Slot() != tt.slot || tt.step.Size() != tt.size {
			t.Errorf("%s: IsFree %v Slot %d Size %d", tt.reason, tt.step.IsFree(), tt.step.Slot(), tt.step.Size())
		}
	}
}

func TestMapSizes(t *testing.T) {
	p, err := trace.Load("testdata/small.trace")
	if err != nil {
		t.Fatal(err)
	}
	before := append([]trace.Step(nil), p.Steps...)
	q := p.MapSizes(func(s uint32) uint32 { return s * 2 })
	if !reflect.DeepEqual(p.Steps, before) {
		t.Error("MapSizes changed the original")
	}
	for i, s := range q.Steps {
		o := p.Steps[i]
		if s.IsFree() != o.IsFree() || s.Slot() != o.Slot() || s.Size() != 2*o.Size() {
			t.Errorf("step %d: %+v from %+v", i, s, o)
		}
	}
	if q.Capacity != p.Capacity || q.Slots != p.Slots || q.Allocs != p.Allocs || q.Name != p.Name {
		t.Errorf("MapSizes changed the header: %+v", q)
	}
}
