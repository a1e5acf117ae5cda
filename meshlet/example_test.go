package meshlet_test

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/meshlet"
)

// A manager with two-word rows (address, triangle count): add, look up,
// clone, remove, and sweep, with the rows read back after each step.
func Example() {
	dev, _ := host.New(host.Options{})
	defer dev.Release()
	names := map[meshlet.BatchHandle]string{}
	m, err := meshlet.New(dev, meshlet.Options{
		RowWords:    2,
		AddressWord: 0,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Release()

	// rows print the (address, triangles) rows of batch h.
	rows := func(name string, h meshlet.BatchHandle) {
		p, _ := m.Lookup(h)
		_, buf := m.Buffers()
		b := make([]byte, p.Meshlets*8)
		dev.ReadBuffer(buf, uint64(p.RowOffset)*8, b)
		fmt.Printf("%s: data at %d, rows at %d:", name, p.DataOffset, p.RowOffset)
		for i := 0; i < len(b); i += 8 {
			fmt.Printf(" (%d %d)", binary.LittleEndian.Uint32(b[i:]), binary.LittleEndian.Uint32(b[i+4:]))
		}
		fmt.Println()
	}

	// Two meshlets: one at word 0 of the batch's data, one at word 6.
	a, _ := m.Add(make([]uint32, 10), []uint32{0, 2, 6, 1})
	b, _ := m.Add(make([]uint32, 8), []uint32{0, 1, 4, 1})
	rows("a", a)
	rows("b", b)

	c, _ := m.Clone(b) // copied and patched on the device
	names[b], names[c] = "b", "clone of b"
	rows("clone of b", c)

	m.Remove(a)
	m.Arm()        // a sweep would start on its own when a request finds the space in pieces
	m.Changes(nil) // forget the growths so far
	m.Sweep(arena.SweepLimits{})
	// Each batch moved in two parts (data and rows): name it once.
	var moved []meshlet.BatchHandle
	for _, ch := range m.Changes(nil) {
		if h := meshlet.HandleOf(ch); ch.Kind == memory.Moved && !slices.Contains(moved, h) {
			moved = append(moved, h)
			fmt.Println("moved:", names[h])
		}
	}
	fmt.Println("moved:", len(moved))
	rows("b", b)
	rows("clone of b", c)

	st := m.Stats()
	fmt.Println("batches:", st.Batches, "meshlets:", st.Meshlets, "patched words:", st.PatchedWords)
	// Output:
	// a: data at 0, rows at 0: (0 2) (6 1)
	// b: data at 10, rows at 2: (10 1) (14 1)
	// clone of b: data at 18, rows at 4: (18 1) (22 1)
	// moved: b
	// moved: clone of b
	// moved: 2
	// b: data at 0, rows at 0: (0 1) (4 1)
	// clone of b: data at 8, rows at 2: (8 1) (12 1)
	// batches: 2 meshlets: 4 patched words: 6
}
