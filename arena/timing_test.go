package arena_test

import (
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
)

// TestTimeMoves compacts a fragmented arena with Options.TimeMoves on
// every backend: where the device has a timer, the batch's GPU time is
// back after Wait, once, in Stats and MoveTime; elsewhere nothing is
// timed and nothing fails. Without TimeMoves nothing is stamped.
func TestTimeMoves(t *testing.T) {
	eachBackend(t, func(t *testing.T, dev device.Device) {
		_, timed := device.TimerOf(dev)
		for _, on := range []bool{false, true} {
			a, err := arena.New(dev, arena.Options{ElemSize: 16, InitialElems: 1 << 12, TimeMoves: on})
			if err != nil {
				t.Fatal(err)
			}
			hs := make([]arena.Handle, 64)
			for i := range hs {
				if hs[i], err = a.Allocate(32); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < len(hs); i += 2 {
				if err := a.Free(hs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := a.Compact(); err != nil {
				t.Fatal(err)
			}
			_, hasSpan := a.LastMoveSpan()
			if want := on && timed; hasSpan != want {
				t.Fatalf("TimeMoves %v, device timed %v: LastMoveSpan ok %v", on, timed, hasSpan)
			}
			if err := dev.Wait(); err != nil {
				t.Fatal(err)
			}
			d, ok, err := a.MoveTime()
			if err != nil || ok != (on && timed) {
				t.Fatalf("TimeMoves %v: MoveTime = %v, %v, %v", on, d, ok, err)
			}
			st := a.Stats()
			if want := uint64(0); on && timed {
				want = 1
				if st.TimedBatches != want || st.MoveGPUTime != d {
					t.Fatalf("Stats: %d batches timed, %v; MoveTime %v", st.TimedBatches, st.MoveGPUTime, d)
				}
			} else if st.TimedBatches != want || st.MoveGPUTime != 0 {
				t.Fatalf("untimed arena: Stats says %d batches, %v", st.TimedBatches, st.MoveGPUTime)
			}
			if st2 := a.Stats(); st2.TimedBatches != st.TimedBatches {
				t.Fatalf("a span counted twice: %d then %d", st.TimedBatches, st2.TimedBatches)
			}
			a.Release()
		}
		if !timed {
			t.Logf("no GPU timer on this device: nothing timed")
		}
	})
}
