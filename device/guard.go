package device

import "fmt"

// Guard is a range of a buffer that should hold a pattern word repeated:
// the margin a debugging allocator leaves after an allocation to catch
// writes past its end. Offset and Size are in bytes, multiples of 4.
type Guard struct {
	Offset, Size uint64
}

// A GuardChecker is a Device that checks guards on the device itself (a
// compute kernel on a GPU, a loop on the host), without reading the buffer
// back. Use it through CheckGuards, which serves every device.
type GuardChecker interface {
	// CheckGuards is CheckGuards on this device.
	CheckGuards(buf Buffer, guards []Guard, pattern uint32, bad []int) ([]int, error)
}

// CheckGuards appends to bad the index of every guard of buf some word of
// which is not pattern (little-endian), in increasing order, after every
// earlier call has taken effect: it waits for the device. Every guard
// lies inside buf, with offset and size multiples of 4 (ErrOutOfBounds,
// ErrInvalidAlignment, checked before anything runs); buf needs CopySrc
// (and Storage where the device checks in a kernel). On a GuardChecker
// the device checks; elsewhere each guard is read back. Meant for
// debugging: a check costs a wait.
func CheckGuards(dev Device, buf Buffer, guards []Guard, pattern uint32, bad []int) ([]int, error) {
	if buf == nil {
		return bad, fmt.Errorf("device: CheckGuards: nil buffer: %w", ErrInvalidObject)
	}
	if err := ValidateGuards(buf.Size(), guards); err != nil {
		return bad, err
	}
	if c, ok := dev.(GuardChecker); ok {
		return c.CheckGuards(buf, guards, pattern, bad)
	}
	var words []byte
	for i, g := range guards {
		if uint64(cap(words)) < g.Size {
			words = make([]byte, g.Size)
		}
		w := words[:g.Size]
		if err := dev.ReadBuffer(buf, g.Offset, w); err != nil {
			return bad, err
		}
		if !GuardIntact(w, pattern) {
			bad = append(bad, i)
		}
	}
	return bad, nil
}

// ValidateGuards checks guards against a buffer of size bytes.
func ValidateGuards(size uint64, guards []Guard) error {
	for i, g := range guards {
		if err := CheckRange(size, g.Offset, g.Size); err != nil {
			return fmt.Errorf("device: guard %d: %w", i, err)
		}
	}
	return nil
}

// GuardIntact reports whether b, a multiple of 4 bytes, is pattern
// repeated, little-endian.
func GuardIntact(b []byte, pattern uint32) bool {
	p := [4]byte{byte(pattern), byte(pattern >> 8), byte(pattern >> 16), byte(pattern >> 24)}
	for i := 0; i+4 <= len(b); i += 4 {
		if [4]byte(b[i:i+4]) != p {
			return false
		}
	}
	return true
}
