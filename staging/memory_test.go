package staging_test

import (
	"testing"

	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/staging"
)

// TestMemory checks the belt's memory view against its Stats over frames
// with the GPU held behind: every chunk shown once, the open frame's
// written bytes, the chunks in flight named by their fences, the rest free.
func TestMemory(t *testing.T) {
	dev := testdevice.Host(t, host.Options{HoldCompletion: true})
	w := newWorld(t, dev, dev, staging.Options{ChunkBytes: 1024, MaxChunks: 8}, 8192)
	if got := w.belt.Memory(); len(got) != 0 {
		t.Fatalf("a new belt shows %d chunks", len(got))
	}
	for frame := range 4 {
		must(t, w.upload(0, 0, 1500)) // a chunk and a half
		bufs := w.belt.Memory()
		st := w.belt.Stats()
		if len(bufs) != st.Chunks {
			t.Fatalf("frame %d: %d chunks shown, %d made", frame, len(bufs), st.Chunks)
		}
		tot := memory.Totals(bufs)
		if tot.OccupiedBytes < 1500 || tot.CapacityBytes != uint64(1024*st.Chunks) {
			t.Fatalf("frame %d: totals %+v, want 1500 bytes of this frame at least, %d chunks", frame, tot, st.Chunks)
		}
		inFlight := 0
		for _, b := range bufs {
			if b.Kind != memory.StagingChunk || b.Usage == 0 {
				t.Fatalf("chunk %+v", b)
			}
			for _, r := range b.Regions {
				if r.Live() && len(r.Name) > 6 && r.Name[:6] == "fence " {
					inFlight++
				}
			}
		}
		if inFlight != st.InFlightChunks {
			t.Fatalf("frame %d: %d chunks shown in flight, %d in Stats", frame, inFlight, st.InFlightChunks)
		}
		must(t, w.endFrame())
		w.complete(1)
	}
	w.belt.Release()
	if got := w.belt.Memory(); got != nil {
		t.Fatalf("a released belt shows %d chunks", len(got))
	}
}
