package inspect_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpumem/gpumem/inspect"
)

// FuzzReadJSON feeds arbitrary bytes to ReadJSON, as gpumem map does with
// its input: malformed input must give an error wrapping ErrInvalidDump or
// ErrVersion, never a panic, and whatever it accepts must draw (as SVG:
// the PNG shares its layout, and encoding one per input would slow the
// fuzzer a hundredfold; TestRenderOdd draws odd dumps as PNG), write back,
// and read back.
func FuzzReadJSON(f *testing.F) {
	for _, name := range []string{"sample.json"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"version":1,"device":"x","buffers":[{"name":"a","kind":"k","capacity_bytes":8,"regions":[{"offset":0,"size":4,"used":2,"state":"used","kind":"vertex"},{"offset":4,"size":4,"state":"free"}]}]}`))
	f.Add([]byte(`{"version":1,"buffers":[{"capacity_bytes":18446744073709551615,"regions":[{"offset":0,"size":18446744073709551615,"state":"moving"}]}]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := inspect.ReadJSON(bytes.NewReader(in))
		if err != nil {
			if !errors.Is(err, inspect.ErrInvalidDump) && !errors.Is(err, inspect.ErrVersion) {
				t.Fatalf("error %v wraps neither ErrInvalidDump nor ErrVersion", err)
			}
			return
		}
		if err := inspect.WriteSVG(io.Discard, &d); err != nil && !errors.Is(err, inspect.ErrInvalidDump) {
			t.Fatalf("svg: %v", err)
		}
		var out bytes.Buffer
		if err := d.WriteJSON(&out); err != nil {
			t.Fatal(err)
		}
		if _, err := inspect.ReadJSON(&out); err != nil {
			t.Fatalf("a dump read back does not read again: %v", err)
		}
	})
}
