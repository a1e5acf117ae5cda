package trace

import (
	"errors"
	"strconv"
)

// Errors about the content of a trace or offsets file. They come wrapped in
// a *ParseError that names the file and line; test for them with errors.Is.
var (
	// ErrSyntax is returned for a malformed line: an unknown operation, a
	// missing or extra field, a number that does not parse or does not fit,
	// a second capacity line, or a line too long.
	ErrSyntax = errors.New("malformed line")

	// ErrNoCapacity is returned when an operation comes before the capacity
	// line, or the file ends without one.
	ErrNoCapacity = errors.New("missing capacity line")

	// ErrCapacity is returned for a capacity of 0 or above 2^32-1, by the
	// parser and by NewWriter.
	ErrCapacity = errors.New("capacity out of range")

	// ErrVersion is returned for a version line other than
	// "# gpumem-trace v1", wherever it appears, and by Writer.Comment for
	// text with a line that would read as a version line.
	ErrVersion = errors.New("unsupported trace version")

	// ErrDuplicateID is returned for an allocation whose id is already live.
	ErrDuplicateID = errors.New("duplicate live id")

	// ErrUnknownID is returned for a free of an id that is not live.
	ErrUnknownID = errors.New("free of unknown id")

	// ErrTooManyLive is returned when more than MaxLive allocations would be
	// live at once.
	ErrTooManyLive = errors.New("too many live allocations")
)

// Errors returned by Replayer.
var (
	// ErrMismatch is returned by Replayer.Run when the program was made for
	// a different capacity than the allocator's.
	ErrMismatch = errors.New("trace: allocator capacity differs from the trace's")

	// ErrFreeFailed is returned by Replayer.Run when the allocator refuses
	// to free an allocation it handed out: the allocator is broken.
	ErrFreeFailed = errors.New("trace: allocator refused to free a live allocation")
)

// ParseError reports a problem in a trace or offsets file. Its message reads
// "trace: NAME:LINE: what", for example
// "trace: uniform.trace.gz:17: free of unknown id 42".
type ParseError struct {
	// Name is the file name given to the reader ("" if none).
	Name string
	// Line is the 1-based line number, or 0 when the problem is about the
	// file as a whole (it ended without a capacity line).
	Line int
	// Err is what went wrong; it wraps one of the sentinel errors above or
	// an error from the underlying reader.
	Err error
}

func (e *ParseError) Error() string {
	s := "trace: "
	if e.Name != "" {
		s += e.Name
		if e.Line > 0 {
			s += ":" + strconv.Itoa(e.Line)
		}
	} else if e.Line > 0 {
		s += "line " + strconv.Itoa(e.Line)
	} else {
		s += "<input>"
	}
	return s + ": " + e.Err.Error()
}

func (e *ParseError) Unwrap() error { return e.Err }
