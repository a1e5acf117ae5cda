package scene

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/pprof"
	"slices"
	"strconv"
	"time"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/budget"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
)

// Options says what Stream runs. Only Frames must be set; a zero Scale
// is 1 and a zero Speed is DefaultSpeed.
type Options struct {
	// Seed picks the contents of the zones: the same seed gives the same
	// numbers on every device, timings aside.
	Seed uint64
	// Frames is the number of streaming frames, 1 to MaxFrames.
	Frames int
	// Scale multiplies the meshes, meshlet batches, textures and per-draw
	// constants, and what a frame may stream in: 1 to MaxScale.
	Scale int
	// Speed is the camera's speed in zones a frame, above 0 and at most
	// 1; the meshes' changes of detail and rewrites go with it.
	Speed float64
	// Unload is the number of frames of the zone unload after the
	// streaming frames, with shrinking on (0: none, at most MaxFrames).
	Unload int
	// Budget is one byte limit over the managers (package budget; 0:
	// none).
	Budget uint64
	// FlushBytes bounds what a frame streams in, meshes, meshlets and
	// textures together (0: no bound): the mesh Flush first
	// (mesh.Options.MaxFlushBytes), then the meshlets and the textures
	// with what it left, so that no frame's uploads run far past a
	// frame's share of the copy bandwidth. DefaultFlushBytes is the
	// command's default.
	FlushBytes uint64
	// Belt uploads meshes, meshlets, textures and constants through one
	// staging belt ended with each frame's fence, instead of queue writes.
	Belt bool
	// ProfileLabels labels the goroutine's CPU profile samples
	// gpumem=<manager> within a manager's calls and gpumem=demo outside
	// them, for go tool pprof -tagfocus.
	ProfileLabels bool
	// Progress, when not nil, is called after each frame with its number
	// and the number of frames in all (Frames+Unload).
	Progress func(frame, total int)
}

// Limits of Options.
const (
	// MaxFrames bounds Frames and Unload.
	MaxFrames = 100000
	// MaxScale bounds Scale: 1,000 times the scene is about 10 GiB
	// resident.
	MaxScale = 1000
	// DefaultSpeed is one and a half laps of the zones in 300 frames.
	DefaultSpeed = 0.12
	// DefaultFlushBytes is what one mesh Flush takes at most by default.
	// It is above what streams in a frame in the steady state at Speed
	// 0.004 up to Scale 300 or so (about 1 MiB), so that the bound
	// spreads the first frames' burst of loading without holding meshes
	// back afterwards.
	DefaultFlushBytes = 8 << 20
)

// check fills in the defaults and returns an error for a value out of
// range.
func (o *Options) check() error {
	if o.Scale == 0 {
		o.Scale = 1
	}
	if o.Speed == 0 {
		o.Speed = DefaultSpeed
	}
	switch {
	case o.Frames < 1 || o.Frames > MaxFrames:
		return fmt.Errorf("scene: %d frames: want 1 to %d", o.Frames, MaxFrames)
	case o.Scale < 1 || o.Scale > MaxScale:
		return fmt.Errorf("scene: scale %d: want 1 to %d", o.Scale, MaxScale)
	case !(o.Speed > 0 && o.Speed <= 1): // NaN too
		return fmt.Errorf("scene: speed %v: want above 0, at most 1", o.Speed)
	case o.Unload < 0 || o.Unload > MaxFrames:
		return fmt.Errorf("scene: %d unload frames: want 0 to %d", o.Unload, MaxFrames)
	}
	return nil
}

// The scene: demoZones zones on a loop; the camera moves Options.Speed zones
// a frame (one and a half laps in the default 300 frames), and the zones
// within demoViewRadius of it are in view. Each workload streams in up to its
// per-frame budget of items of the zones in view, unloads the others, and
// sweeps.
const (
	demoZones      = 24
	demoViewRadius = 2
	demoSpotChecks = 4 // items read back per workload per frame
)

// demoSweepLimits bounds each manager's sweep per frame.
var demoSweepLimits = arena.SweepLimits{Moves: 48, Bytes: 2 << 20, Steps: 2048}

