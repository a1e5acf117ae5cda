package trace

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Refused stands in an offsets slice for an allocation the allocator
// refused. No allocation can start there: a capacity is at most 2^32-1
// units and an allocation at least 1.
const Refused uint32 = math.MaxUint32

// WriteOffsets writes offsets in the offsets file format: one line per
// allocation, the decimal offset or "-" for Refused.
func WriteOffsets(w io.Writer, offsets []uint32) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := make([]byte, 0, 16)
	for _, off := range offsets {
		buf = buf[:0]
		if off == Refused {
			buf = append(buf, '-')
		} else {
			buf = strconv.AppendUint(buf, uint64(off), 10)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// SaveOffsets writes offsets to the file name, gzip-compressed when name
// ends in ".gz".
func SaveOffsets(name string, offsets []uint32) (err error) {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer func() {
		if e := f.Close(); err == nil {
			err = e
		}
	}()
	if !strings.HasSuffix(name, ".gz") {
		return WriteOffsets(f, offsets)
	}
	gz := gzip.NewWriter(f)
	if err := WriteOffsets(gz, offsets); err != nil {
		return err
	}
	return gz.Close()
}

// ReadOffsets reads an offsets file (gzip-compressed or not, detected by its
// magic bytes). A line that is neither "-" nor a decimal offset below
// 2^32-1 is a *ParseError wrapping ErrSyntax; an input that fails to read
// (a truncated gzip stream) is a *ParseError wrapping its error
// (io.ErrUnexpectedEOF), never ErrSyntax for the line it cut short. name
// is used in errors only.
func ReadOffsets(r io.Reader, name string) ([]uint32, error) {
	src, err := decompress(r)
	if err != nil {
		return nil, &ParseError{Name: name, Err: err}
	}
	lr := newLineReader(src, false)
	var offsets []uint32
	for line := 1; ; line++ {
		b, cut, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &ParseError{Name: name, Line: line, Err: err}
		}
		if cut {
			return nil, &ParseError{Name: name, Line: line, Err: fmt.Errorf("%w: line too long", ErrSyntax)}
		}
		if len(b) > 0 && b[len(b)-1] == '\r' {
			b = b[:len(b)-1]
		}
		if string(b) == "-" {
			offsets = append(offsets, Refused)
			continue
		}
		v, ok := parseUint(b)
		if !ok || v >= uint64(Refused) {
			return nil, &ParseError{Name: name, Line: line, Err: fmt.Errorf("%w: bad offset %q", ErrSyntax, b)}
		}
		offsets = append(offsets, uint32(v))
	}
	return offsets, nil
}

// LoadOffsets reads the offsets file name.
func LoadOffsets(name string) ([]uint32, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadOffsets(f, name)
}
