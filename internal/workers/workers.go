// Package workers runs the parts of a job at once, on goroutines kept for
// the whole process: the gathers of large uploads into staging memory,
// which one core writes well below the speed of memory.
//
// A job's parts go to pool goroutines that are idle at the time of the
// call; a part no idle goroutine takes runs on the caller's goroutine, so
// a call never waits for another job's parts, and with no idle goroutine
// a job runs as a plain loop. The pool starts goroutines as jobs ask for
// them, at most MaxWorkers over the process's life; once they are made,
// Run allocates nothing.
package workers

import (
	"sync"
	"sync/atomic"
)

// MaxWorkers bounds the pool's goroutines.
const MaxWorkers = 16

// A Job is work in parts that may run at once: Do(i) does part i, and
// parts share no bytes that either writes. Do must not panic: a panic on
// a pool goroutine ends the program.
type Job interface{ Do(part int) }

// task is one part handed to a pool goroutine.
type task struct {
	job  Job
	part int
	wg   *sync.WaitGroup
}

var (
	tasks   = make(chan task) // unbuffered: a send succeeds only into an idle goroutine
	started atomic.Int32
	groups  = sync.Pool{New: func() any { return new(sync.WaitGroup) }}
)

// Run calls j.Do(i) for every i in [0, n) and returns once all have
// returned: part n-1 on the caller's goroutine, the others on idle pool
// goroutines or, when none is idle, on the caller's.
func Run(n int, j Job) {
	if n <= 1 {
		if n == 1 {
			j.Do(0)
		}
		return
	}
	grow(n - 1)
	wg := groups.Get().(*sync.WaitGroup)
	for i := range n - 1 {
		wg.Add(1)
		select {
		case tasks <- task{j, i, wg}:
		default:
			wg.Done()
			j.Do(i)
		}
	}
	j.Do(n - 1)
	wg.Wait()
	groups.Put(wg)
}

// grow starts pool goroutines until there are n, or MaxWorkers.
func grow(n int) {
	n = min(n, MaxWorkers)
	for {
		s := started.Load()
		if int(s) >= n {
			return
		}
		if started.CompareAndSwap(s, s+1) {
			go work()
		}
	}
}

func work() {
	for t := range tasks {
		t.job.Do(t.part)
		t.wg.Done()
	}
}
