package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/budget"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
)

const demoUsage = `usage: gpumem demo [flags]

Run a scene-streaming simulation on a device and report what gpumem's
memory managers did. A camera travels along a loop of zones; the zones near
it stream in, a few items a frame, and the ones it leaves unload at once.
Each manager has its workload:

  meshes    the mesh allocator (package mesh): vertex arrays of strides
            12, 20, 24 and 6 bytes and 16- and 32-bit index arrays packed
            into slabs per layout; meshes swap level of detail (re-placed)
            and rewrite their vertices in place; one Flush a frame, then a
            budgeted Sweep
  meshlets  batches of meshlets through the meshlet manager (package
            meshlet: data words and metadata rows in two arenas kept in
            lockstep), swept within a budget each frame
  textures  each zone's textures registered and unregistered in the
            bindless registry (package bindless): layers of shared pages
  constants per-frame constants (camera, zones, draws) written through the
            ring buffer (package ring), each frame ended with its fence
  scratch   per-frame vertices (debug lines, particles) bumped through the
            frame arena (package ring): a block per frame in flight
  readback  every read-back check copies into a buffer leased from the
            buffer pool (package pool) and put back after; idle buffers
            are evicted after 20 frames

Data written is spot-checked by read-back every frame, and at the end
every live mesh, batch and texture, and the data of the frames in
flight, is read back and compared with what was written: the demo proves
nothing was lost while things moved.

It prints a summary table on stdout (a progress bar on stderr when that
is a terminal) and writes a self-contained HTML report: contents; plots
over the frames (capacity, reserved and occupied bytes; capacity by
category, stacked; bytes uploaded, moved, copied by growth and read back;
moves; fragmentation; time), with the values on hover and markers where a
buffer grew or was added; each buffer against the device's limits, with
its usage flags; and memory maps at the first, middle and last frames and
at the frame with the most moves, each with what that frame moved. The same seed gives the same numbers on every
device, except timings: the ring buffer and the frame arena see the GPU
two frames behind (three frames in flight) whatever its pace.

Every map and every figure of memory is the managers' own: each frame is
one inspect.Snapshot of them (what a program of yours gets in one call).

-scale N runs the same scene with N times the meshes, meshlet batches,
textures and per-draw constants, streaming N times as much a frame; -speed
slows the camera (and the meshes' changes of detail with it), so what
streams in a second can be set apart from what is resident. The time of
every call into gpumem (Flush, Sweep, Moved, Add and Remove, ring and pool
calls, registry updates) is measured apart from the demo's own work (making
data, checks, bookkeeping, dumps); the summary gives both, median and 99th
percentile, over the whole run and its second half, and a table breaks
gpumem's time down by manager (mesh, staging, meshlet, bindless, ring,
frame arena, pool; the report plots it frame by frame). At -scale 300
-speed 0.004 about 1.1 GiB is resident and over 64 MiB streams in a second
at 60 frames a second.

-flush-bytes SIZE bounds what one mesh Flush places and uploads
(mesh.Options.MaxFlushBytes, 8 MiB by default, 0 for no bound): the meshes
staged past it wait for the next frames' Flushes, so the first frames'
burst of loading spreads over frames. A mesh no Flush has taken yet is
left out of the spot checks (it is not resident, or holds its old data),
and after the last frame the demo flushes until none is staged, so the
final check reads every mesh back. -belt uploads the meshes and the
constants through one staging belt (mesh.Options.Belt,
ring.BufferOptions.Belt) ended with each frame's fence: on a discrete
GPU much faster than queue writes (on an H200 at -scale 300, gpumem's
median time per frame 1.28 ms with queue writes, 0.74 ms with -belt);
on the host device slower.

-cpuprofile FILE writes a CPU profile of the run; the samples taken in a
manager's calls carry the label gpumem=<manager>, the demo's own
gpumem=demo: go tool pprof -tags FILE splits the time, and -tagfocus
gpumem=bindless shows one manager's.

-unload N ends the run with a zone unload: the camera stops, the view
narrows to the zone under it, so the other zones in view unload (most of
what is loaded), nothing streams in any more, and N more frames run with
shrinking on: mesh slabs and meshlet arenas whose occupancy stays low (60%
and 45%) for 60 frames move into smaller buffers, and the texture pages no
texture uses any more are released. The summary gives, per manager, the
bytes its buffers hold against those its data occupies, before and after,
and the frame from which they hold at most 1.15 times it.

-budget SIZE puts the managers under one byte limit (package budget): each
makes its buffers and textures through an account of its own, and a
request that would pass the limit first asks the others for memory back
(the pool's idle buffers, then mesh slabs and meshlet arenas shrinking,
then empty texture pages); one that still does not fit ends the run with
the error. The summary, the dumps and the report show usage against the
limit.

The device is webgpu when an adapter is found, else host (pure Go memory);
-device picks one: host, webgpu, or webgpu on a backend (vulkan, metal on
macOS, dx12 on Windows, gl), as in gpumem devbench.

Flags:
`

