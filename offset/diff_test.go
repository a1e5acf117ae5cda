package offset_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpumem/gpumem/offset"
	"github.com/gpumem/gpumem/trace"
)

var traceNames = []string{"uniform", "meshlet", "lognormal", "thinning", "tiny"}

// sharedTraces is where the full million-operation traces live, outside the
// repository: GPUMEM_TRACES, or the project's shared folder beside the clone.
func sharedTraces() string {
	if dir := os.Getenv("GPUMEM_TRACES"); dir != "" {
		return dir
	}
	return filepath.Join("..", "..", "shared", "traces")
}

// replay runs a trace file into a fresh allocator of its capacity with the
// reference's node limit and returns the replayer (holding the offsets) and
// the result.
func replay(t *testing.T, path string, p offset.Policy) (*trace.Replayer, trace.Result) {
	t.Helper()
	prog, err := trace.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReplayer(prog)
	if err != nil {
		t.Fatal(err)
	}
	a, err := offset.NewPolicy(prog.Capacity, 1<<20, p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Check(); err != nil {
		t.Fatalf("%s after replay: %v", path, err)
	}
	return r, res
}

// differential replays each trace in dir with the Exact policy and requires
// every offset, refusals included, to be the reference implementation's.
func differential(t *testing.T, dir string) {
	for _, name := range traceNames {
		t.Run(name, func(t *testing.T) {
			r, res := replay(t, filepath.Join(dir, name+".trace.gz"), offset.Exact)
			want, err := trace.LoadOffsets(filepath.Join(dir, name+".offsets.gz"))
			if err != nil {
				t.Fatal(err)
			}
			got := r.Offsets()
			if len(got) != len(want) {
				t.Fatalf("%d allocations, reference has %d offsets", len(got), len(want))
			}
			bad := 0
			for i := range got {
				if got[i] != want[i] {
					if bad < 5 {
						t.Errorf("allocation %d at %d, reference %d", i, got[i], want[i])
					}
					bad++
				}
			}
			if bad > 0 {
				t.Fatalf("%d of %d offsets differ", bad, len(got))
			}
			t.Logf("%d ops, %d allocations, %d refused: all offsets match", res.Ops, len(got), res.Failures)
		})
	}
}

func TestDifferentialTestdata(t *testing.T) {
	differential(t, filepath.Join("..", "testdata", "traces"))
}

func TestDifferentialShared(t *testing.T) {
	dir := sharedTraces()
	if _, err := os.Stat(filepath.Join(dir, "thinning.offsets.gz")); err != nil {
		t.Skipf("full traces not found in %s (set GPUMEM_TRACES): %v", dir, err)
	}
	if testing.Short() {
		t.Skip("full traces take seconds; skipped with -short")
	}
	differential(t, dir)
}

// Fit must refuse no more than Exact on any trace, and on the full thinning
// trace no more than the 1,786 refusals of the Vulkan Memory Allocator's
// TLSF (Exact refuses 3,244 there).
func TestFitRefusals(t *testing.T) {
	dir := filepath.Join("..", "testdata", "traces")
	limit := map[string]int{}
	if full := sharedTraces(); !testing.Short() {
		if _, err := os.Stat(filepath.Join(full, "thinning.trace.gz")); err == nil {
			dir = full
			limit["thinning"] = 1786
		}
	}
	for _, name := range traceNames {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".trace.gz")
			_, exact := replay(t, path, offset.Exact)
			_, fit := replay(t, path, offset.Fit)
			t.Logf("%s: exact refuses %d, fit %d", path, exact.Failures, fit.Failures)
			if fit.Failures > exact.Failures {
				t.Errorf("fit refuses %d, exact %d", fit.Failures, exact.Failures)
			}
			if l, ok := limit[name]; ok && fit.Failures > l {
				t.Errorf("fit refuses %d, want at most %d", fit.Failures, l)
			}
		})
	}
}
