//go:build cgo

package webgpu

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/device"
)

// stagingDevice returns a compute-path device and a buffer of size bytes
// filled with random bytes, and those bytes.
func stagingDevice(t *testing.T, size uint64) (*Device, device.Buffer, []byte) {
	t.Helper()
	d := newTestDevice(t, Options{Moves: MoveCompute})
	b, err := d.CreateBuffer(device.BufferDesc{Label: "staging", Size: size, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, size)
	r := rand.New(rand.NewPCG(1, uint64(size)))
	for i := range want {
		want[i] = byte(r.Uint32())
	}
	if err := d.WriteBuffer(b, 0, want); err != nil {
		t.Fatal(err)
	}
	return d, b, want
}

// checkBytes reads b back and compares it with want.
func checkBytes(t *testing.T, d *Device, b device.Buffer, want []byte) {
	t.Helper()
	got := make([]byte, len(want))
	if err := d.ReadBuffer(b, 0, got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("bytes differ from the moves done in order: %s", firstDiff(got, want))
	}
}

// checkStaging fails unless the table staging holds pending, in-flight
// and free buffers in those numbers and has made made of them.
func checkStaging(t *testing.T, d *Device, step string, pending, inflight, free, made int) {
	t.Helper()
	p, i, f := d.stage.counts()
	if p != pending || i != inflight || f != free || d.stage.made != made {
		t.Fatalf("%s: staging buffers pending %d, in flight %d, free %d, made %d; want %d, %d, %d, %d", step, p, i, f, d.stage.made, pending, inflight, free, made)
	}
}

// TestTableStagingRecycledAfterGPU follows one staging buffer through its
// states: pending while its encoder records, in flight from the submit,
// never handed out again until its mapping resolves (a second batch
// recorded before any poll gets a buffer of its own), free after a wait,
// and reused by the next batch with no new buffer; every byte is the
// moves done in order throughout.
func TestTableStagingRecycledAfterGPU(t *testing.T) {
	const size = 4 << 20
	d, b, want := stagingDevice(t, size)
	r := rand.New(rand.NewPCG(5, 6))
	batch := func() {
		t.Helper()
		moves := sweepBatch(r, size, 64<<10, 4096)
		if err := d.Move(b, moves); err != nil {
			t.Fatal(err)
		}
		refMoves(want, moves)
	}
	batch()
	checkStaging(t, d, "first batch recorded", 1, 0, 0, 1)
	if err := d.flush(); err != nil { // submits, polls nothing
		t.Fatal(err)
	}
	checkStaging(t, d, "submitted", 0, 1, 0, 1)
	if st := (*d.stage.inflight.Front()).state; st != mapWaiting {
		t.Fatalf("the staging buffer's mapping resolved (%d) before any poll", st)
	}
	batch()
	checkStaging(t, d, "second batch before the first's mapping resolved", 1, 1, 0, 2)
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	checkStaging(t, d, "after a wait", 0, 2, 0, 2)
	batch() // takes the first, now mapped again
	checkStaging(t, d, "third batch", 1, 0, 1, 2)
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		batch()
		if err := d.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if d.stage.made != 2 {
		t.Fatalf("%d staging buffers made over 13 batches with a wait after each; want the 2 of the start", d.stage.made)
	}
	checkBytes(t, d, b, want)
}

// TestTableStagingManyBatchesOneEncoder records rounds of batches whose
// tables outgrow a staging buffer into one encoder each, and checks that
// the staging buffers settle on one an encoder (rounds with a wait after
// each make none after the second), that each batch's table reached the
// GPU intact (every byte as the moves done in order), and that at most
// maxFreeStaging buffers stay free, also when rounds are submitted with
// no wait (the GPU behind: buffers still in flight are not reused).
func TestTableStagingManyBatchesOneEncoder(t *testing.T) {
	const size = 4 << 20
	d, b, want := stagingDevice(t, size)
	// 2,048 moves of 1 KiB, upper half to lower half, in reverse order:
	// a table of 32 KiB, so a few batches outgrow a 64 KiB staging buffer.
	var batch []device.Move
	for i := range uint64(2048) {
		batch = append(batch, device.Move{Src: size/2 + i<<10, Dst: (2047 - i) << 10, Size: 1 << 10})
	}
	var made []int
	for round := range 12 {
		for range 12 {
			if err := d.Move(b, batch); err != nil {
				t.Fatal(err)
			}
			refMoves(want, batch)
		}
		if round < 6 {
			if err := d.Wait(); err != nil {
				t.Fatal(err)
			}
			made = append(made, d.stage.made)
		} else if err := d.Submit(); err != nil {
			t.Fatal(err)
		}
		if p, _, free := d.stage.counts(); free > maxFreeStaging || p != 0 {
			t.Fatalf("round %d: %d pending, %d free staging buffers (at most %d)", round, p, free, maxFreeStaging)
		}
	}
	if made[1] != made[5] {
		t.Fatalf("staging buffers made after each round %v: later rounds still make them", made)
	}
	checkBytes(t, d, b, want)
}

// TestTableStagingDroppedEncoder drops an encoder whose copies read a
// staging buffer, unsubmitted (as the recording benchmarks do): the
// buffer, never submitted, is free for the next batch, still mapped.
func TestTableStagingDroppedEncoder(t *testing.T) {
	const size = 1 << 20
	d, b, want := stagingDevice(t, size)
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	moves := []device.Move{{Src: 4096, Dst: 0, Size: 8192}}
	if err := d.Move(b, moves); err != nil {
		t.Fatal(err)
	}
	d.dropPending()
	if err := d.Move(b, moves); err != nil {
		t.Fatal(err)
	}
	checkStaging(t, d, "after a dropped encoder", 1, 0, 0, 1)
	refMoves(want, moves)
	checkBytes(t, d, b, want)
}

// TestTableStagingRelease releases devices with their staging buffers in
// each state: pending (recorded, not submitted), in flight (submitted,
// mapping not resolved) and free; none may outlive the device or break
// its release.
func TestTableStagingRelease(t *testing.T) {
	for _, c := range []struct {
		name  string
		after func(d *Device, b device.Buffer) error
	}{
		{"pending", func(*Device, device.Buffer) error { return nil }},
		{"in flight", func(d *Device, _ device.Buffer) error { return d.flush() }},
		{"free", func(d *Device, b device.Buffer) error {
			if err := d.Wait(); err != nil {
				return err
			}
			d.dropPending() // the next batch's encoder, dropped: its buffer free
			return d.Move(b, []device.Move{{Src: 0, Dst: 4096, Size: 16}})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := New(Options{Moves: MoveCompute})
			if err != nil {
				t.Skip(err)
			}
			b, err := d.CreateBuffer(device.BufferDesc{Size: 1 << 20, Usage: device.CopySrc | device.CopyDst})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Move(b, []device.Move{{Src: 65536, Dst: 0, Size: 65536}}); err != nil {
				t.Fatal(err)
			}
			if err := c.after(d, b); err != nil {
				t.Fatal(err)
			}
			d.Release()
			if p, i, f := d.stage.counts(); p+i+f != 0 {
				t.Fatalf("after Release: %d pending, %d in flight, %d free staging buffers", p, i, f)
			}
		})
	}
}
