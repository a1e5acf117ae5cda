package scene_test

import (
	"fmt"
	"io"

	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/scene"
)

// Stream runs the demo's workload on a device of the caller's: here the
// pure-Go host device, for ten frames. The run writes the summary the
// command prints (WriteSummary) and its HTML report (WriteReport).
func ExampleStream() {
	dev, err := host.New(host.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Release()
	run, err := scene.Stream(dev, "host", scene.Options{Seed: 1, Frames: 10})
	if err != nil {
		fmt.Println(err)
		return
	}
	run.WriteSummary(io.Discard)
	last := run.Last()
	fmt.Println(last.Label, len(last.Buffers) > 0)
	// Output: frame 10 true
}

// A Scene is the examples' stream of items, the same for the same seed:
// it fills up to Live items, then Churn leave and Churn come each frame.
func ExampleScene() {
	s := scene.New(1)
	for s.Len() < scene.Live {
		s.Step()
	}
	added, removed := s.Step()
	fmt.Println(s.Len(), len(added), len(removed))
	// Output: 300 12 12
}