// A workload is one manager at work in the scene. Plugging in another
// manager is one more implementation of this interface, added to the list
// newWorkloads returns; the frame loop, checks, summary, plots and maps
// take it from there: the maps and the statistics are the managers' own
// (memory.Holder), never rebuilt here.
type workload interface {
	// frame does the frame's work: unload what left the view, stream in
	// part of what is in view, churn, sweep. Every call into a manager is
	// timed on f.gpumem; the workload's own bookkeeping is not.
	frame(f *frameState) error
	// endFrame is told the fence of the submission that carries the
	// frame's work.
	endFrame(f *frameState, fence uint64) error
	// check reads back n live items chosen by rng (every one when n < 0)
	// and compares them with what was written; it returns how many it
	// checked.
	check(rng *rand.Rand, n int) (int, error)
	// memory is the manager, as a dump sees it.
	memory() memory.Holder
	// written returns the bytes the workload has handed its manager to
	// upload since the start (read back, for the pool's).
	written() uint64
	// notes returns lines the summary prints under the table.
	notes() []string
	release()
}

// frameState is what a workload sees of the frame.
type frameState struct {
	n      int
	inView [demoZones]bool
	rng    *rand.Rand
	seed   uint64
	scale  int
	// churn scales the changes a frame makes to what is loaded (levels of
	// detail, rewrites) with the camera's speed: 1 at the default speed.
	churn float64
	// gpumem is the time spent in the managers' calls this frame.
	gpumem *stopwatch
	// names maps an owner's name in the managers' memory (a handle) to
	// the scene's name for it ("zone3/mesh12"), for the maps.
	names map[string]string
	// noLoads stops streaming in (the zone unload's frames), and
	// shrinkPages has the texture registry release its empty pages.
	noLoads, shrinkPages bool
	// uploadBytes is what is left of the frame's upload budget
	// (Options.FlushBytes), which the meshes, the meshlets and the
	// textures share, in that order: the mesh Flush takes up to all of it
	// (mesh.Options.MaxFlushBytes), and the meshlets and the textures
	// load items while some is left (the last item may pass it); no bound
	// when FlushBytes is 0.
	uploadBytes uint64
}

// spendUpload takes n bytes from the frame's upload budget.
func (f *frameState) spendUpload(n uint64) {
	f.uploadBytes -= min(f.uploadBytes, n)
}

// loads returns how many items a workload that streams in perFrame items
// a frame at scale 1 may stream in this frame: none in the zone unload.
func (f *frameState) loads(perFrame int) int {
	if f.noLoads {
		return 0
	}
	return perFrame * f.scale
}

// manager names one of gpumem's managers whose calls the demo times
// apart: the summary and the report break gpumem's time down by them.
type manager int

const (
	mgrMesh     manager = iota // mesh.Allocator: Add, Modify, Remove, Flush, Sweep, Moved
	mgrStaging                 // staging.Belt: EndFrame (with Options.Belt; its uploads are Flush's)
	mgrMeshlet                 // meshlet.Manager: Add, Remove, Arm, Sweep
	mgrBindless                // bindless.Registry: Register, Unregister, Shrink
	mgrRing                    // ring.Buffer: Write, EndFrame
	mgrFrame                   // ring.Frame: Allocate, EndFrame
	mgrPool                    // pool.Pool: Acquire, Put, Evict
	numManagers
)

// managerNames are the managers' names in the summary and the report.
var managerNames = [numManagers]string{"mesh", "staging", "meshlet", "bindless", "ring", "frame arena", "pool"}

// unloadAll calls remove on each item of a zone that left the view, back
// to back, timed as one stretch of manager m's time, as a renderer
// unloading a zone calls them. A workload keeps its own books after it,
// once for the zone: a scan of the demo's lists between the calls would
// leave each call with cold caches, charging the demo's work to gpumem.
// It returns how many items were removed, and the first error.
func unloadAll[T any](f *frameState, m manager, items []T, remove func(T) error) (int, error) {
	if len(items) == 0 {
		return 0, nil
	}
	t := f.gpumem.start(m)
	defer f.gpumem.stop(t)
	for i, x := range items {
		if err := remove(x); err != nil {
			return i, err
		}
	}
	return len(items), nil
}

