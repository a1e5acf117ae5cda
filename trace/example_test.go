package trace_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/gpumem/gpumem/offset"
	"github.com/gpumem/gpumem/trace"
)

// Record a program's allocations through a Recorder, then replay the
// recording under both placement policies.
func Example() {
	a, _ := offset.New(1000, 64)
	var buf bytes.Buffer
	w, _ := trace.NewWriter(&buf, a.Capacity())
	rec := trace.NewRecorder[offset.Allocation](a, w)

	// The program under study uses rec as it would use a.
	small, _ := rec.Allocate(100)
	big, _ := rec.Allocate(200)
	rec.Free(small)
	rec.Allocate(50)
	if _, err := rec.Allocate(700); err != nil {
		fmt.Println("live run:", err)
	}
	rec.Free(big)
	w.Close()
	os.Stdout.Write(buf.Bytes())

	p, _ := trace.ReadProgram(&buf, "recorded")
	r, _ := trace.NewReplayer(p)
	for _, policy := range []offset.Policy{offset.Exact, offset.Fit} {
		b, _ := offset.NewPolicy(p.Capacity, 64, policy)
		res, _ := r.Run(b)
		fmt.Printf("%s: %d ops, %d failures, offsets", policy, res.Ops, res.Failures)
		for _, off := range r.Offsets() {
			if off == trace.Refused {
				fmt.Print(" -")
			} else {
				fmt.Print(" ", off)
			}
		}
		fmt.Println()
	}
	// Output:
	// live run: offset: out of space
	// # gpumem-trace v1
	// capacity 1000
	// a 1 100
	// a 2 200
	// f 1
	// a 3 50
	// a 4 700
	// f 2
	// exact: 6 ops, 1 failures, offsets 0 100 0 -
	// fit: 6 ops, 0 failures, offsets 0 100 0 300
}
