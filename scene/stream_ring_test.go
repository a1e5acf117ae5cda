package scene

import (
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
)

// spy is a device that counts the calls of its optional interfaces that
// reach it.
type spy struct {
	device.Device
	fills, checks int
}

func (s *spy) FillBuffer(buf device.Buffer, offset, size uint64, fill func([]byte)) error {
	s.fills++
	return device.FillBuffer(s.Device, buf, offset, size, fill)
}

func (s *spy) CheckGuards(buf device.Buffer, guards []device.Guard, pattern uint32, bad []int) ([]int, error) {
	s.checks++
	return device.CheckGuards(s.Device, buf, guards, pattern, bad)
}

// TestLaggedForwards checks that fills and guard checks through the
// ring's lagged device reach the device it wraps, rather than falling
// back to a write of a scratch copy and a read-back per guard.
func TestLaggedForwards(t *testing.T) {
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	s := &spy{Device: dev}
	d := &lagged{Device: s, sw: &stopwatch{}}
	buf, err := d.CreateBuffer(device.BufferDesc{Label: "b", Size: 64, Usage: device.CopySrc | device.CopyDst | device.Storage})
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Release()
	fill := func(dst []byte) {
		for i := range dst {
			dst[i] = 0xaa
		}
	}
	if err := device.FillBuffer(d, buf, 0, 32, fill); err != nil {
		t.Fatal(err)
	}
	bad, err := device.CheckGuards(d, buf, []device.Guard{{Offset: 0, Size: 16}, {Offset: 32, Size: 16}}, 0xaaaaaaaa, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || bad[0] != 1 {
		t.Errorf("bad guards %v, want [1]", bad)
	}
	if s.fills != 1 || s.checks != 1 {
		t.Errorf("the wrapped device saw %d fills and %d guard checks, want 1 and 1", s.fills, s.checks)
	}
}