// stopwatch sums the time spent in gpumem's calls, in all and by manager:
// start before a call, stop after it. What the demo itself does inside a
// call (the lagged device's waits) it takes out with exclude.
type stopwatch struct {
	d   time.Duration
	by  [numManagers]time.Duration
	cur manager
	on  bool
	// labels sets the goroutine's profiler labels at each start and stop
	// (with Options.ProfileLabels).
	labels bool
}

// start begins timing a call into manager m.
func (s *stopwatch) start(m manager) time.Time {
	s.on, s.cur = true, m
	if s.labels {
		pprof.SetGoroutineLabels(managerLabels[m])
	}
	return time.Now()
}

func (s *stopwatch) stop(t time.Time) {
	d := time.Since(t)
	s.d += d
	s.by[s.cur] += d
	s.on = false
	if s.labels {
		pprof.SetGoroutineLabels(demoLabel)
	}
}

// With Options.ProfileLabels, the samples taken in a manager's calls carry the
// label gpumem=<its name>, the others gpumem=demo: go tool pprof
// -tagfocus gpumem=mesh shows the mesh allocator's alone.
var (
	managerLabels [numManagers]context.Context
	demoLabel     = pprof.WithLabels(context.Background(), pprof.Labels("gpumem", "demo"))
)

func init() {
	for m, name := range managerNames {
		managerLabels[m] = pprof.WithLabels(context.Background(), pprof.Labels("gpumem", name))
	}
}

// exclude takes d, spent by the demo within a timed call, out of the
// time.
func (s *stopwatch) exclude(d time.Duration) {
	if s.on {
		s.d -= d
		s.by[s.cur] -= d
	}
}

// reset zeroes the sums: a new frame.
func (s *stopwatch) reset() {
	s.d, s.by = 0, [numManagers]time.Duration{}
}

// categories are what the demo's memory is for, in the order the plot
// of memory by category stacks them.
var categories = []string{"vertex", "index", "meshlet", "texture", "uniform", "scratch", "readback", "ahead"}

// category returns what b's memory is for, by the kind of buffer its
// manager says it is.
func category(b *memory.Buffer) string {
	switch b.Kind {
	case memory.VertexSlab, memory.VertexBuffer:
		return "vertex"
	case memory.IndexSlab, memory.IndexBuffer:
		return "index"
	case memory.MeshletArena:
		return "meshlet"
	case memory.TexturePage:
		return "texture"
	case memory.RingBuffer:
		return "uniform"
	case memory.FrameBlock:
		return "scratch"
	case memory.PoolBuffer:
		return "readback"
	case memory.PreparedBuffer:
		return "ahead"
	}
	return ""
}

// categoryColor is the color of a category in the plots: its owner
// kind's where it has one.
func categoryColor(c string) string {
	switch c {
	case "meshlet":
		return inspect.KindColor("meshlet-data")
	case "uniform":
		return inspect.KindColor("ring")
	case "scratch":
		return "#3d7a76" // a darker ring color
	case "readback":
		return inspect.KindColor("pool")
	case "ahead":
		return "#a0a0a0" // held, not in use yet
	}
	return inspect.KindColor(c)
}

// frameRecord is one frame's numbers, for the plots. Bytes are bytes.
type frameRecord struct {
	capacity, reserved, occupied uint64
	fragmentation                float64
	// Of the frame alone: moves recorded and bytes they moved; bytes
	// uploaded (handed to the managers), copied into grown buffers, and
	// copied into read-back buffers.
	moves, bytesMoved             uint64
	uploaded, grownCopy, readBack uint64
	// streamed is the part of uploaded that loads the scene (meshes,
	// meshlet batches, textures), not the frame's own data (constants,
	// scratch).
	streamed uint64
	// byCategory is the capacity held for each of categories.
	byCategory []uint64
	// budget is the budget's usage at the frame's end (with Options.Budget).
	budget uint64
	// rebind lists the buffers replaced or added in the frame (growths,
	// new slabs, new texture pages): bind groups that use them need
	// rebuilding.
	rebind []string
	live   int
	// dur is the frame's time, gpumem the part of it spent in the
	// managers' calls (the rest is the demo's: making data, bookkeeping,
	// read-back checks, dumps), byManager that part by manager.
	dur, gpumem time.Duration
	byManager   [numManagers]time.Duration
	// gpu is the device's time for the work gpumem recorded in the frame
	// (copies, moves, mips), from GPU timestamps; gpuOK is false on a
	// device without them.
	gpu   time.Duration
	gpuOK bool
}

