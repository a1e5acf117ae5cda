package scene

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/ring"
	"github.com/gpumem/gpumem/staging"
)

// The constants workload writes each frame's constants through a ring
// buffer, as a renderer writes uniforms bound with dynamic offsets: a
// camera block, a block per zone in view, and a block of per-draw data
// sized by the zone's contents. The frame ends with EndFrame and the fence
// of the submission that carries it; the ring reuses its bytes once the
// device has completed that fence.
//
// The ring sees the device through lagged, which reports the GPU as
// ringLag frames behind (never ahead of the real device: it waits for it
// when the GPU is later still), as a renderer with three frames in flight
// sees it. Real fences complete at the GPU's pace, which would make the
// ring's reuse, and so its growths, differ from run to run and from host
// to webgpu.
const (
	ringLag       = 2
	ringSalt      = 0x72696e67
	ringStartSize = 16 << 10 // small, so that the run shows the ring grow
)

// lagged is a device whose Completed is at most ringLag fences behind the
// newest: see above.
type lagged struct {
	device.Device
	last uint64 // the newest fence, set by the workload at each frame's end
	// sw is the managers' time: a wait for the real device is the demo's
	// doing, not the ring's, and is taken out of it.
	sw *stopwatch
}

// lagged forwards the device's optional interfaces, so that fills and
// guard checks through it take the device's own paths.
var (
	_ device.Filler       = (*lagged)(nil)
	_ device.GuardChecker = (*lagged)(nil)
)

// FillBuffer is device.FillBuffer on the device lagged wraps.
func (d *lagged) FillBuffer(buf device.Buffer, offset, size uint64, fill func(dst []byte)) error {
	return device.FillBuffer(d.Device, buf, offset, size, fill)
}

// CheckGuards is device.CheckGuards on the device lagged wraps.
func (d *lagged) CheckGuards(buf device.Buffer, guards []device.Guard, pattern uint32, bad []int) ([]int, error) {
	return device.CheckGuards(d.Device, buf, guards, pattern, bad)
}

// Completed reports the newest fence but ringLag as completed, waiting
// for the device when it has not completed that one yet.
func (d *lagged) Completed() (uint64, error) {
	if d.last <= ringLag {
		return 0, nil
	}
	want := d.last - ringLag
	done, err := d.Device.Completed()
	if err != nil {
		return 0, err
	}
	if done < want {
		t := time.Now()
		err := d.Device.Wait()
		d.sw.exclude(time.Since(t))
		if err != nil {
			return 0, err
		}
	}
	return want, nil
}

// pending returns the frames of held, oldest first, whose fence d does
// not report completed: their bytes are still the GPU's, and must be as
// written.
func (d *lagged) pending(held []constFrame) ([]constFrame, error) {
	done, err := d.Completed()
	if err != nil {
		return nil, err
	}
	k := 0
	for k < len(held) && held[k].fence <= done {
		k++
	}
	return held[k:], nil
}

// constBlock is one block of constants written in a frame.
type constBlock struct {
	name string
	s    ring.Slice
	tag  uint32
}

// constFrame is one frame's blocks and its fence.
type constFrame struct {
	n      int
	fence  uint64
	blocks []constBlock
}

// frameLog is what the constants and scratch workloads keep of their
// frames: the open frame's blocks, the frames ended whose fence the device
// still reports pending, and the bytes written.
type frameLog struct {
	dev     *lagged
	rb      *readbackWorkload
	open    constFrame
	held    []constFrame // frames ended whose fence is pending, oldest first
	nextTag uint32
	scratch []byte
	written uint64
}

// next returns the next block's tag and n bytes of data carrying it.
func (l *frameLog) next(n int) (uint32, []byte) {
	l.nextTag++
	return l.nextTag, fill(&l.scratch, l.nextTag, n)
}

// add records a block of the open frame, n bytes written at s.
func (l *frameLog) add(name string, tag uint32, s ring.Slice, n int) {
	l.written += uint64(n)
	l.open.blocks = append(l.open.blocks, constBlock{name: name, s: s, tag: tag})
}

// end closes the open frame with fence and drops the frames held that the
// device reports completed.
func (l *frameLog) end(fence uint64) error {
	l.open.fence = fence
	l.held = append(l.held, l.open)
	l.open = constFrame{}
	var err error
	l.held, err = l.dev.pending(l.held)
	return err
}

