package trace_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/offset"
	"github.com/gpumem/gpumem/trace"
)

const R = trace.Refused

func TestReplaySmall(t *testing.T) {
	tests := []struct {
		policy  offset.Policy
		offsets []uint32
		result  trace.Result
		free    uint32
	}{
		// Exact refuses 700 units although [300, 1000) is free: the region
		// is filed in the bin of 640, the request looked up from 704.
		{offset.Exact, []uint32{0, 100, 0, R, R, R, 50, 50},
			trace.Result{Ops: 14, Failures: 3, Invalid: 2, PeakEnd: 300}, 1000 - 50 - 64},
		{offset.Fit, []uint32{0, 100, 0, R, R, 300, 50, 50},
			trace.Result{Ops: 14, Failures: 2, Invalid: 2, PeakEnd: 1000}, 1000 - 50 - 64},
	}
	p, err := trace.Load("testdata/small.trace")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.policy.String(), func(t *testing.T) {
			a, err := offset.NewPolicy(p.Capacity, 16, tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			r, err := trace.NewReplayer(p)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // a Replayer and an allocator can be reused
				a.Reset()
				res, err := r.Run(a)
				if err != nil {
					t.Fatal(err)
				}
				if res != tt.result {
					t.Errorf("Result %+v, want %+v", res, tt.result)
				}
				if !reflect.DeepEqual(r.Offsets(), tt.offsets) {
					t.Errorf("offsets %v, want %v", r.Offsets(), tt.offsets)
				}
				if f := a.Report().Free; f != tt.free {
					t.Errorf("free at end %d, want %d", f, tt.free)
				}
			}
		})
	}
}

func TestReplayNodeLimit(t *testing.T) {
	p, err := trace.ReadProgram(strings.NewReader("capacity 100\na 1 1\na 2 1\na 3 1\nf 3\nf 1\n"), "limit")
	if err != nil {
		t.Fatal(err)
	}
	a, err := offset.New(p.Capacity, 3) // two nodes in use at most
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReplayer(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(a)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures == 0 || res.Failures != res.Invalid {
		t.Errorf("Result %+v: want node-limit failures counted as invalid", res)
	}
}

func TestNewReplayerChecks(t *testing.T) {
	A, F := trace.AllocStep, trace.FreeStep
	tests := []struct {
		name  string
		steps []trace.Step
		slots uint32
		msg   string
	}{
		{"slot out of range", []trace.Step{A(2, 1)}, 2, "trace: bad: step 0: slot 2 out of range (Slots 2)"},
		{"free before alloc", []trace.Step{A(0, 1), F(1)}, 2, "trace: bad: step 1: free of slot 1, live=false"},
		{"alloc of live slot", []trace.Step{A(0, 1), A(0, 1)}, 2, "trace: bad: step 1: alloc of slot 0, live=true"},
	}
	for _, tt := range tests {
		_, err := trace.NewReplayer(&trace.Program{Name: "bad", Capacity: 10, Steps: tt.steps, Slots: tt.slots})
		if err == nil || err.Error() != tt.msg {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.msg)
		}
	}
}

// TestReplayAllocs checks that Run allocates nothing, refusals included.
// Sizes are clamped to [1, 700]: offset wraps (and so allocates) the errors
// for sizes that are zero or too large, which no real program repeats.
func TestReplayAllocs(t *testing.T) {
	p, err := trace.Load("testdata/small.trace")
	if err != nil {
		t.Fatal(err)
	}
	p = p.MapSizes(func(s uint32) uint32 { return min(max(s, 1), 700) })
	r, _ := trace.NewReplayer(p)
	a, _ := offset.New(p.Capacity, 64)
	n := testing.AllocsPerRun(100, func() {
		a.Reset()
		if _, err := r.Run(a); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("Run allocates %v times, want 0", n)
	}
}

// sharedTraces returns the trace files that have an offsets file next to
// them in ../testdata/traces (prefixes of the shared traces), or in
// $GPUMEM_TRACES when set (the full shared traces).
func sharedTraces(t testing.TB) []string {
	dir := os.Getenv("GPUMEM_TRACES")
	if dir == "" {
		dir = filepath.Join("..", "testdata", "traces")
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.trace.gz"))
	var out []string
	for _, n := range names {
		if _, err := os.Stat(strings.TrimSuffix(n, ".trace.gz") + ".offsets.gz"); err == nil {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		t.Skipf("no traces with offsets in %s", dir)
	}
	return out
}

// TestRunCapacityMismatch: Run refuses an allocator whose capacity is not
// the program's with ErrMismatch, as documented, and touches nothing
// (issue 21).
func TestRunCapacityMismatch(t *testing.T) {
	p, err := trace.ReadProgram(strings.NewReader("capacity 1000\na 1 600\nf 1\n"), "m")
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReplayer(p)
	if err != nil {
		t.Fatal(err)
	}
	a, err := offset.New(500, 16)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(a); !errors.Is(err, trace.ErrMismatch) {
		t.Fatalf("Run into a capacity-500 allocator of a capacity-1000 trace: %v, want ErrMismatch", err)
	}
	if rep := a.Report(); rep.Allocations != 0 {
		t.Fatalf("a refused Run left %d allocations", rep.Allocations)
	}
}
