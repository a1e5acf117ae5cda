package trace

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Header is the version line of format v1: the first line of every trace
// Writer writes.
const Header = "# gpumem-trace v1"

// Writer writes a trace in format v1. It does not check the operations it
// is given (Recorder produces valid traces; a hand-written sequence is
// checked when read back), only comments (see Comment). Errors are sticky:
// after the first write error every method returns it, and Flush and Close
// report it. A Writer is not safe for concurrent use.
type Writer struct {
	bw  *bufio.Writer
	gz  *gzip.Writer // non-nil when Create compresses
	f   *os.File     // non-nil when Create opened the file
	buf []byte
	err error
}

// NewWriter returns a Writer that writes a trace of the given capacity to
// w, starting with the header and capacity lines. It returns ErrCapacity
// for a capacity of 0. Call Flush (or Close) when done; Close does not
// close w.
func NewWriter(w io.Writer, capacity uint32) (*Writer, error) {
	if capacity == 0 {
		return nil, ErrCapacity
	}
	tw := &Writer{bw: bufio.NewWriterSize(w, 64<<10), buf: make([]byte, 0, 64)}
	tw.buf = append(tw.buf, Header+"\ncapacity "...)
	tw.buf = strconv.AppendUint(tw.buf, uint64(capacity), 10)
	tw.buf = append(tw.buf, '\n')
	tw.write()
	return tw, nil
}

// Create creates (or truncates) the file name and returns a Writer to it,
// gzip-compressed when name ends in ".gz". Close the Writer to finish the
// file.
func Create(name string, capacity uint32) (*Writer, error) {
	if capacity == 0 {
		return nil, ErrCapacity
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	var dst io.Writer = f
	var gz *gzip.Writer
	if strings.HasSuffix(name, ".gz") {
		gz = gzip.NewWriter(f)
		dst = gz
	}
	w, _ := NewWriter(dst, capacity)
	w.gz, w.f = gz, f
	return w, nil
}

func (w *Writer) write() error {
	if w.err == nil {
		_, w.err = w.bw.Write(w.buf)
	}
	w.buf = w.buf[:0]
	return w.err
}

// Alloc writes "a id size".
func (w *Writer) Alloc(id uint64, size uint32) error {
	w.buf = append(w.buf, 'a', ' ')
	w.buf = strconv.AppendUint(w.buf, id, 10)
	w.buf = append(w.buf, ' ')
	w.buf = strconv.AppendUint(w.buf, uint64(size), 10)
	w.buf = append(w.buf, '\n')
	return w.write()
}

// Free writes "f id".
func (w *Writer) Free(id uint64) error {
	w.buf = append(w.buf, 'f', ' ')
	w.buf = strconv.AppendUint(w.buf, id, 10)
	w.buf = append(w.buf, '\n')
	return w.write()
}

// Comment writes text as comment lines, "# " before each of its lines; a
// line may be of any length. Text with a line that would read as a version
// line is refused with ErrVersion, and nothing of it is written.
func (w *Writer) Comment(text string) error {
	n := 0
	for line := range strings.Lines(text) {
		n++
		w.buf = append(w.buf[:0], "# "...)
		w.buf = append(w.buf, strings.TrimRight(line, "\r\n")...)
		_, version := versionOf(w.buf)
		w.buf = w.buf[:0]
		if version {
			return fmt.Errorf("trace: Comment: line %d would read as a version line: %w", n, ErrVersion)
		}
	}
	for line := range strings.Lines(text) {
		w.buf = append(w.buf, "# "...)
		w.buf = append(w.buf, strings.TrimRight(line, "\r\n")...)
		w.buf = append(w.buf, '\n')
		if w.write() != nil {
			break
		}
	}
	return w.err
}

// Flush writes any buffered lines to the underlying writer.
func (w *Writer) Flush() error {
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

// Close flushes, and for a Writer made by Create finishes the gzip stream
// and closes the file. It returns the first error met. Calling Close twice
// is safe.
func (w *Writer) Close() error {
	err := w.Flush()
	if w.gz != nil {
		if e := w.gz.Close(); err == nil {
			err = e
		}
		w.gz = nil
	}
	if w.f != nil {
		if e := w.f.Close(); err == nil {
			err = e
		}
		w.f = nil
	}
	if w.err == nil && err != nil {
		w.err = err
	}
	return err
}
