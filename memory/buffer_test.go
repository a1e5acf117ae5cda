package memory_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/memory"
)

func TestNewBufferRejects(t *testing.T) {
	for _, regs := range [][]memory.Region{
		{{Offset: 0, Size: 0}},
		{{Offset: 0, Size: 8}, {Offset: 4, Size: 8}},
		{{Offset: 60, Size: 8}},
		{{Offset: 1 << 63, Size: 1 << 63}},
		{{Offset: 0, Size: 8, State: memory.StateFree}},
		{{Offset: 0, Size: 8, Used: 9}},
	} {
		if _, err := memory.NewBuffer("b", memory.Other, 64, regs); !errors.Is(err, memory.ErrInvalidRegion) {
			t.Errorf("%+v: error %v, want ErrInvalidRegion", regs, err)
		}
	}
}

// TestCheck is a table of buffers and whether they are well formed.
func TestCheck(t *testing.T) {
	free := func(off, n uint64) memory.Region { return memory.Region{Offset: off, Size: n, State: memory.StateFree} }
	used := func(off, n uint64) memory.Region {
		return memory.Region{Offset: off, Size: n, Used: n, State: memory.StateUsed}
	}
	for _, tt := range []struct {
		name string
		b    memory.Buffer
		ok   bool
	}{
		{"tiles", memory.Buffer{CapacityBytes: 16, Regions: []memory.Region{used(0, 8), free(8, 8)}}, true},
		{"empty capacity", memory.Buffer{}, false},
		{"gap", memory.Buffer{CapacityBytes: 16, Regions: []memory.Region{used(0, 8), free(12, 4)}}, false},
		{"short", memory.Buffer{CapacityBytes: 16, Regions: []memory.Region{used(0, 8)}}, false},
		{"past the end", memory.Buffer{CapacityBytes: 16, Regions: []memory.Region{used(0, 8), free(8, 1<<63)}}, false},
		{"zero size", memory.Buffer{CapacityBytes: 16, Regions: []memory.Region{used(0, 0), free(0, 16)}}, false},
		{"unknown state", memory.Buffer{CapacityBytes: 8, Regions: []memory.Region{{Size: 8, State: "gone"}}}, false},
		{"used above size", memory.Buffer{CapacityBytes: 8, Regions: []memory.Region{{Size: 8, Used: 9, State: memory.StateUsed}}}, false},
		{"layers", memory.Buffer{CapacityBytes: 32, ElemBytes: 8, Layers: 4, Regions: []memory.Region{free(0, 32)}}, true},
		{"layers wrong", memory.Buffer{CapacityBytes: 32, ElemBytes: 8, Layers: 3, Regions: []memory.Region{free(0, 32)}}, false},
	} {
		err := tt.b.Check()
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, memory.ErrInvalidBuffer)) {
			t.Errorf("%s: Check() = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// An arena is a Holder through its Holder method; its allocations are
// named from their owner tags.
func ExampleHolder_arena() {
	dev, _ := host.New(host.Options{})
	defer dev.Release()
	a, _ := arena.New(dev, arena.Options{Label: "particles", ElemSize: 16, InitialElems: 64})
	defer a.Release()
	a.AllocateOwned(10, 7)
	b, _ := a.AllocateOwned(20, 8)
	a.AllocateOwned(5, 9)
	a.Free(b)

	h := a.Holder("particles", func(r arena.Region) memory.Owner {
		return memory.Owner{Kind: "particles", Name: fmt.Sprintf("emitter %d", r.Owner)}
	})
	for _, b := range h.Memory() {
		fmt.Printf("%s: %d of %d bytes in %d allocations, fragmentation %.2f\n", b.Name, b.Stats.OccupiedBytes,
			b.CapacityBytes, b.Stats.Allocations, b.Stats.Fragmentation)
		for _, r := range b.Regions {
			if r.Live() {
				fmt.Printf("  [%d, +%d) %s\n", r.Offset, r.Size, r.Name)
			} else {
				fmt.Printf("  [%d, +%d) free\n", r.Offset, r.Size)
			}
		}
	}
	// Output:
	// particles: 240 of 1024 bytes in 2 allocations, fragmentation 0.41
	//   [0, +160) emitter 7
	//   [160, +320) free
	//   [480, +80) emitter 9
	//   [560, +464) free
}