// demoConfig is what the flags choose.
type demoConfig struct {
	device string
	seed   uint64
	frames int
	report string
	dump   string
	// scale multiplies the scene's meshes, meshlet batches, textures and
	// per-draw constants, and what a frame may stream in.
	scale int
	// speed is the camera's speed in zones a frame; the meshes' level of
	// detail changes and rewrites go with it.
	speed float64
	// unload is the number of frames of the zone unload after the
	// streaming frames (0: none); budget the byte limit over the managers
	// (0: none).
	unload int
	budget uint64
	// flushBytes bounds what one mesh Flush takes (0: no bound); belt
	// gives the mesh allocator a staging belt; cpuprofile is where a CPU
	// profile of the run goes ("": none).
	flushBytes uint64
	belt       bool
	cpuprofile string
}

// demoFlushBytes is -flush-bytes' default: what one mesh Flush takes at
// most. It is above what streams in a frame in the steady state at
// -speed 0.004 up to -scale 300 or so (about 1 MiB), so that the bound
// spreads the first frames' burst of loading without holding meshes back
// afterwards.
const demoFlushBytes = 8 << 20

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), demoUsage)
		fs.PrintDefaults()
	}
	var cfg demoConfig
	fs.StringVar(&cfg.device, "device", "", deviceFlagHelp+" (default webgpu when an adapter is found, else host)")
	fs.Uint64Var(&cfg.seed, "seed", 1, "random `seed` of the scene")
	fs.IntVar(&cfg.frames, "frames", 300, "simulate `N` frames")
	fs.StringVar(&cfg.report, "o", "gpumem-report.html", "write the HTML report to `FILE` (\"\" for none)")
	fs.StringVar(&cfg.dump, "dump", "", "write the last frame's JSON dump to `FILE` (for gpumem map)")
	fs.IntVar(&cfg.scale, "scale", 1, "`N` times the meshes, meshlet batches, textures and per-draw constants of the scene, and what may stream in a frame")
	fs.Float64Var(&cfg.speed, "speed", demoSpeed, "the camera moves `Z` zones a frame (the meshes' changes of detail and rewrites go with it): what streams in a second is about proportional to scale times speed")
	fs.IntVar(&cfg.unload, "unload", 0, "end with a zone unload and `N` frames of shrinking after it (see above)")
	fs.Func("budget", "keep the managers under one limit of `SIZE` bytes (64MiB, 512KiB; a bare number is MiB)", func(s string) error {
		n, err := parseSize(s)
		cfg.budget = n
		return err
	})
	cfg.flushBytes = demoFlushBytes
	fs.Func("flush-bytes", "one mesh Flush places and uploads about `SIZE` bytes at most (mesh.Options.MaxFlushBytes; the rest waits for the next frames); 0 for no bound (default 8MiB)", func(s string) error {
		if s == "0" {
			cfg.flushBytes = 0
			return nil
		}
		n, err := parseSize(s)
		cfg.flushBytes = n
		return err
	})
	fs.BoolVar(&cfg.belt, "belt", false, "upload meshes and constants through a staging belt (mesh.Options.Belt, ring.BufferOptions.Belt) instead of queue writes")
	fs.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the run (the frames and the final check) to `FILE`, for go tool pprof")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) != 0:
		return usagef("unexpected arguments: %s (demo takes flags only)", strings.Join(rest, " "))
	case cfg.frames < 1 || cfg.frames > 100000:
		return usagef("-frames %d: want 1 to 100000", cfg.frames)
	case cfg.scale < 1 || cfg.scale > maxScale:
		return usagef("-scale %d: want 1 to %d", cfg.scale, maxScale)
	case !(cfg.speed > 0 && cfg.speed <= 1): // NaN too
		return usagef("-speed %v: want above 0, at most 1", cfg.speed)
	case cfg.unload < 0 || cfg.unload > 100000:
		return usagef("-unload %d: want 0 to 100000", cfg.unload)
	}
	if err := checkDevice(cfg.device, true); err != nil {
		return err
	}
	// The output files are checked before the simulation, not after it.
	for _, out := range []struct{ flag, name string }{{"-o", cfg.report}, {"-dump", cfg.dump}, {"-cpuprofile", cfg.cpuprofile}} {
		if out.name == "" {
			continue
		}
		if err := checkWritable(out.name); err != nil {
			return fmt.Errorf("%s: %w", out.flag, err)
		}
	}
	dev, name, err := openDemoDevice(cfg.device)
	if err != nil {
		return err
	}
	defer dev.Release()

	prog := newProgress(stderr)
	prog.mute = 0 // a demo's bar shows from the first frame
	var res *demoResult
	err = profile(cfg.cpuprofile, func() error {
		var err error
		res, err = simulate(dev, name, cfg, prog)
		return err
	})
	if err != nil {
		return err
	}
	res.writeSummary(stdout)
	if cfg.report != "" {
		var b bytes.Buffer
		if err := res.writeReport(&b); err != nil {
			return err
		}
		if err := os.WriteFile(cfg.report, b.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "report: %s\n", cfg.report)
	}
	if cfg.dump != "" {
		var b bytes.Buffer
		if err := res.last.WriteJSON(&b); err != nil {
			return err
		}
		if err := os.WriteFile(cfg.dump, b.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "dump: %s (draw it with: gpumem map %s -o map.html)\n", cfg.dump, cfg.dump)
	}
	return nil
}