// Run is what Stream produced: the frames' figures and the memory maps
// the summary and the report show. Its methods only read it.
type Run struct {
	opts    Options
	device  string
	records []frameRecord
	notes   []string
	spot    int // items spot-checked during the run
	final   int // items checked at the end
	maps    []inspect.Dump
	last    inspect.Dump
	total   time.Duration
	limits  device.Limits
	unload  *unloadResult // with Options.Unload
	usage   *budget.Usage // the budget's at the end, with Options.Budget
	// staged is what the mesh Flushes' bound left staged (see
	// Options.FlushBytes).
	staged stagedMeshes
	// err is the error that ended the run at frame len(records)+1; nil
	// when every frame ran and every check passed.
	err error
}

// Stream runs the scene on dev for o.Frames frames of streaming, then
// o.Unload frames of the zone unload, checking by read-back that no byte
// is lost, and returns the run for its summary and report. devName names
// the device in them. It makes every manager it uses on dev (or on a
// budget's accounts of it) and releases them before it returns; dev
// stays the caller's. An error is the first a manager or a check
// returned, with the frame it came in (an *OverBudgetError where the
// budget refused memory); when it came in a frame, the Run is not nil and
// holds the frames before it, for their summary and report.
func Stream(dev device.Device, devName string, o Options) (*Run, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	sw := &stopwatch{labels: o.ProfileLabels}
	if sw.labels {
		pprof.SetGoroutineLabels(demoLabel)
		defer pprof.SetGoroutineLabels(context.Background())
	}
	wo := workloadOptions{dev: dev, shrink: o.Unload > 0, flushBytes: o.FlushBytes, belt: o.Belt, accounts: map[string]*budget.Account{}}
	if o.Budget > 0 {
		b, err := budget.New(dev, budget.Options{Bytes: o.Budget})
		if err != nil {
			return nil, err
		}
		wo.budget = b
	}
	ws, err := newWorkloads(dev, o.Scale, sw, &wo)
	if err != nil {
		return nil, err
	}
	defer func() {
		for i := len(ws) - 1; i >= 0; i-- {
			ws[i].release()
		}
	}()
	holders := make([]memory.Holder, len(ws))
	for i, w := range ws {
		holders[i] = w.memory()
	}
	res := &Run{opts: o, device: devName, limits: dev.Limits()}
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	names := map[string]string{}
	rename := func(r memory.Region) string { return names[r.Name] }
	total := o.Frames + o.Unload
	mapAt := map[int]bool{1: true, (o.Frames + 1) / 2: true, o.Frames: true, total: true}
	// busiest is the dump of the first frame with the most moves: its map
	// shows the sweep at work (moving allocations are striped).
	var prev, busiest inspect.Dump
	var busiestMoves uint64
	var written, streamed, readBack uint64
	// fail ends the run in frame n with err, keeping the frames before n.
	fail := func(n int, err error) (*Run, error) {
		if wo.budget != nil {
			u := wo.budget.Usage()
			res.usage = &u
			if errors.Is(err, budget.ErrOverBudget) {
				err = &OverBudgetError{Frame: n, Usage: u, Err: err}
			}
		}
		if _, ok := err.(*OverBudgetError); !ok {
			err = fmt.Errorf("frame %d: %w", n, err)
		}
		res.err = err
		if f := frameOf(prev); f > 0 {
			res.last = prev
			if len(res.maps) == 0 || frameOf(res.maps[len(res.maps)-1]) != f {
				res.maps = append(res.maps, prev)
			}
		}
		return res, err
	}
	start := time.Now()
	gt := newGPUTimes(dev)
	for n := 1; n <= total; n++ {
		t0 := time.Now()
		sw.reset()
		if err := gt.begin(); err != nil {
			return fail(n, err)
		}
		f := &frameState{n: n, rng: rng, seed: o.Seed, scale: o.Scale, churn: o.Speed / DefaultSpeed, gpumem: sw, names: names, uploadBytes: o.FlushBytes}
		if f.uploadBytes == 0 {
			f.uploadBytes = math.MaxUint64
		}
		cam, radius := float64(n-1)*o.Speed, float64(demoViewRadius)
		if n > o.Frames {
			// The zone unload: the camera stops where it was, the view
			// narrows to the zone under it, nothing streams in, and the
			// meshes change no more.
			cam, radius = float64(o.Frames-1)*o.Speed, demoUnloadView
			f.churn, f.noLoads, f.shrinkPages = 0, true, true
		}
		for z := range demoZones {
			d := math.Abs(float64(z) - math.Mod(cam, demoZones))
			d = min(d, demoZones-d)
			f.inView[z] = d <= radius
			if n == o.Frames+1 && !f.inView[z] && d <= demoViewRadius {
				res.unload.zones++
			}
		}
		if n == o.Frames+1 {
			res.unload.items = liveItems(ws)
		}
		for _, w := range ws {
			if err := w.frame(f); err != nil {
				return fail(n, err)
			}
		}
		if err := gt.end(len(res.records)); err != nil {
			return fail(n, err)
		}
		fence, err := dev.Fence()
		if err != nil {
			return fail(n, fmt.Errorf("submit: %w", err))
		}
		for _, w := range ws {
			if err := w.endFrame(f, fence); err != nil {
				return fail(n, err)
			}
		}
		for _, w := range ws {
			c, err := w.check(rng, demoSpotChecks)
			if err != nil {
				return fail(n, err)
			}
			res.spot += c
		}
		rec := frameRecord{dur: time.Since(t0), gpumem: sw.d, byManager: sw.by}
		if n == o.Frames && o.Unload > 0 {
			res.unload = &unloadResult{at: n + 1, frames: [][]holding{holdings(ws)}}
		}
		if n > o.Frames {
			res.unload.frames = append(res.unload.frames, holdings(ws))
			res.unload.after = liveItems(ws)
		}

		// The frame's memory, as the managers show it.
		d := inspect.Snapshot(devName, "frame "+strconv.Itoa(n), holders...)
		if wo.budget != nil {
			u := wo.budget.Usage()
			d.Budget, rec.budget = &u, u.Bytes
		}
		d.Rename(rename)
		d.MarkMoved(&prev)
		for _, w := range ws {
			if mv, ok := w.(interface{ verifyMoves(*inspect.Dump) error }); ok {
				if err := mv.verifyMoves(&d); err != nil {
					return fail(n, err)
				}
			}
		}
		res.records = append(res.records, record(rec, &d, &prev, n))
		if err := gt.collect(res.records, false); err != nil {
			return fail(n, err)
		}
		r := &res.records[len(res.records)-1]
		for _, w := range ws {
			switch w.(type) {
			case *readbackWorkload:
				r.readBack = w.written() - readBack
				readBack = w.written()
				continue
			case *meshWorkload, *meshletWorkload, *textureWorkload:
				r.streamed += w.written()
			}
			r.uploaded += w.written()
		}
		r.uploaded, written = r.uploaded-written, r.uploaded
		r.streamed, streamed = r.streamed-streamed, r.streamed
		if mapAt[n] {
			res.maps = append(res.maps, d)
		}
		if r.moves > busiestMoves {
			busiestMoves, busiest = r.moves, d
		}
		prev = d
		if o.Progress != nil {
			o.Progress(n, total)
		}
	}
	if err := dev.Wait(); err != nil {
		return nil, fmt.Errorf("wait: %w", err)
	}
	if err := gt.collect(res.records, true); err != nil {
		return nil, err
	}
	res.total = time.Since(start)
	for _, w := range ws {
		if s, ok := w.(interface{ settle() error }); ok {
			if err := s.settle(); err != nil {
				return nil, fmt.Errorf("after the last frame: %w", err)
			}
		}
	}
	for _, w := range ws {
		c, err := w.check(rng, -1)
		if err != nil {
			return nil, fmt.Errorf("final check: %w", err)
		}
		res.final += c
	}
	for _, w := range ws {
		res.notes = append(res.notes, w.notes()...)
		if m, ok := w.(*meshWorkload); ok {
			res.staged = stagedMeshes{frames: m.framesPending, peak: m.peakPending, skipped: m.skipped}
		}
		if t, ok := w.(*textureWorkload); ok && res.unload != nil {
			res.unload.released = t.r.Stats().BytesReleased
		}
	}
	if wo.budget != nil {
		u := wo.budget.Usage()
		res.usage = &u
	}
	res.last = res.maps[len(res.maps)-1]
	if busiestMoves > 0 {
		const most = ", the frame with the most moves"
		if i := slices.IndexFunc(res.maps, func(d inspect.Dump) bool { return frameOf(d) == frameOf(busiest) }); i >= 0 {
			res.maps[i].Label += most // its map is drawn already
		} else {
			busiest.Label += most
			res.maps = append(res.maps, busiest)
			slices.SortStableFunc(res.maps, func(a, b inspect.Dump) int { return frameOf(a) - frameOf(b) })
		}
	}
	return res, nil
}

