package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"iter"
	"math"
)

// Kind is the kind of an operation: Alloc or Free.
type Kind uint8

// The operations of format v1; the value is the line's first letter.
const (
	Alloc Kind = 'a'
	Free  Kind = 'f'
)

func (k Kind) String() string {
	switch k {
	case Alloc:
		return "alloc"
	case Free:
		return "free"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MaxLive is the most allocations a trace may have live at once: slot
// indices must leave the top bit of a Step free.
const MaxLive = 1 << 31

// Op is one operation of a trace.
type Op struct {
	Kind Kind
	// ID is the trace's id of the allocation.
	ID uint64
	// Size is the size asked for, in units; 0 for a Free.
	Size uint32
	// Slot is the dense index the Reader gave the allocation (for a Free,
	// the one its allocation got). A slot is reused only after the
	// allocation holding it is freed, the most recently freed first; every
	// slot is below Reader.Slots.
	Slot uint32
}

// Reader reads the operations of a trace one at a time and checks them as
// it goes (see the package documentation for what is an error). It keeps a
// map of the live ids, so its memory grows with the most allocations live
// at once, not with the length of the trace. A Reader is not safe for
// concurrent use.
type Reader struct {
	name     string
	lr       *lineReader
	line     int
	capacity uint32
	live     map[uint64]uint32 // id -> slot
	free     []uint32          // slots freed, reused last-in first-out
	slots    uint32            // slots handed out so far
	err      error             // sticky
}

// NewReader returns a Reader of the trace in r, decompressing it if it
// starts with the gzip magic bytes. name is used in error messages only. It
// reads up to and including the capacity line, so a trace without one is
// refused here. The Reader does not close r.
func NewReader(r io.Reader, name string) (*Reader, error) {
	src, err := decompress(r)
	if err != nil {
		return nil, &ParseError{Name: name, Line: 0, Err: err}
	}
	tr := &Reader{name: name, lr: newLineReader(src, true), live: make(map[uint64]uint32)}
	if err := tr.header(); err != nil {
		return nil, err
	}
	return tr, nil
}

// decompress returns r, or a gzip reader over it when it starts with the
// gzip magic bytes.
func decompress(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(br)
	}
	return br, nil
}

// lineBuffer is the size of a lineReader's buffer, in bytes: a line other
// than a comment must be shorter (see the package documentation). An
// operation line without leading zeros is at most 33 bytes; the limit only
// bounds what a malformed line can cost.
const lineBuffer = 64 << 10

// lineReader reads lines in place from a buffer of lineBuffer bytes. A
// line that does not fit is returned cut, for the caller to look at and
// then skip, so a line of any length can be passed without holding it
// whole. The last line may lack its newline only when the input ended
// cleanly (io.EOF): when reading fails (a truncated gzip stream fails with
// io.ErrUnexpectedEOF) the line it cut short is dropped and the input's
// error returned, for a line cut short may still parse ("a 1 1000" of
// "a 1 100037") and must never pass for an operation.
type lineReader struct {
	br     *bufio.Reader
	blanks bool  // skip each line's leading spaces and tabs
	err    error // sticky: the input's error, io.EOF included
}

func newLineReader(src io.Reader, blanks bool) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(src, lineBuffer), blanks: blanks}
}

// next returns the next line without its newline, valid until the next
// call; with blanks set, also without its leading spaces and tabs, which
// are passed before the line is read and so take no room in the buffer. A
// line of lineBuffer bytes or more is returned cut to its first lineBuffer
// bytes, with cut set; skip passes the rest. At the end of the input next
// returns io.EOF, or the input's error.
func (l *lineReader) next() (line []byte, cut bool, err error) {
	if l.err != nil {
		return nil, false, l.err
	}
	for l.blanks {
		c, err := l.br.ReadByte()
		if err != nil {
			l.err = err
			return nil, false, err
		}
		if c != ' ' && c != '\t' {
			l.br.UnreadByte()
			break
		}
	}
	line, err = l.br.ReadSlice('\n')
	switch {
	case err == nil:
		return line[:len(line)-1], false, nil
	case err == bufio.ErrBufferFull:
		return line, true, nil
	case err == io.EOF && len(line) > 0:
		l.err = err
		return line, len(line) >= lineBuffer, nil
	}
	l.err = err
	return nil, false, err
}

