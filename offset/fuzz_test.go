package offset_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/offset"
)

// run drives an allocator with the command stream in data and checks it
// against the model after every step. Each command is 4 bytes: an opcode and
// three argument bytes.
func run(data []byte, p offset.Policy) error {
	if len(data) < 3 {
		return nil
	}
	capacity := uint32(data[0])<<8 | uint32(data[1]) + 1
	maxAllocs := uint32(data[2])%64 + 2
	a, err := offset.NewPolicy(capacity, maxAllocs, p)
	if err != nil {
		return err
	}
	m := newModel(capacity)
	slots := make([]offset.Allocation, 0, 64)
	live := make([]bool, 0, 64)
	data = data[3:]
	// A bounded number of commands keeps every input fast to run.
	for step := 0; len(data) >= 4 && step < 512; step, data = step+1, data[4:] {
		op, x, y, z := data[0]%8, data[1], data[2], data[3]
		size := uint32(x)<<8 | uint32(y)
		if err := apply(a, m, &slots, &live, op, size, z); err != nil {
			return fmt.Errorf("step %d (op %d size %d arg %d): %w", step, op, size, z, err)
		}
		if err := m.agree(a); err != nil {
			return fmt.Errorf("step %d (op %d size %d arg %d): %w", step, op, size, z, err)
		}
	}
	return nil
}

func apply(a *offset.Allocator, m *model, slots *[]offset.Allocation, live *[]bool, op byte, size uint32, z byte) error {
	pick := func() int {
		if len(*slots) == 0 {
			return -1
		}
		return int(z) % len(*slots)
	}
	place := func(h offset.Allocation, err error, size uint32) error {
		switch {
		case err == nil:
			if h.Size != size {
				return fmt.Errorf("asked %d units, got %d", size, h.Size)
			}
			*slots = append(*slots, h)
			*live = append(*live, true)
			return m.add(len(*slots)-1, h.Offset, h.Size)
		case errors.Is(err, offset.ErrNodeLimit):
			return nil
		case size == 0 && errors.Is(err, offset.ErrZeroSize),
			size > a.Capacity() && errors.Is(err, offset.ErrTooLarge):
			return nil
		}
		return refusedFairly(m, size, err)
	}
	switch op {
	case 0, 1, 2: // allocate
		h, err := a.Allocate(size)
		return place(h, err, size)
	case 3: // allocate aligned
		align := uint32(1) << (z % 10)
		h, err := a.AllocateAligned(size, align)
		if err == nil && h.Offset%align != 0 {
			return fmt.Errorf("offset %d not aligned to %d", h.Offset, align)
		}
		if errors.Is(err, offset.ErrOutOfSpace) {
			// An aligned request may be refused while an unaligned
			// fit exists; only check that a padded fit was absent.
			_, largest := m.gaps()
			if up, ok := offset.RoundUp(size + align - 1); ok && largest >= up {
				return fmt.Errorf("refused %d aligned to %d with a free region of %d", size, align, largest)
			}
			return nil
		}
		return place(h, err, size)
	case 4, 5: // free (a slot already freed must be refused)
		i := pick()
		if i < 0 {
			return nil
		}
		err := a.Free((*slots)[i])
		if !(*live)[i] {
			if !errors.Is(err, offset.ErrInvalidAllocation) {
				return fmt.Errorf("second free of slot %d: %v", i, err)
			}
			return nil
		}
		if err != nil {
			return err
		}
		(*live)[i] = false
		delete(m.live, i)
	case 6: // slide down
		i := pick()
		if i < 0 || !(*live)[i] {
			return nil
		}
		iv := m.live[i]
		h, dist, err := a.SlideDown((*slots)[i])
		if err != nil {
			return err
		}
		if h.Offset != iv[0]-dist || h.Size != iv[1] {
			return fmt.Errorf("slide of [%d,+%d) by %d gave %+v", iv[0], iv[1], dist, h)
		}
		delete(m.live, i)
		if err := m.add(i, h.Offset, h.Size); err != nil {
			return err
		}
		if cur, err := a.Lookup((*slots)[i]); err != nil || cur.Offset != h.Offset {
			return fmt.Errorf("old copy looks up %+v, %v; want offset %d", cur, err, h.Offset)
		}
	case 7: // grow
		extra := size % 512
		if uint64(a.Capacity())+uint64(extra) > 1<<20 {
			return nil
		}
		err := a.Grow(a.Capacity() + extra)
		if errors.Is(err, offset.ErrNodeLimit) {
			return nil
		}
		if err != nil {
			return err
		}
		m.capacity += extra
	}
	return nil
}

func FuzzAllocator(f *testing.F) {
	f.Add([]byte{1, 0, 10, 0, 0, 16, 0, 0, 0, 32, 0, 4, 0, 0, 0, 6, 0, 0, 1, 7, 1, 0, 0})
	f.Add([]byte{0, 255, 60, 3, 0, 7, 9, 0, 0, 100, 3, 1, 0, 50, 2, 5, 0, 0, 1, 6, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range []offset.Policy{offset.Exact, offset.Fit} {
			if err := run(data, p); err != nil {
				t.Fatalf("%v: %v", p, err)
			}
		}
	})
}
