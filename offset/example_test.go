package offset_test

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/offset"
)

// The whole API on a range of 1,000 units: allocate, free, align, compact by
// sliding, grow, and read the storage report.
func Example() {
	a, err := offset.New(1000, 64)
	if err != nil {
		panic(err)
	}
	x, _ := a.Allocate(100)
	y, _ := a.Allocate(200)
	z, _ := a.AllocateAligned(50, 256)
	fmt.Println("x, y, z at", x.Offset, y.Offset, z.Offset)

	if err := a.Free(x); err != nil {
		panic(err)
	}
	if err := a.Free(x); errors.Is(err, offset.ErrInvalidAllocation) {
		fmt.Println("second free refused")
	}

	// Compact: slide every allocation down over the hole before it.
	for h, ok := a.First(); ok; h, ok, _ = a.Next(h) {
		moved, dist, _ := a.SlideDown(h)
		if dist > 0 {
			fmt.Printf("moved %d units from %d to %d\n", moved.Size, moved.Offset+dist, moved.Offset)
		}
		h = moved
	}
	if cur, err := a.Lookup(z); err == nil {
		fmt.Println("z now at", cur.Offset)
	}

	if err := a.Grow(2000); err != nil {
		panic(err)
	}
	r := a.Report()
	fmt.Printf("free %d in %d region(s), largest %d, %d live\n", r.Free, r.FreeRegions, a.LargestFree(), r.Allocations)
	// Output:
	// x, y, z at 0 100 512
	// second free refused
	// moved 200 units from 100 to 0
	// moved 50 units from 512 to 200
	// z now at 200
	// free 1750 in 1 region(s), largest 1750, 2 live
}
