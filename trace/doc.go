// Package trace reads, writes, records and replays allocation traces: the
// sequence of allocate and free calls a program made, so that the pattern
// can be replayed offline against any allocator policy.
//
// # Format v1
//
// A trace is UTF-8 text, one operation a line, optionally gzip-compressed
// (readers detect gzip by its magic bytes, never by the file name):
//
//	# gpumem-trace v1
//	capacity <N>        arena size in units (first non-comment line)
//	a <id> <size>       allocate size units; id unique among live allocations
//	f <id>              free the live allocation id
//
// Lines starting with '#' are comments and blank lines are ignored; fields
// are separated by spaces or tabs; numbers are unsigned decimal. The
// capacity is 1 to 2^32-1 units; an id is any 64-bit unsigned number and may
// be reused once its allocation is freed; a size is a 32-bit unsigned number.
//
// Line length: a comment may be of any length (the Reader skips it without
// holding it whole); any other line must be shorter than 64 KiB (65,536
// bytes), not counting its leading blanks and its newline (ErrSyntax).
//
// Version lines: a comment that starts "# gpumem-trace" followed by a
// blank or the end of the line is a version line, wherever it appears, and
// must read "# gpumem-trace v1" (trailing blanks allowed); any other is
// refused (ErrVersion). Writer writes one as the first line, and refuses a
// comment that would read as one.
//
// What is and is not a parse error: the file must be well formed (every line
// parses, the capacity line comes first and only once, no id is allocated
// twice while live, no free names an id that is not live). A size of zero or
// one above the capacity is well formed: it is the allocator's business, so
// at replay such a request is refused like any other and counts as a
// failure. A refused allocation (for whatever reason) is a failure, and the
// later free of its id is skipped.
//
// # Types
//
// Reader streams Ops from a trace and checks it; Writer writes one. Load and
// ReadProgram parse a whole trace into a Program, a compact array of Steps
// in which every id has been replaced by a dense slot index (slots are
// reused through a free list), so that a replay indexes a slice and never a
// map. Replayer replays a Program against an offset.Allocator without
// allocating. Recorder wraps any allocator and writes the calls made through
// it as a trace.
//
// The offsets file format (SaveOffsets, LoadOffsets) holds one line per
// allocation of a trace, in order: the offset the allocator returned, or "-"
// where it refused.
//
// # Errors
//
// Every error about the content of a file is a *ParseError naming the file
// and line; it wraps one of the sentinel errors (ErrSyntax, ErrNoCapacity,
// ErrCapacity, ErrVersion, ErrDuplicateID, ErrUnknownID, ErrTooManyLive)
// or the input's I/O error, so callers test with errors.Is. Replayer.Run
// returns ErrMismatch and ErrFreeFailed.
//
// # Concurrency
//
// None of the types is safe for concurrent use. A Program is never modified
// after it is built and may be replayed by several goroutines at once, each
// with its own Replayer.
package trace