// profile runs f, with a CPU profile written to file when it is not "".
func profile(file string, f func() error) error {
	if file == "" {
		return f()
	}
	out, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	err = f()
	pprof.StopCPUProfile()
	if cerr := out.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("-cpuprofile: %w", cerr)
	}
	return err
}

// openDemoDevice opens the device kind asks for (a -device value); ""
// means webgpu when an adapter is found, else host.
func openDemoDevice(kind string) (device.Device, string, error) {
	if kind != "host" {
		d, err := openWebGPU(kind, webgpu.Options{})
		switch {
		case err == nil:
			return d, "webgpu: " + d.Info().String(), nil
		case kind != "" || !errors.Is(err, webgpu.ErrNoAdapter):
			return nil, "", fmt.Errorf("open webgpu device: %w", err)
		}
	}
	d, err := host.New(host.Options{})
	if err != nil {
		return nil, "", fmt.Errorf("open host device: %w", err)
	}
	return d, "host (pure Go)", nil
}

// The scene: demoZones zones on a loop; the camera moves demoSpeed zones
// a frame (one and a half laps in the default 300 frames), and the zones
// within demoViewRadius of it are in view. Each workload streams in up to its
// per-frame budget of items of the zones in view, unloads the others, and
// sweeps.
const (
	demoZones      = 24
	demoSpeed      = 0.12
	demoViewRadius = 2
	demoSpotChecks = 4 // items read back per workload per frame
)

// demoBudget bounds each manager's sweep per frame.
var demoBudget = arena.Budget{Moves: 48, Bytes: 2 << 20, Steps: 2048}

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
}

// manager names one of gpumem's managers whose calls the demo times
// apart: the summary and the report break gpumem's time down by them.
type manager int

const (
	mgrMesh     manager = iota // mesh.Allocator: Add, Modify, Remove, Flush, Sweep, Moved
	mgrStaging                 // staging.Belt: EndFrame (with -belt; its uploads are Flush's)
	mgrMeshlet                 // meshlet.Manager: Add, Remove, Arm, Sweep
	mgrBindless                // bindless.Registry: Register, Unregister, Shrink
	mgrRing                    // ring.Buffer: Write, EndFrame
	mgrFrame                   // ring.Frame: Allocate, EndFrame
	mgrPool                    // pool.Pool: Acquire, Put, Evict
	numManagers
)

// managerNames are the managers' names in the summary and the report.
var managerNames = [numManagers]string{"mesh", "staging", "meshlet", "bindless", "ring", "frame arena", "pool"}

