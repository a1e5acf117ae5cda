package scene

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/pool"
)

// The read-back buffers' pool: a budget well above what one check needs,
// and buffers idle for readbackMaxIdleFrames frames evicted. The pool's
// clock is the frame counter (a second a frame), so eviction is the same
// on every run and device.
const (
	readbackBudgetBytes   = 16 << 20
	readbackMaxIdleFrames = 20
	readbackUsage         = device.MapRead | device.CopyDst
)

// readbackWorkload is the buffer pool at work: every read-back check of
// the other workloads leases a MapRead buffer from it, copies the bytes to
// check into it, reads it and releases it, so a frame's checks reuse the
// buffers of the frames before. Once a frame, buffers idle too long are
// evicted.
type readbackWorkload struct {
	dev    device.Device
	p      *pool.Pool
	sw     *stopwatch // the managers' time: Acquire, Put and Evict count
	frameN int
	copied uint64 // bytes copied into leased buffers to be read back
	evicts int    // evicted by age
}

func newReadbackWorkload(dev device.Device, scale int, sw *stopwatch, o *workloadOptions) (*readbackWorkload, error) {
	dev = o.device("pool")
	w := &readbackWorkload{dev: dev, sw: sw}
	p, err := pool.New(dev, pool.Options{Label: "pool/readback", BudgetBytes: uint64(scale) * readbackBudgetBytes,
		MaxIdle: readbackMaxIdleFrames * time.Second,
		Clock:   func() time.Time { return time.Unix(int64(w.frameN), 0) }})
	if err != nil {
		return nil, err
	}
	w.p = p
	o.reclaim("pool", p.Shrink) // idle buffers go first
	return w, nil
}

// read fills dst with buf's bytes from off through a leased buffer: buf
// needs CopySrc; off and len(dst) are multiples of 4.
func (w *readbackWorkload) read(buf device.Buffer, off uint64, dst []byte) error {
	return w.readAt(func() (device.Buffer, uint64, error) { return buf, off, nil }, dst)
}

// readAt is read of the buffer and offset locate returns, called once the
// read-back buffer is leased: under a budget, the lease may have had
// another manager shrink (its reclaimer), which moves its data and
// replaces its buffers.
func (w *readbackWorkload) readAt(locate func() (device.Buffer, uint64, error), dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	t := w.sw.start(mgrPool)
	l, err := w.p.Acquire(uint64(len(dst)), 4, readbackUsage)
	w.sw.stop(t)
	if err != nil {
		return fmt.Errorf("lease a read-back buffer of %d bytes: %w", len(dst), err)
	}
	buf, off, err := locate()
	if err == nil {
		err = w.dev.CopyBuffer(buf, off, l.Buffer(), 0, uint64(len(dst)))
	}
	if err == nil {
		err = w.dev.ReadBuffer(l.Buffer(), 0, dst)
	}
	t = w.sw.start(mgrPool)
	if rerr := w.p.Put(l); err == nil {
		err = rerr
	}
	w.sw.stop(t)
	w.copied += uint64(len(dst))
	return err
}

func (w *readbackWorkload) frame(f *frameState) error {
	w.frameN = f.n
	t := f.gpumem.start(mgrPool)
	w.evicts += w.p.Evict()
	f.gpumem.stop(t)
	return nil
}

func (w *readbackWorkload) endFrame(*frameState, uint64) error { return nil }

func (w *readbackWorkload) memory() memory.Holder { return w.p }

func (w *readbackWorkload) written() uint64 { return w.copied }

// check has nothing of its own to check: the pool's buffers are checked
// by every read of the others.
func (w *readbackWorkload) check(*rand.Rand, int) (int, error) { return 0, nil }

func (w *readbackWorkload) notes() []string {
	st := w.p.Stats()
	return []string{
		fmt.Sprintf("pool: %d read-back leases (%s), %.1f%% served by an idle buffer; %d buffers created,",
			st.Acquires, inspect.FormatBytes(w.copied), 100*st.ReuseRate(), st.Creations),
		fmt.Sprintf("  %d evicted (%d after %d idle frames); %d held now, %s", st.Evictions, w.evicts, readbackMaxIdleFrames,
			st.Buffers, inspect.FormatBytes(st.BytesHeld)),
	}
}

func (w *readbackWorkload) release() { w.p.Release() }
