package host_test

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
)

// A buffer is written, compacted with a batch of moves, patched, and read
// back; a fault armed mid-run refuses the next creation.
func Example() {
	d, err := host.New(host.Options{Limits: device.Limits{MaxBufferSize: 1 << 20}})
	if err != nil {
		panic(err)
	}
	defer d.Release()

	buf, err := d.CreateBuffer(device.BufferDesc{Label: "arena", Size: 16,
		Usage: device.CopySrc | device.CopyDst | device.Storage})
	if err != nil {
		panic(err)
	}
	_ = d.WriteBuffer(buf, 0, []byte{1, 1, 1, 1, 0, 0, 0, 0, 3, 3, 3, 3, 4, 4, 4, 4})
	// Slide the two blocks at 8 and 12 down over the hole at 4.
	_ = d.Move(buf, []device.Move{{Src: 8, Dst: 4, Size: 4}, {Src: 12, Dst: 8, Size: 4}})
	_ = d.Patch(buf, []device.Patch{{Index: 0, Delta: 0xFFFFFFFF}}) // subtract 1
	got := make([]byte, 16)
	_ = d.ReadBuffer(buf, 0, got)
	fmt.Println(got)

	_, err = d.CreateBuffer(device.BufferDesc{Size: 2 << 20, Usage: device.CopyDst})
	fmt.Println(errors.Is(err, device.ErrTooLarge))

	d.FailNextCreates(1)
	_, err = d.CreateBuffer(device.BufferDesc{Size: 64, Usage: device.CopyDst})
	fmt.Println(errors.Is(err, device.ErrOutOfMemory))

	buf.Release()
	fmt.Println(d.Stats().Buffers, d.Stats().Bytes)
	// Output:
	// [0 1 1 1 3 3 3 3 4 4 4 4 4 4 4 4]
	// true
	// true
	// 0 0
}