// stopwatch sums the time spent in gpumem's calls, in all and by manager:
// start before a call, stop after it. What the demo itself does inside a
// call (the lagged device's waits) it takes out with exclude.
type stopwatch struct {
	d   time.Duration
	by  [numManagers]time.Duration
	cur manager
	on  bool
	// labels sets the goroutine's profiler labels at each start and stop
	// (with -cpuprofile).
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

// With -cpuprofile, the samples taken in a manager's calls carry the
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

// maxScale bounds -scale: 1,000 times the scene is about 10 GiB resident.
const maxScale = 1000

// categories are what the demo's memory is for, in the order the plot
// of memory by category stacks them.
var categories = []string{"vertex", "index", "meshlet", "texture", "uniform", "scratch", "readback"}

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
	// budget is the budget's usage at the frame's end (with -budget).
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
}

// demoResult is what a run produced.
type demoResult struct {
	cfg     demoConfig
	device  string
	records []frameRecord
	notes   []string
	spot    int // items spot-checked during the run
	final   int // items checked at the end
	maps    []inspect.Dump
	last    inspect.Dump
	total   time.Duration
	limits  device.Limits
	unload  *unloadResult // with -unload
	usage   *budget.Usage // the budget's at the end, with -budget
}

// simulate runs the scene for cfg.frames frames on dev.
func simulate(dev device.Device, devName string, cfg demoConfig, prog *progress) (*demoResult, error) {
	sw := &stopwatch{labels: cfg.cpuprofile != ""}
	if sw.labels {
		pprof.SetGoroutineLabels(demoLabel)
		defer pprof.SetGoroutineLabels(context.Background())
	}
	wo := workloadOptions{dev: dev, shrink: cfg.unload > 0, flushBytes: cfg.flushBytes, belt: cfg.belt, accounts: map[string]*budget.Account{}}
	if cfg.budget > 0 {
		b, err := budget.New(dev, budget.Options{Bytes: cfg.budget})
		if err != nil {
			return nil, err
		}
		wo.budget = b
	}
	ws, err := newWorkloads(dev, cfg.scale, sw, &wo)
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
	res := &demoResult{cfg: cfg, device: devName, limits: dev.Limits()}
	rng := rand.New(rand.NewPCG(cfg.seed, 0x9e3779b97f4a7c15))
	names := map[string]string{}
	rename := func(r memory.Region) string { return names[r.Name] }
	total := cfg.frames + cfg.unload
	mapAt := map[int]bool{1: true, (cfg.frames + 1) / 2: true, cfg.frames: true, total: true}
	prog.start("demo")
	// busiest is the dump of the first frame with the most moves: its map
	// shows the sweep at work (moving allocations are striped).
	var prev, busiest inspect.Dump
	var busiestMoves uint64
	var written, streamed, readBack uint64
	start := time.Now()
	for n := 1; n <= total; n++ {
		t0 := time.Now()
		sw.reset()
		f := &frameState{n: n, rng: rng, seed: cfg.seed, scale: cfg.scale, churn: cfg.speed / demoSpeed, gpumem: sw, names: names}
		cam, radius := float64(n-1)*cfg.speed, float64(demoViewRadius)
		if n > cfg.frames {
			// The zone unload: the camera stops where it was, the view
			// narrows to the zone under it, nothing streams in, and the
			// meshes change no more.
			cam, radius = float64(cfg.frames-1)*cfg.speed, demoUnloadView
			f.churn, f.noLoads, f.shrinkPages = 0, true, true
		}
		for z := range demoZones {
			d := math.Abs(float64(z) - math.Mod(cam, demoZones))
			d = min(d, demoZones-d)
			f.inView[z] = d <= radius
			if n == cfg.frames+1 && !f.inView[z] && d <= demoViewRadius {
				res.unload.zones++
			}
		}
		if n == cfg.frames+1 {
			res.unload.items = liveItems(ws)
		}
		for _, w := range ws {
			if err := w.frame(f); err != nil {
				return nil, fmt.Errorf("frame %d: %w", n, err)
			}
		}
		fence, err := dev.Fence()
		if err != nil {
			return nil, fmt.Errorf("frame %d: submit: %w", n, err)
		}
		for _, w := range ws {
			if err := w.endFrame(f, fence); err != nil {
				return nil, fmt.Errorf("frame %d: %w", n, err)
			}
		}
		for _, w := range ws {
			c, err := w.check(rng, demoSpotChecks)
			if err != nil {
				return nil, fmt.Errorf("frame %d: %w", n, err)
			}
			res.spot += c
		}
		rec := frameRecord{dur: time.Since(t0), gpumem: sw.d, byManager: sw.by}
		if n == cfg.frames && cfg.unload > 0 {
			res.unload = &unloadResult{at: n + 1, frames: [][]holding{holdings(ws)}}
		}
		if n > cfg.frames {
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
					return nil, fmt.Errorf("frame %d: %w", n, err)
				}
			}
		}
		res.records = append(res.records, record(rec, &d, &prev, n))
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
		prog.show(bar(n, total))
	}
	prog.clear()
	if err := dev.Wait(); err != nil {
		return nil, fmt.Errorf("wait: %w", err)
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

// bar draws a progress bar of n out of total.
func bar(n, total int) string {
	const width = 30
	k := n * width / total
	return "[" + strings.Repeat("#", k) + strings.Repeat(".", width-k) + "] frame " + strconv.Itoa(n) + "/" + strconv.Itoa(total)
}

// newWorkloads returns the scene's workloads at scale. The pool's comes
// last in the summary but is made first: the others read back through it.
//
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

// ---- output ----

// group returns the summary row of buffer name: its name without the
// number that tells a manager's buffers of one kind apart ("#3", "block
// 2", "(retired 1)"), and a texture page's without its number and key
// ("page 4 (...)" becomes "pages").
func group(name string) string {
	return groupSuffix.ReplaceAllStringFunc(name, func(s string) string {
		if strings.HasPrefix(s, " page ") {
			return " pages"
		}
		return ""
	})
}

var groupSuffix = regexp.MustCompile(`( #\d+| block \d+| \(retired \d+\)| page \d+ \(.*\))$`)

func (r *demoResult) writeSummary(w io.Writer) {
	scale := ""
	if r.cfg.scale > 1 {
		scale = fmt.Sprintf(", scale %d", r.cfg.scale)
	}
	if r.cfg.unload > 0 {
		scale += fmt.Sprintf(", then %d of a zone unload", r.cfg.unload)
	}
	if r.cfg.budget > 0 {
		scale += ", budget " + inspect.FormatBytes(r.cfg.budget)
	}
	fmt.Fprintf(w, "gpumem demo: %d frames, seed %d%s, on %s\n\n", r.cfg.frames, r.cfg.seed, scale, r.device)
	// One row per group of buffers of the last frame, in the dump's order.
	var names []string
	rows := map[string][]memory.Buffer{}
	for _, b := range r.last.Buffers {
		g := group(b.Name)
		if rows[g] == nil {
			names = append(names, g)
		}
		rows[g] = append(rows[g], b)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "buffers                                  \tcount\tlive\toccupied\treserved\tcapacity\tgrowths\tmoves\tmoved\tfragmentation\t")
	line := func(name string, bufs []memory.Buffer) {
		t := memory.Totals(bufs)
		fr := "-"
		if bufs[0].Kind.Compacts() || name == "total" {
			if name == "total" {
				var sw []memory.Buffer
				for _, b := range r.last.Buffers {
					if b.Kind.Compacts() {
						sw = append(sw, b)
					}
				}
				t.Fragmentation = memory.Totals(sw).Fragmentation
			}
			fr = pct(t.Fragmentation)
		}
		fmt.Fprintf(tw, "%-41s\t%d\t%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t\n", name, t.Buffers, t.Allocations,
			inspect.FormatBytes(t.OccupiedBytes), inspect.FormatBytes(t.ReservedBytes), inspect.FormatBytes(t.CapacityBytes),
			t.Growths, t.Moves, inspect.FormatBytes(t.BytesMoved), fr)
	}
	for _, g := range names {
		line(g, rows[g])
	}
	line("total", r.last.Buffers)
	tw.Flush()
	fmt.Fprintln(w, "(the managers' buffers at the last frame, as they show them; growths, moves and moved: over each live buffer's life;\nfragmentation: of the mesh slabs and meshlet arenas)")
	fmt.Fprintln(w)
	for _, n := range r.notes {
		fmt.Fprintln(w, n)
	}
	var fragSum float64
	var peakMoves, moves, uploaded, streamed, peakOccupied uint64
	peakLive := 0
	for _, rec := range r.records {
		fragSum += rec.fragmentation
		peakMoves = max(peakMoves, rec.moves)
		moves += rec.moves
		uploaded += rec.uploaded
		streamed += rec.streamed
		peakOccupied = max(peakOccupied, rec.occupied)
		peakLive = max(peakLive, rec.live)
	}
	nf := uint64(len(r.records))
	// The second half of the run streams at the steady rate: the first
	// loads the zones in view from nothing.
	var late uint64
	for _, rec := range r.records[nf/2:] {
		late += rec.streamed
	}
	fmt.Fprintf(w, "\nframes: %d; peak live allocations %d; fragmentation mean %s (of the mesh slabs and meshlet arenas); moves per frame mean %.1f, max %d\n",
		nf, peakLive, pct(fragSum/float64(nf)), float64(moves)/float64(nf), peakMoves)
	fmt.Fprintf(w, "resident: %s occupied at the last frame, %s at the peak; streamed in (meshes, meshlets, textures): %s a frame on average,\n"+
		"  %s a second at 60 frames a second (%s a second over the second half of the run); uploaded in all, with constants and scratch: %s a frame\n",
		inspect.FormatBytes(r.last.Totals.OccupiedBytes), inspect.FormatBytes(peakOccupied), inspect.FormatBytes(streamed/nf),
		inspect.FormatBytes(60*streamed/nf), inspect.FormatBytes(60*late/(nf-nf/2)), inspect.FormatBytes(uploaded/nf))
	times := func(what string, recs []frameRecord) {
		durs, gpu := make([]time.Duration, len(recs)), make([]time.Duration, len(recs))
		for i, rec := range recs {
			durs[i], gpu[i] = rec.dur, rec.gpumem
		}
		fmt.Fprintf(w, "time per frame, %s: median %s, 99th percentile %s, max %s; in gpumem's calls (Flush, Sweep, ring, pool, registry): median %s, 99th percentile %s, max %s\n",
			what, ms(quantile(durs, 0.5)), ms(quantile(durs, 0.99)), ms(quantile(durs, 1)), ms(quantile(gpu, 0.5)), ms(quantile(gpu, 0.99)), ms(quantile(gpu, 1)))
	}
	times("all frames", r.records)
	times("second half", r.records[nf/2:])
	fmt.Fprintln(w, "  (the rest of a frame is the demo's: making data, checks read back, bookkeeping; timings vary from run to run)")
	r.writeManagerTimes(w)
	if r.unload != nil {
		r.unload.write(w)
	}
	if r.usage != nil {
		d := inspect.Dump{Budget: r.usage}
		fmt.Fprintf(w, "\n%s\n", d.BudgetLine())
	}
	fmt.Fprintf(w, "read back: %d items spot-checked during the run, and all %d live meshes, batches, textures and blocks of frames in flight at the end: every byte intact\n", r.spot, r.final)
}

// writeManagerTimes prints gpumem's time per frame by manager: median,
// 99th percentile and max over all frames and over the second half, each
// manager's own (a manager's p99 frame need not be another's), and the
// share of gpumem's time over the run.
func (r *demoResult) writeManagerTimes(w io.Writer) {
	var total time.Duration
	for _, rec := range r.records {
		total += rec.gpumem
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "gpumem's time per frame by manager (each manager's own quantiles; share: of gpumem's time over the run):")
	fmt.Fprintln(tw, "  manager     \tall frames: median\t99th percentile\tmax\tsecond half: median\t99th percentile\tmax\tshare\t")
	nf := len(r.records)
	for m := range numManagers {
		var sum time.Duration
		for _, rec := range r.records {
			sum += rec.byManager[m]
		}
		if sum == 0 && m == mgrStaging {
			continue // no belt
		}
		q := func(recs []frameRecord) [3]time.Duration {
			ds := make([]time.Duration, len(recs))
			for i, rec := range recs {
				ds[i] = rec.byManager[m]
			}
			return [3]time.Duration{quantile(ds, 0.5), quantile(ds, 0.99), quantile(ds, 1)}
		}
		all, late := q(r.records), q(r.records[nf/2:])
		share := 0.0
		if total > 0 {
			share = float64(sum) / float64(total)
		}
		fmt.Fprintf(tw, "  %-12s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", managerNames[m], ms3(all[0]), ms3(all[1]), ms3(all[2]),
			ms3(late[0]), ms3(late[1]), ms3(late[2]), pct(share))
	}
	tw.Flush()
}

// quantile returns the q-quantile of ds (nearest rank; 1 is the max),
// sorting ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	slices.Sort(ds)
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

// ms3 is ms to the microsecond.
func ms3(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64) + " ms"
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
}