// skip passes the rest of the line next returned cut, without holding it.
// It returns the input's error if reading fails before the line ends.
func (l *lineReader) skip() error {
	for {
		_, err := l.br.ReadSlice('\n')
		switch err {
		case nil:
			return nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			l.err = err
			return nil
		}
		l.err = err
		return err
	}
}

// Capacity returns the trace's capacity in units.
func (r *Reader) Capacity() uint32 { return r.capacity }

// Line returns the number of the last line read.
func (r *Reader) Line() int { return r.line }

// Slots returns how many slots the Reader has handed out so far: the most
// allocations live at once in the lines read.
func (r *Reader) Slots() uint32 { return r.slots }

// Live returns the number of allocations live after the lines read.
func (r *Reader) Live() int { return len(r.live) }

// errorf returns a *ParseError at the current line, wrapping sentinel.
func (r *Reader) errorf(sentinel error, format string, args ...any) error {
	return &ParseError{Name: r.name, Line: r.line, Err: fmt.Errorf("%w"+format, append([]any{sentinel}, args...)...)}
}

// scan returns the fields of the next line that is neither blank nor a
// comment, checking the version lines among the comments. At the end of
// the input it returns io.EOF, or the input's error as a *ParseError.
func (r *Reader) scan(f *fields) error {
	for {
		line, cut, err := r.lr.next()
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return &ParseError{Name: r.name, Line: r.line + 1, Err: err}
		}
		r.line++
		if len(line) > 0 && line[0] == '#' {
			if err := r.version(line, cut); err != nil {
				return err
			}
			if cut {
				if err := r.lr.skip(); err != nil {
					return &ParseError{Name: r.name, Line: r.line, Err: err}
				}
			}
			continue
		}
		if cut {
			return r.errorf(ErrSyntax, ": line too long")
		}
		f.split(line)
		if f.n > 0 { // else only blanks, or a trailing '\r'
			return nil
		}
	}
}

// versionPrefix starts a version line; see the package documentation.
const versionPrefix = "# gpumem-trace"

// versionOf reports whether line, its leading blanks removed, is a version
// line, and returns the version it names, trimmed of blanks.
func versionOf(line []byte) (version []byte, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte(versionPrefix))
	if !ok || len(rest) > 0 && !isSpace(rest[0]) {
		return nil, false
	}
	return bytes.Trim(rest, " \t\r"), true
}

// version checks a comment line: a version line must name v1. A version
// line cut by lineReader is refused without reading the rest.
func (r *Reader) version(line []byte, cut bool) error {
	v, ok := versionOf(line)
	switch {
	case !ok:
		return nil
	case cut:
		return r.errorf(ErrVersion, ": version line too long")
	case string(v) != "v1":
		return r.errorf(ErrVersion, " %q", v)
	}
	return nil
}

// header reads up to and including the capacity line.
func (r *Reader) header() error {
	var f fields
	if err := r.scan(&f); err != nil {
		if err == io.EOF {
			return &ParseError{Name: r.name, Err: ErrNoCapacity}
		}
		return err
	}
	if string(f.f[0]) != "capacity" {
		if op := string(f.f[0]); op == "a" || op == "f" {
			return r.errorf(ErrNoCapacity, " before the first operation")
		}
		return r.errorf(ErrSyntax, ": unknown operation %q (want capacity first)", f.f[0])
	}
	if f.n < 2 {
		return r.errorf(ErrSyntax, ": capacity: missing value")
	}
	if f.n > 2 {
		return r.errorf(ErrSyntax, ": capacity: extra field %q", f.f[2])
	}
	c, ok := parseUint(f.f[1])
	if !ok {
		return r.errorf(ErrSyntax, ": capacity: bad number %q", f.f[1])
	}
	if c == 0 || c > math.MaxUint32 {
		return r.errorf(ErrCapacity, ": %d (want 1 to %d)", c, uint64(math.MaxUint32))
	}
	r.capacity = uint32(c)
	return nil
}

