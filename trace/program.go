package trace

import (
	"io"
	"os"
)

// Step is one line of a Program, packed in 8 bytes: an allocation of Size
// units into slot Slot, or the free of whatever slot Slot holds.
type Step struct {
	slot uint32 // the slot, with freeBit set for a free
	size uint32 // units asked for; 0 for a free
}

const freeBit = 1 << 31

// AllocStep returns the Step that allocates size units into slot.
// slot must be below MaxLive.
func AllocStep(slot, size uint32) Step { return Step{slot: slot &^ freeBit, size: size} }

// FreeStep returns the Step that frees slot. slot must be below MaxLive.
func FreeStep(slot uint32) Step { return Step{slot: slot | freeBit} }

// IsFree reports whether s is a free.
func (s Step) IsFree() bool { return s.slot&freeBit != 0 }

// Slot returns the slot s allocates into or frees.
func (s Step) Slot() uint32 { return s.slot &^ freeBit }

// Size returns the units an allocation asks for; 0 for a free.
func (s Step) Size() uint32 { return s.size }

// Program is a whole trace in memory, ready to replay: every id replaced by
// a dense slot index, so a replay holds its live allocations in a slice of
// Slots entries. A Program is not modified after it is built (MapSizes
// returns a copy) and may be shared between goroutines.
type Program struct {
	// Name is the name the trace was read under.
	Name string
	// Capacity is the trace's arena size in units.
	Capacity uint32
	// Steps are the trace's operations in order.
	Steps []Step
	// Slots is the number of slots the Steps use: every Slot() is below it.
	Slots uint32
	// Allocs is the number of allocation Steps.
	Allocs int
}

// Load reads the trace file name (gzip-compressed or not) into a Program.
// Errors about the content are *ParseErrors naming the file and line.
// O(lines); the Program takes 8 bytes a line, and parsing needs a map of
// the live ids besides.
func Load(name string) (*Program, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadProgram(f, name)
}

// ReadProgram reads the trace in r (gzip-compressed or not) into a Program.
// name is used in error messages and as the Program's Name.
func ReadProgram(r io.Reader, name string) (*Program, error) {
	tr, err := NewReader(r, name)
	if err != nil {
		return nil, err
	}
	p := &Program{Name: name, Capacity: tr.Capacity()}
	for {
		op, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if op.Kind == Alloc {
			p.Steps = append(p.Steps, AllocStep(op.Slot, op.Size))
			p.Allocs++
		} else {
			p.Steps = append(p.Steps, FreeStep(op.Slot))
		}
	}
	p.Slots = tr.Slots()
	return p, nil
}

// MapSizes returns a copy of p in which every allocation asks for
// size(original size) units instead. It is how a replay tries a rounding
// policy without paying for it in the timed loop. O(len(p.Steps)).
func (p *Program) MapSizes(size func(uint32) uint32) *Program {
	q := *p
	q.Steps = make([]Step, len(p.Steps))
	for i, s := range p.Steps {
		if !s.IsFree() {
			s.size = size(s.size)
		}
		q.Steps[i] = s
	}
	return &q
}
