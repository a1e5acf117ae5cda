package staging_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/staging"
)

// hostile are destination offsets past any destination, near 2^32 and
// 2^64, where off+n wraps.
var hostile = []uint64{1<<64 - 4, 1<<64 - 8, 1<<64 - 64, 1<<64 - 1024, 1 << 63, 1 << 32, 1<<32 - 4, 1<<64 - 1<<32}

// FuzzBelt drives a belt of 256-byte chunks (at most 4, submitted every
// 1 to 4 as the stream's length says) with a command stream, the GPU's completion held by the stream, and checks after every
// command that no chunk was written while a copy may read it and that
// every destination holds what was uploaded. Commands:
//
//	0-3: upload 4*(1+arg) bytes to destination op%2 at a derived offset
//	4:   end the frame
//	5:   complete all but the newest arg%3 frames
//	6:   a hostile upload, at an offset near 2^32 or 2^64 whose sum with
//	     the length wraps: refused with ErrInvalidUpload, nothing written
func FuzzBelt(f *testing.F) {
	f.Add([]byte{0, 10, 6, 0, 6, 1, 6, 2, 4, 0, 6, 5, 0, 20})
	f.Add([]byte{0, 10, 1, 200, 4, 2, 255, 4, 5, 1, 3, 90, 4, 5, 0})
	f.Add([]byte{0, 255, 0, 255, 0, 255, 0, 255, 1, 255, 4, 0, 64})
	f.Fuzz(func(t *testing.T, data []byte) {
		dev, err := host.New(host.Options{HoldCompletion: true})
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Release()
		w := newWorld(t, dev, dev, staging.Options{ChunkBytes: 256, MaxChunks: 4, SubmitChunks: 1 + len(data)%4}, 2048, 1024)
		for i := 0; i+1 < len(data); i += 2 {
			op, arg := data[i]%7, data[i+1]
			var err error
			switch {
			case op <= 3:
				d := int(op % 2)
				size := uint64(len(w.want[d]))
				n := min(4*(1+uint64(arg)), size)
				off := (uint64(arg) * 36 % (size - n + 4)) &^ 3
				err = w.upload(d, off, n)
			case op == 4:
				err = w.endFrame()
			case op == 5:
				w.complete(int(arg % 3))
			case op == 6:
				off := hostile[int(arg)%len(hostile)]
				before := w.belt.Stats()
				if err := w.belt.Upload(w.dsts[arg%2], off, make([]byte, 4*(1+int(arg>>4)))); !errors.Is(err, staging.ErrInvalidUpload) {
					t.Fatalf("command %d: Upload at %d: %v, want ErrInvalidUpload", i, off, err)
				}
				if w.belt.Stats() != before {
					t.Fatalf("command %d: a refused upload changed the belt", i)
				}
			}
			if err == nil {
				err = w.verify()
			}
			if err != nil {
				t.Fatal(fmt.Errorf("command %d (op %d arg %d): %w", i, op, arg, err))
			}
		}
	})
}
