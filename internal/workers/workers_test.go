package workers

import (
	"sync"
	"sync/atomic"
	"testing"
)

// countJob counts the calls of each part, and the parts running.
type countJob struct {
	calls []atomic.Int32
	now   atomic.Int32
}

func (c *countJob) Do(i int) {
	c.now.Add(1)
	c.calls[i].Add(1)
	c.now.Add(-1)
}

// TestRun: every part runs exactly once, for any n, from several callers
// at once (each job's parts are its own), and Run returns after all.
func TestRun(t *testing.T) {
	var wg sync.WaitGroup
	for caller := range 8 {
		wg.Go(func() {
			for n := range 40 {
				c := &countJob{calls: make([]atomic.Int32, n)}
				Run(n, c)
				for i := range c.calls {
					if got := c.calls[i].Load(); got != 1 {
						t.Errorf("caller %d, n %d: part %d ran %d times", caller, n, i, got)
					}
				}
				if c.now.Load() != 0 {
					t.Errorf("caller %d, n %d: Run returned with parts running", caller, n)
				}
			}
		})
	}
	wg.Wait()
	if s := started.Load(); s > MaxWorkers {
		t.Errorf("%d pool goroutines, at most %d", s, MaxWorkers)
	}
}

// gatherJob copies src to dst in parts of equal length.
type gatherJob struct {
	dst, src []byte
	k        int
}

func (g *gatherJob) Do(i int) {
	lo, hi := len(g.src)*i/g.k, len(g.src)*(i+1)/g.k
	copy(g.dst[lo:hi], g.src[lo:hi])
}

// TestRunAllocs: once the pool has its goroutines, Run allocates
// nothing.
func TestRunAllocs(t *testing.T) {
	g := &gatherJob{dst: make([]byte, 1<<20), src: make([]byte, 1<<20), k: 4}
	Run(g.k, g)
	if a := testing.AllocsPerRun(100, func() { Run(g.k, g) }); a != 0 {
		t.Errorf("Run allocates %.1f times a call", a)
	}
}
