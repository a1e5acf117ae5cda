package ring_test

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/ring"
)

// A ring of four 256-byte slots. The first frame takes them all; while the
// GPU still reads it, the next frame's allocation is refused instead of
// wrapping over it. Once the frame's fence completes, offset 0 is free.
func ExampleBuffer() {
	dev, _ := host.New(host.Options{HoldCompletion: true}) // the test decides when the GPU is done
	defer dev.Release()
	r, _ := ring.NewBuffer(dev, ring.BufferOptions{SizeBytes: 1024})
	defer r.Release()

	var offsets []uint64
	for range 4 {
		s, _ := r.Write(make([]byte, 64)) // per-draw constants
		offsets = append(offsets, s.OffsetBytes)
	}
	fence, _ := dev.Fence() // submit the frame's work
	_ = r.EndFrame(fence)
	fmt.Println(offsets)

	_, err := r.Allocate(64)
	fmt.Println("GPU busy:", errors.Is(err, ring.ErrFull))

	dev.Complete(fence) // the GPU finished frame 1
	s, _ := r.Allocate(64)
	fmt.Println("GPU done: offset", s.OffsetBytes)
	// Output:
	// [0 256 512 768]
	// GPU busy: true
	// GPU done: offset 0
}

// A frame arena for vertex scratch: each frame bumps through its own
// block; a frame that outgrows it chains a larger one, and from then on
// blocks are made as large as that frame needed.
func ExampleFrame() {
	dev, _ := host.New(host.Options{})
	defer dev.Release()
	a, _ := ring.NewFrame(dev, ring.FrameOptions{BlockBytes: 4096, Grow: true})
	defer a.Release()

	for frame := range 3 {
		var offsets []uint64
		for range 3 {
			s, _ := a.Allocate(2000) // a frame's vertices
			offsets = append(offsets, s.OffsetBytes)
		}
		fence, _ := dev.Fence()
		_ = a.EndFrame(fence)
		st := a.Stats()
		fmt.Println("frame", frame, "offsets", offsets, "chained", st.Chains, "block size", st.BlockBytes)
	}
	// Output:
	// frame 0 offsets [0 2000 0] chained 1 block size 6000
	// frame 1 offsets [0 2000 4000] chained 1 block size 6000
	// frame 2 offsets [0 2000 4000] chained 1 block size 6000
}