// record fills in rec, frame n's, from its dump d and the frame before's,
// prev: the totals, the swept buffers' fragmentation, capacity by
// category, the frame's moves, what growths copied, and the buffers that
// grew or are new.
func record(rec frameRecord, d, prev *inspect.Dump, n int) frameRecord {
	t := d.Totals
	rec.capacity, rec.reserved, rec.occupied, rec.live = t.CapacityBytes, t.ReservedBytes, t.OccupiedBytes, t.Allocations
	rec.moves, rec.bytesMoved = t.FrameMoves, t.FrameBytesMoved
	rec.byCategory = make([]uint64, len(categories))
	before := make(map[string]*memory.Buffer, len(prev.Buffers))
	for i := range prev.Buffers {
		before[prev.Buffers[i].Name] = &prev.Buffers[i]
	}
	var frag []memory.Buffer
	for i := range d.Buffers {
		b := &d.Buffers[i]
		if k := slices.Index(categories, category(b)); k >= 0 {
			rec.byCategory[k] += b.CapacityBytes
		}
		if b.Kind.Compacts() {
			frag = append(frag, *b)
		}
		p := before[b.Name]
		if p != nil && b.Stats.BytesCopied >= p.Stats.BytesCopied {
			rec.grownCopy += b.Stats.BytesCopied - p.Stats.BytesCopied
		}
		switch {
		case n == 1 || !b.Kind.Rebinds():
		case p == nil:
			rec.rebind = append(rec.rebind, b.Name+": new")
		case b.Stats.Growths > p.Stats.Growths:
			rec.rebind = append(rec.rebind, fmt.Sprintf("%s: %d grown", b.Name, b.Stats.Growths-p.Stats.Growths))
		}
	}
	rec.fragmentation = memory.Totals(frag).Fragmentation
	return rec
}