// endWith ends the manager's frame with fence through endFrame (a call
// into manager m, timed as its), then closes the open frame.
func (l *frameLog) endWith(f *frameState, fence uint64, m manager, what string, endFrame func(uint64) error) error {
	l.dev.last = fence
	t := f.gpumem.start(m)
	err := endFrame(fence)
	f.gpumem.stop(t)
	if err != nil {
		return fmt.Errorf("%s end frame: %w", what, err)
	}
	return l.end(fence)
}

// check reads back n blocks of the frames in flight (every one when n <
// 0): their bytes must not have been handed out again.
func (l *frameLog) check(rng *rand.Rand, n int) (int, error) {
	var blocks []constBlock
	for _, f := range l.held {
		blocks = append(blocks, f.blocks...)
	}
	return checkSome(blocks, rng, n, func(b constBlock) error {
		got := make([]byte, b.s.SizeBytes)
		if err := l.rb.read(b.s.Buffer, b.s.OffsetBytes, got); err != nil {
			return fmt.Errorf("%s: read back: %w", b.name, err)
		}
		return verify(got, b.tag, b.name)
	})
}

type constantsWorkload struct {
	frameLog
	r       *ring.Buffer
	scale   int
	zoneObj [demoZones]int // objects per zone: per-draw data
	belt    bool           // writes go through the meshes' staging belt
}

// With Options.Belt the ring writes through the mesh allocator's staging belt
// (ring.BufferOptions.Belt), which the mesh workload ends each frame.
func newConstantsWorkload(dev *lagged, scale int, rb *readbackWorkload, belt *staging.Belt) (*constantsWorkload, error) {
	w := &constantsWorkload{frameLog: frameLog{dev: dev, rb: rb}, scale: scale, belt: belt != nil}
	r, err := ring.NewBuffer(w.dev, ring.BufferOptions{Label: "ring/constants", SizeBytes: ringStartSize, Grow: true,
		Usage: device.Uniform | device.CopyDst | device.CopySrc, Belt: belt})
	if err != nil {
		return nil, err
	}
	w.r = r
	return w, nil
}

func (w *constantsWorkload) release() { w.r.Release() }

func (w *constantsWorkload) memory() memory.Holder { return w.r }

func (w *constantsWorkload) written() uint64 { return w.frameLog.written }

func (w *constantsWorkload) frame(f *frameState) error {
	w.open = constFrame{n: f.n}
	if err := w.write(f, "camera", 208); err != nil { // view, projection, their inverses' rows, time
		return err
	}
	for z := range demoZones {
		if !f.inView[z] {
			continue
		}
		if w.zoneObj[z] == 0 {
			w.zoneObj[z] = w.scale * (4 + zoneRand(f.seed, z, ringSalt).IntN(60))
		}
		if err := w.write(f, fmt.Sprintf("zone%d", z), 96); err != nil { // zone transform, light
			return err
		}
		// A 64-byte transform per object, give or take what is culled.
		objs := w.zoneObj[z] - f.rng.IntN(w.zoneObj[z]/2+1)
		if err := w.write(f, fmt.Sprintf("zone%d/draws", z), 64*objs); err != nil {
			return err
		}
	}
	return nil
}

func (w *constantsWorkload) write(f *frameState, what string, n int) error {
	name := fmt.Sprintf("frame %d: %s", f.n, what)
	tag, data := w.next(n)
	t := f.gpumem.start(mgrRing)
	s, err := w.r.Write(data)
	f.gpumem.stop(t)
	if err != nil {
		return fmt.Errorf("ring write %s: %w", name, err)
	}
	w.add(name, tag, s, n)
	return nil
}

func (w *constantsWorkload) endFrame(f *frameState, fence uint64) error {
	return w.endWith(f, fence, mgrRing, "ring", w.r.EndFrame)
}

func (w *constantsWorkload) notes() []string {
	st := w.r.Stats()
	done, _ := w.dev.Completed()
	via := ""
	if w.belt {
		via = "; written through the meshes' staging belt"
	}
	return []string{
		fmt.Sprintf("ring: %d frames ended with their fence; fence %d of %d completed (the GPU %d frames behind);",
			st.Frames, done, w.dev.last, ringLag),
		fmt.Sprintf("  %d frames in flight hold %s; %d growths, %d refusals%s", st.FramesInFlight, inspect.FormatBytes(st.InFlightBytes), st.Growths, st.Full, via),
	}
}
