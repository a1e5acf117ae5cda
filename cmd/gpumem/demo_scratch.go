package main

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/internal/invariant"
	"github.com/gpumem/gpumem/ring"
)

// The scratch workload writes each frame's throwaway vertices (debug
// lines and particles of the zones in view) through a linear frame arena
// (ring.Frame): the frame bumps through a block of its own, hands it to
// the GPU with the frame's fence, and a later frame takes it back once the
// device (seen through lagged, as by the constants' ring) has completed
// that fence.
//
// A frame never outgrows its block (scratchZoneMax bytes a zone at most,
// five zones in view), so every block has scratchBlockBytes bytes.
const (
	scratchSalt       = 0x73637261
	scratchBlockBytes = 64 << 10
	scratchZoneMax    = 12 << 10
	scratchVertex     = 16 // position and color
)

// scratchWorkload keeps the blocks of the frames in flight for the maps
// and read-back checks.
type scratchWorkload struct {
	frameLog
	a *ring.Frame
}

func newScratchWorkload(dev *lagged, rb *readbackWorkload) (*scratchWorkload, error) {
	a, err := ring.NewFrame(dev, ring.FrameOptions{Label: "scratch", BlockBytes: scratchBlockBytes,
		Usage: device.Vertex | device.CopyDst | device.CopySrc})
	if err != nil {
		return nil, err
	}
	return &scratchWorkload{frameLog: frameLog{dev: dev, rb: rb}, a: a}, nil
}

func (w *scratchWorkload) release() { w.a.Release() }

func (w *scratchWorkload) frame(f *frameState) error {
	w.open = constFrame{n: f.n}
	for z := range demoZones {
		if !f.inView[z] {
			continue
		}
		lines := 16 + zoneRand(f.seed, z, scratchSalt).IntN(256) // the zone's bounds and paths
		particles := f.rng.IntN(scratchZoneMax/scratchVertex - 2*lines)
		for _, b := range []struct {
			what  string
			verts int
		}{{"lines", 2 * lines}, {"particles", particles}} {
			if b.verts == 0 {
				continue
			}
			if err := w.write(fmt.Sprintf("frame %d: zone%d %s", f.n, z, b.what), b.verts*scratchVertex); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *scratchWorkload) write(name string, n int) error {
	tag, data := w.next(n)
	s, err := w.a.Allocate(uint64(n))
	if err != nil {
		return fmt.Errorf("scratch %s: %w", name, err)
	}
	if err := w.dev.WriteBuffer(s.Buffer, s.Offset, data); err != nil {
		return fmt.Errorf("scratch %s: %w", name, err)
	}
	w.add(name, tag, s, n)
	return nil
}

func (w *scratchWorkload) endFrame(fence uint64) error {
	w.dev.last = fence
	if err := w.a.EndFrame(fence); err != nil {
		return fmt.Errorf("scratch end frame: %w", err)
	}
	return w.end(fence)
}

// buffers returns the blocks of the frames in flight, oldest first.
func (w *scratchWorkload) buffers() []inspect.Buffer {
	var bufs []inspect.Buffer
	for _, f := range w.held {
		var regions []inspect.Region
		var buf device.Buffer
		for _, b := range f.blocks {
			if buf != nil && b.s.Buffer != buf {
				invariant.Broken("demo", "a scratch frame chained a block") // see scratchZoneMax
			}
			buf = b.s.Buffer
			regions = append(regions, inspect.Region{Offset: b.s.Offset, Size: (b.s.Size + 3) &^ 3, Used: b.s.Size,
				Kind: "ring", Name: b.name})
		}
		if buf == nil {
			continue
		}
		b, err := inspect.NewBuffer(fmt.Sprintf("ring/scratch block of frame %d", f.n), "ring arena", buf.Size(), regions)
		if err != nil {
			invariant.Broken("demo", "scratch ranges overlap: %v", err) // the arena's invariant broke
		}
		b.Usage = buf.Desc().Usage.String()
		bufs = append(bufs, b)
	}
	return bufs
}

func (w *scratchWorkload) rows() []bufferRow {
	st := w.a.Stats()
	row := bufferRow{name: "ring/scratch", category: "scratch", allocs: uint64(st.Allocs), written: w.written,
		capacity: uint64(st.Blocks) * st.BlockBytes, growths: uint64(st.Chains)}
	for _, b := range w.buffers() {
		row.live += b.Stats.Allocations
		row.occupied += b.Stats.OccupiedBytes
		row.reserved += b.Stats.ReservedBytes
	}
	row.free = row.capacity - row.reserved
	row.largest = row.free
	return []bufferRow{row}
}

func (w *scratchWorkload) notes() []string {
	st := w.a.Stats()
	return []string{fmt.Sprintf("scratch: %d frames, each in one block of %s; %d blocks alive, %d in flight; %d chained, %d refusals",
		st.Frames, inspect.FormatBytes(st.BlockBytes), st.Blocks, st.InFlightBlocks, st.Chains, st.Full)}
}