// frameOf returns the frame number of a dump labelled by simulate.
func frameOf(d inspect.Dump) int {
	var n int
	fmt.Sscanf(d.Label, "frame %d", &n)
	return n
}

// With a budget, each manager makes its buffers through an account of its
// own (the ring's two allocators share one), made in the order their
// reclaimers are to run: the pool's idle buffers first, then mesh slabs
// and meshlet arenas shrink, then empty texture pages go.
func newWorkloads(dev device.Device, scale int, sw *stopwatch, o *workloadOptions) ([]workload, error) {
	rb, err := newReadbackWorkload(dev, scale, sw, o)
	if err != nil {
		return nil, err
	}
	var ws []workload
	gpu := &lagged{Device: o.device("ring"), sw: sw} // the device as the ring's allocators see it
	for _, mk := range []func() (workload, error){
		func() (workload, error) { return newMeshWorkload(dev, scale, rb, o) },
		func() (workload, error) { return newMeshletWorkload(dev, scale, rb, o) },
		func() (workload, error) { return newTextureWorkload(dev, scale, o) },
		func() (workload, error) { return newConstantsWorkload(gpu, scale, rb, o.sharedBelt) },
		func() (workload, error) { return newScratchWorkload(gpu, rb) },
	} {
		w, err := mk()
		if err != nil {
			for i := len(ws) - 1; i >= 0; i-- {
				ws[i].release()
			}
			rb.release()
			return nil, err
		}
		ws = append(ws, w)
	}
	if o.err != nil {
		for i := len(ws) - 1; i >= 0; i-- {
			ws[i].release()
		}
		rb.release()
		return nil, o.err
	}
	return append(ws, rb), nil
}

// zoneRand returns the random source of zone z's contents for one
// workload: the same zone always holds the same things.
func zoneRand(seed uint64, z int, salt uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed^salt, uint64(z)*0x2545f4914f6cdd1d+1))
}

