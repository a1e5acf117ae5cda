package scene

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
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
	a, err := ring.NewFrame(dev, ring.FrameOptions{Label: "ring/scratch", BlockBytes: scratchBlockBytes,
		Usage: device.Vertex | device.CopyDst | device.CopySrc})
	if err != nil {
		return nil, err
	}
	return &scratchWorkload{frameLog: frameLog{dev: dev, rb: rb}, a: a}, nil
}

func (w *scratchWorkload) release() { w.a.Release() }

func (w *scratchWorkload) memory() memory.Holder { return w.a }

func (w *scratchWorkload) written() uint64 { return w.frameLog.written }

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
			if err := w.write(f, fmt.Sprintf("frame %d: zone%d %s", f.n, z, b.what), b.verts*scratchVertex); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *scratchWorkload) write(f *frameState, name string, n int) error {
	tag, data := w.next(n)
	t := f.gpumem.start(mgrFrame)
	s, err := w.a.Allocate(uint64(n))
	f.gpumem.stop(t)
	if err != nil {
		return fmt.Errorf("scratch %s: %w", name, err)
	}
	if err := w.dev.WriteBuffer(s.Buffer, s.OffsetBytes, data); err != nil {
		return fmt.Errorf("scratch %s: %w", name, err)
	}
	w.add(name, tag, s, n)
	return nil
}

func (w *scratchWorkload) endFrame(f *frameState, fence uint64) error {
	return w.endWith(f, fence, mgrFrame, "scratch", w.a.EndFrame)
}

func (w *scratchWorkload) notes() []string {
	st := w.a.Stats()
	return []string{fmt.Sprintf("scratch: %d frames, each in one block of %s; %d blocks alive, %d in flight; %d chained, %d refusals",
		st.Frames, inspect.FormatBytes(st.BlockBytes), st.Blocks, st.InFlightBlocks, st.Chains, st.Full)}
}
