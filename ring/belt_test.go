package ring_test

import (
	"bytes"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/ring"
	"github.com/gpumem/gpumem/staging"
)

// TestBufferBelt: Writes through a staging belt land as queue writes do.
// Frames of writes of 4 bytes to 6 KiB (spanning the belt's 4 KiB chunks),
// the ring growing from 4 KiB, each frame's every slice read back before
// the frame ends and again after its fence (those still in the ring's
// buffer); every write went through the belt.
func TestBufferBelt(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		belt, err := staging.New(dev, staging.Options{ChunkBytes: 4 << 10, MaxChunks: 4})
		must(t, err)
		t.Cleanup(belt.Release)
		b := newRing(t, dev, ring.BufferOptions{SizeBytes: 4 << 10, Grow: true, Belt: belt})
		writes := 0
		for frame := range 12 {
			var slices []ring.Slice
			var want [][]byte
			for i := range 1 + frame%4 {
				data := make([]byte, 4*(1+(frame*977+i*331)%1536))
				for k := range data {
					data[k] = byte(frame*31 + i*7 + k)
				}
				s, err := b.Write(data)
				must(t, err)
				slices, want = append(slices, s), append(want, data)
				writes++
			}
			check := func(when string) {
				t.Helper()
				for i, s := range slices {
					if s.Buffer != b.Buffer() {
						continue // a growth since retired it, freed at the fence
					}
					got := make([]byte, s.SizeBytes)
					must(t, dev.ReadBuffer(s.Buffer, s.OffsetBytes, got))
					if !bytes.Equal(got, want[i]) {
						t.Fatalf("frame %d, write %d of %d bytes at %d, %s: read back differs", frame, i, s.SizeBytes, s.OffsetBytes, when)
					}
				}
			}
			check("before the frame's end")
			fence, err := dev.Fence()
			must(t, err)
			must(t, belt.EndFrame(fence))
			must(t, b.EndFrame(fence))
			must(t, dev.Wait())
			check("after its fence")
		}
		if st := belt.Stats(); st.Uploads != writes {
			t.Fatalf("belt carried %d uploads, want every write (%d)", st.Uploads, writes)
		}
		if st := b.Stats(); st.Growths == 0 {
			t.Fatalf("the ring never grew: %+v", st)
		}
	})
}