// logUniform returns an integer between lo and hi, uniform in log scale.
func logUniform(r *rand.Rand, lo, hi int) int {
	return int(math.Exp(math.Log(float64(lo)) + r.Float64()*(math.Log(float64(hi))-math.Log(float64(lo)))))
}

// word is the content of word i of the item with tag: what the demo
// writes and later expects to read back.
func word(tag uint32, i int) uint32 {
	x := uint64(tag)<<32 | uint64(i)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return uint32(x)
}

// fill returns n bytes of item tag's content (byte j is byte j%4 of
// word(tag, j/4), little-endian), in scratch.
func fill(scratch *[]byte, tag uint32, n int) []byte {
	if cap(*scratch) < n {
		*scratch = make([]byte, n)
	}
	b := (*scratch)[:n]
	for i := 0; i < n/4; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], word(tag, i))
	}
	for j := n &^ 3; j < n; j++ {
		b[j] = byte(word(tag, j/4) >> (8 * (j % 4)))
	}
	return b
}

// verify compares got with item tag's content.
func verify(got []byte, tag uint32, what string) error {
	for i := 0; i < len(got)/4; i++ {
		if w := binary.LittleEndian.Uint32(got[4*i:]); w != word(tag, i) {
			return fmt.Errorf("%s: word %d is %#x, wrote %#x: data lost", what, i, w, word(tag, i))
		}
	}
	for j := len(got) &^ 3; j < len(got); j++ {
		if want := byte(word(tag, j/4) >> (8 * (j % 4))); got[j] != want {
			return fmt.Errorf("%s: byte %d is %#x, wrote %#x: data lost", what, j, got[j], want)
		}
	}
	return nil
}

// checkSome checks n items of items chosen by rng, or every one when
// n < 0, and returns how many it checked.
func checkSome[T any](items []T, rng *rand.Rand, n int, check func(T) error) (int, error) {
	if n < 0 {
		for _, it := range items {
			if err := check(it); err != nil {
				return 0, err
			}
		}
		return len(items), nil
	}
	c := 0
	for ; c < n && len(items) > 0; c++ {
		if err := check(items[rng.IntN(len(items))]); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Last returns the dump of the last frame: every manager's buffers, as
// inspect.Snapshot shows them (gpumem map draws it).
func (r *Run) Last() inspect.Dump { return r.last }

// gpuTimes stamps each frame's recorded work on a device with GPU
// timestamps and reads the spans back as they complete.
type gpuTimes struct {
	tm      device.Timer // nil: the device has none
	first   device.Stamp
	pending []gpuSpan // in frame order
}

type gpuSpan struct {
	frame int // index in the records
	span  device.Span
}

func newGPUTimes(dev device.Device) *gpuTimes {
	tm, _ := device.TimerOf(dev)
	return &gpuTimes{tm: tm}
}

// begin stamps the start of a frame's work.
func (g *gpuTimes) begin() error {
	if g.tm == nil {
		return nil
	}
	s, err := g.tm.Stamp()
	if err != nil {
		return fmt.Errorf("gpu time: %w", err)
	}
	g.first = s
	return nil
}

// end stamps the end of the work of the frame whose record will be at
// index frame.
func (g *gpuTimes) end(frame int) error {
	if g.tm == nil {
		return nil
	}
	s, err := g.tm.Stamp()
	if err != nil {
		return fmt.Errorf("gpu time: %w", err)
	}
	g.pending = append(g.pending, gpuSpan{frame, device.Span{Begin: g.first, End: s}})
	return nil
}

// collect writes the times that are back into their records, oldest
// first; with all set, after the device's Wait, every one is back.
func (g *gpuTimes) collect(recs []frameRecord, all bool) error {
	for len(g.pending) > 0 && g.pending[0].frame < len(recs) {
		p := g.pending[0]
		d, ok, err := device.Elapsed(g.tm, p.span)
		if err != nil {
			return fmt.Errorf("gpu time: %w", err)
		}
		if !ok {
			if all {
				return fmt.Errorf("gpu time of frame %d: not back after Wait", p.frame+1)
			}
			return nil
		}
		recs[p.frame].gpu, recs[p.frame].gpuOK = d, true
		g.pending = g.pending[1:]
	}
	return nil
}
