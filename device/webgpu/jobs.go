//go:build cgo || js

package webgpu

import "sync"

// Work off the caller's goroutine. Making or freeing a large buffer can
// cost the driver milliseconds, and a submit that overlaps that work
// waits for it (BenchmarkSubmitBeside): so the device queues such work
// (PrepareBuffer's creations, reap's frees of large buffers) and starts
// it at the next Fence or Wait, after the frame's submits, where it
// overlaps the program's own work between frames rather than the next
// frame's submits. A job needed sooner starts when it is waited for: a
// Take of a prepared buffer, or Wait, which returns once every free that
// it or a Fence started is done. The move kernels' build (precompile)
// starts at once, when the device opens, before any submit. Release
// starts and waits for every job.
//
// Jobs are queued, started, cancelled and waited for on the device's
// goroutine; only run runs on another.

// job is work queued to run on a goroutine of its own; done is closed
// once it has run, or once it was cancelled before it started.
type job struct {
	once sync.Once
	run  func()
	done chan struct{}
}

// newJob returns run as a job, not started.
func newJob(run func()) *job {
	return &job{run: run, done: make(chan struct{})}
}

// later queues run as a job, to start at the next Fence or Wait.
func (d *Device) later(run func()) *job {
	j := newJob(run)
	d.jobs = append(d.jobs, j)
	return j
}

// start starts j, unless it started or was cancelled already.
func (d *Device) start(j *job) {
	j.once.Do(func() {
		d.running.Add(1)
		go func() {
			defer d.running.Done()
			defer close(j.done)
			j.run()
		}()
	})
}

// wait starts j if it has not started and waits for it.
func (d *Device) wait(j *job) {
	d.start(j)
	<-j.done
}

// ended reports whether j has run, or was cancelled, without waiting.
func (j *job) ended() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// cancel keeps j from starting; one started already runs to its end.
func (j *job) cancel() {
	j.once.Do(func() { close(j.done) })
}

// startJobs starts the jobs queued since the last call.
func (d *Device) startJobs() {
	for _, j := range d.jobs {
		d.start(j)
	}
	clear(d.jobs)
	d.jobs = d.jobs[:0]
}
