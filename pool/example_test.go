package pool_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/pool"
)

// A frame loop's scratch buffers: acquired, used, put back, reused the next
// frame, and evicted after a second of disuse.
func Example() {
	dev, _ := host.New(host.Options{})
	defer dev.Release()
	now := time.Unix(0, 0)
	p, _ := pool.New(dev, pool.Options{
		BudgetBytes: 1 << 20,
		MaxIdle:     time.Second,
		Clock:       func() time.Time { return now },
	})
	defer p.Release()

	usage := device.Uniform | device.CopyDst
	for frame := range 3 {
		// 3,000 bytes of uniforms in 256-byte blocks.
		l, err := p.Acquire(3000, 256, usage)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("frame %d: %d-byte buffer\n", frame, l.Buffer().Size())
		if err := p.Put(l); err != nil {
			fmt.Println(err)
		}
		if err := p.Put(l); errors.Is(err, pool.ErrNotLeased) && frame == 0 {
			fmt.Println("second put:", err)
		}
		now = now.Add(16 * time.Millisecond)
	}
	s := p.Stats()
	fmt.Printf("held %d, created %d, reuse rate %.2f\n", s.Buffers, s.Creations, s.ReuseRate())

	now = now.Add(time.Second)
	fmt.Println("evicted after a second idle:", p.Evict())

	_, err := p.Acquire(2<<20, 0, usage)
	fmt.Println(errors.Is(err, pool.ErrOverBudget))
	// Output:
	// frame 0: 3072-byte buffer
	// second put: put of a 3072-byte CopyDst|Uniform buffer: pool: lease already put back
	// frame 1: 3072-byte buffer
	// frame 2: 3072-byte buffer
	// held 1, created 1, reuse rate 0.67
	// evicted after a second idle: 1
	// true
}
