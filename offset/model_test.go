package offset_test

import (
	"errors"
	"fmt"
	"sort"

	"github.com/gpumem/gpumem/offset"
)

// model is the naive reference the allocator is checked against: a list of
// live intervals. It knows nothing of bins; it only says what must be true
// of any correct allocator.
type model struct {
	capacity uint32
	live     map[int][2]uint32 // key: the driver's slot; value: offset, size
}

func newModel(capacity uint32) *model {
	return &model{capacity: capacity, live: map[int][2]uint32{}}
}

// add records an interval, failing if it leaves the range or overlaps one.
func (m *model) add(slot int, off, size uint32) error {
	if uint64(off)+uint64(size) > uint64(m.capacity) {
		return fmt.Errorf("[%d,+%d) passes capacity %d", off, size, m.capacity)
	}
	for t, iv := range m.live {
		if off < iv[0]+iv[1] && iv[0] < off+size {
			return fmt.Errorf("[%d,+%d) overlaps live %d [%d,+%d)", off, size, t, iv[0], iv[1])
		}
	}
	m.live[slot] = [2]uint32{off, size}
	return nil
}

// gaps returns total free units and the largest free gap.
func (m *model) gaps() (free, largest uint32) {
	at := uint32(0)
	for _, iv := range m.sorted() {
		g := iv[0] - at
		free += g
		largest = max(largest, g)
		at = iv[0] + iv[1]
	}
	g := m.capacity - at
	return free + g, max(largest, g)
}

// agree checks the allocator's view against the model's.
func (m *model) agree(a *offset.Allocator) error {
	if err := a.Check(); err != nil {
		return err
	}
	free, largest := m.gaps()
	r := a.Report()
	if r.Free != free || int(r.Allocations) != len(m.live) || a.Len() != len(m.live) {
		return fmt.Errorf("report %+v, model free %d live %d", r, free, len(m.live))
	}
	if got := a.LargestFree(); got != largest {
		return fmt.Errorf("largest free %d, model %d", got, largest)
	}
	if r.MaxAlloc > largest || (largest > 0 && uint64(r.MaxAlloc)*9 < uint64(largest)*8-8) {
		return fmt.Errorf("MaxAlloc %d not within a bin of the largest region %d", r.MaxAlloc, largest)
	}
	want := m.sorted()
	i := 0
	for h := range a.All() {
		if i >= len(want) || want[i] != [2]uint32{h.Offset, h.Size} {
			return fmt.Errorf("walk yields allocation %d at [%d,+%d), model has %v", i, h.Offset, h.Size, want)
		}
		i++
	}
	if i != len(want) {
		return fmt.Errorf("walk yields %d allocations, model %d", i, len(want))
	}
	return nil
}

// sorted returns the live intervals in address order.
func (m *model) sorted() [][2]uint32 {
	ivs := make([][2]uint32, 0, len(m.live))
	for _, iv := range m.live {
		ivs = append(ivs, iv)
	}
	sort.Slice(ivs, func(i, j int) bool { return ivs[i][0] < ivs[j][0] })
	return ivs
}

// refusedFairly checks a refusal: an allocator that says out of space must
// have no free region as large as the request's rounded size.
func refusedFairly(m *model, size uint32, err error) error {
	if !errors.Is(err, offset.ErrOutOfSpace) {
		return err
	}
	_, largest := m.gaps()
	if up, ok := offset.RoundUp(size); ok && largest >= up {
		return fmt.Errorf("refused %d units with a free region of %d", size, largest)
	}
	return nil
}
