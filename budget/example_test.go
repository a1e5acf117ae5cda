package budget_test

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/budget"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/pool"
)

// A pool and a program's own buffers share 1 MiB: when the program needs
// more, the pool's idle buffers go first, and past that the request is
// refused with everything else intact.
func Example() {
	dev, _ := host.New(host.Options{})
	defer dev.Release()
	b, _ := budget.New(dev, budget.Options{Bytes: 1 << 20})
	pa, _ := b.Account("pool")
	own, _ := b.Account("own")

	p, _ := pool.New(pa, pool.Options{})
	defer p.Release()
	pa.SetReclaimer(p.Shrink) // idle buffers go first
	l, _ := p.Acquire(512<<10, 256, device.Uniform|device.CopyDst)
	_ = p.Put(l) // idle now, still held

	big, err := own.CreateBuffer(device.BufferDesc{Label: "big", Size: 768 << 10, Usage: device.Vertex | device.CopyDst})
	fmt.Println("768 KiB:", err, "- pool idle bytes:", p.Stats().BytesIdle)
	_, err = own.CreateBuffer(device.BufferDesc{Label: "more", Size: 512 << 10, Usage: device.Vertex | device.CopyDst})
	fmt.Println("512 KiB more: over budget:", errors.Is(err, budget.ErrOverBudget))
	big.Release()
	for _, a := range b.Usage().Accounts {
		fmt.Printf("%s: %d bytes\n", a.Name, a.Bytes)
	}
	// Output:
	// 768 KiB: <nil> - pool idle bytes: 0
	// 512 KiB more: over budget: true
	// pool: 0 bytes
	// own: 0 bytes
}
