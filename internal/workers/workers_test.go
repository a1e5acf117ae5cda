package workers

import (
	"bytes"
	"fmt"
	"math/rand/v2"
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

// TestCopy: Copy moves what the built-in copy moves, for lengths around
// the split bounds and parts from 0 to past MaxWorkers.
func TestCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, 3<<20+7)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	for _, n := range []int{0, 1, copyShare - 1, copyShare, 2*copyShare - 1, 2 * copyShare, 2*copyShare + 3, 1 << 20, len(src)} {
		for _, k := range []int{0, 1, 2, 3, 4, 7, 32} {
			for _, dstLen := range []int{n, n / 2} {
				t.Run(fmt.Sprintf("%d to %d in %d", n, dstLen, k), func(t *testing.T) {
					want := bytes.Repeat([]byte{0xAA}, dstLen+16)
					got := bytes.Clone(want)
					wn := copy(want[8:8+dstLen], src[:n])
					gn := Copy(got[8:8+dstLen], src[:n], k)
					if gn != wn || !bytes.Equal(got, want) {
						t.Fatalf("copied %d bytes, want %d; bytes equal: %v", gn, wn, bytes.Equal(got, want))
					}
				})
			}
		}
	}
}

// TestCopyAllocs: once the pool has its goroutines, Copy allocates
// nothing.
func TestCopyAllocs(t *testing.T) {
	src, dst := make([]byte, 1<<20), make([]byte, 1<<20)
	Copy(dst, src, 4)
	if a := testing.AllocsPerRun(100, func() { Copy(dst, src, 4) }); a != 0 {
		t.Errorf("Copy allocates %.1f times a call", a)
	}
}

// BenchmarkCopy copies 4 MiB between two buffers of heap memory in 1 to
// 8 parts at once (a GPU's mapped memory: device/webgpu's
// BenchmarkMappedCopy), in GB/s of bytes copied.
func BenchmarkCopy(b *testing.B) {
	src, dst := make([]byte, 4<<20), make([]byte, 4<<20)
	for _, k := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("parts-%d", k), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				Copy(dst, src, k)
			}
		})
	}
}