// Next returns the next operation, or io.EOF after the last. Any other
// error is a *ParseError; after an error Next returns the same error again.
// An input that fails to read (a truncated gzip stream, say) ends with a
// *ParseError that wraps the input's error (io.ErrUnexpectedEOF), never
// with the line it cut short: every operation Next returns was read whole.
// O(1) per line (amortized); it allocates only to grow its map of live ids.
func (r *Reader) Next() (Op, error) {
	if r.err != nil {
		return Op{}, r.err
	}
	op, err := r.next()
	if err != nil {
		r.err = err
	}
	return op, err
}

// All returns an iterator over the remaining operations. It stops after the
// last one, or after yielding an error (a *ParseError) with a zero Op.
func (r *Reader) All() iter.Seq2[Op, error] {
	return func(yield func(Op, error) bool) {
		for {
			op, err := r.Next()
			if err == io.EOF || !yield(op, err) || err != nil {
				return
			}
		}
	}
}

func (r *Reader) next() (Op, error) {
	var f fields
	if err := r.scan(&f); err != nil {
		return Op{}, err
	}
	switch string(f.f[0]) {
	case "a":
		if f.n < 3 {
			return Op{}, r.errorf(ErrSyntax, ": a: missing %s", [...]string{"", "id", "size"}[f.n])
		}
		if f.n > 3 {
			return Op{}, r.errorf(ErrSyntax, ": a: extra field %q", f.f[3])
		}
		id, ok := parseUint(f.f[1])
		if !ok {
			return Op{}, r.errorf(ErrSyntax, ": a: bad id %q", f.f[1])
		}
		size, ok := parseUint(f.f[2])
		if !ok || size > math.MaxUint32 {
			return Op{}, r.errorf(ErrSyntax, ": a: bad size %q", f.f[2])
		}
		if _, dup := r.live[id]; dup {
			return Op{}, r.errorf(ErrDuplicateID, " %d", id)
		}
		var slot uint32
		if n := len(r.free); n > 0 {
			slot = r.free[n-1]
			r.free = r.free[:n-1]
		} else {
			if r.slots >= MaxLive {
				return Op{}, r.errorf(ErrTooManyLive, " (more than %d)", MaxLive)
			}
			slot = r.slots
			r.slots++
		}
		r.live[id] = slot
		return Op{Kind: Alloc, ID: id, Size: uint32(size), Slot: slot}, nil
	case "f":
		if f.n < 2 {
			return Op{}, r.errorf(ErrSyntax, ": f: missing id")
		}
		if f.n > 2 {
			return Op{}, r.errorf(ErrSyntax, ": f: extra field %q", f.f[2])
		}
		id, ok := parseUint(f.f[1])
		if !ok {
			return Op{}, r.errorf(ErrSyntax, ": f: bad id %q", f.f[1])
		}
		slot, live := r.live[id]
		if !live {
			return Op{}, r.errorf(ErrUnknownID, " %d", id)
		}
		delete(r.live, id)
		r.free = append(r.free, slot)
		return Op{Kind: Free, ID: id, Slot: slot}, nil
	case "capacity":
		return Op{}, r.errorf(ErrSyntax, ": capacity line repeated")
	}
	return Op{}, r.errorf(ErrSyntax, ": unknown operation %q", f.f[0])
}

// fields holds up to four space-separated fields of a line; n counts up to
// 4, so n == 4 means "more than three" (f[3] is the first extra one).
type fields struct {
	f [4][]byte
	n int
}

func (f *fields) split(line []byte) {
	f.n = 0
	i := 0
	for f.n < len(f.f) {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return
		}
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		f.f[f.n] = line[i:j]
		f.n++
		i = j
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// parseUint parses an unsigned decimal number of at most 64 bits.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
