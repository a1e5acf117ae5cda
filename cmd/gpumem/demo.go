package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/scene"
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

-flush-bytes SIZE bounds what a frame streams in (8 MiB by default, 0 for
no bound): the mesh Flush takes up to all of it (mesh.Options.MaxFlushBytes),
the meshlets then the textures what it leaves; the rest waits, so a burst of
loading spreads over frames. A mesh no Flush has taken yet is left out of
the spot checks (it is not resident, or holds its old data), and after the
last frame the demo flushes until none is staged, so the final check reads
every mesh back.
-belt uploads meshes, meshlets, textures and constants through one staging
belt (Options.Belt of mesh, meshlet, bindless; ring's) ended each frame,
instead of queue writes: on a discrete GPU it is much faster, on the host
device slower, so it is the default on a GPU and off on the host device;
-belt=false or -belt=true chooses.

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

// demoConfig is what the flags choose: the run (scene.Options) and
// where it goes.
type demoConfig struct {
	scene.Options
	device     string
	report     string
	dump       string
	cpuprofile string
}

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), demoUsage)
		fs.PrintDefaults()
	}
	var cfg demoConfig
	fs.StringVar(&cfg.device, "device", "", deviceFlagHelp+" (default webgpu when an adapter is found, else host)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random `seed` of the scene")
	fs.IntVar(&cfg.Frames, "frames", 300, "simulate `N` frames")
	fs.StringVar(&cfg.report, "o", "gpumem-report.html", "write the HTML report to `FILE` (\"\" for none)")
	fs.StringVar(&cfg.dump, "dump", "", "write the last frame's JSON dump to `FILE` (for gpumem map)")
	fs.IntVar(&cfg.Scale, "scale", 1, "`N` times the meshes, meshlet batches, textures and per-draw constants of the scene, and what may stream in a frame")
	fs.Float64Var(&cfg.Speed, "speed", scene.DefaultSpeed, "the camera moves `Z` zones a frame (the meshes' changes of detail and rewrites go with it): what streams in a second is about proportional to scale times speed")
	fs.IntVar(&cfg.Unload, "unload", 0, "end with a zone unload and `N` frames of shrinking after it (see above)")
	fs.Func("budget", "keep the managers under one limit of `SIZE` bytes (64MiB, 512KiB; a bare number is MiB)", func(s string) error {
		n, err := parseSize(s)
		cfg.Budget = n
		return err
	})
	cfg.FlushBytes = scene.DefaultFlushBytes
	fs.Func("flush-bytes", "a frame streams in about `SIZE` bytes at most, meshes (mesh.Options.MaxFlushBytes) then meshlets then textures (the rest waits for the next frames); 0 for no bound (default 8MiB)", func(s string) error {
		if s == "0" {
			cfg.FlushBytes = 0
			return nil
		}
		n, err := parseSize(s)
		cfg.FlushBytes = n
		return err
	})
	fs.BoolVar(&cfg.Belt, "belt", false, "upload meshes, meshlets, textures and constants through a staging belt (Options.Belt of mesh, meshlet and bindless, ring.BufferOptions.Belt) instead of queue writes (default true on a GPU, false on the host device)")
	fs.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the run (the frames and the final check) to `FILE`, for go tool pprof")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) != 0:
		return usagef("unexpected arguments: %s (demo takes flags only)", strings.Join(rest, " "))
	case cfg.Frames < 1 || cfg.Frames > scene.MaxFrames:
		return usagef("-frames %d: want 1 to %d", cfg.Frames, scene.MaxFrames)
	case cfg.Scale < 1 || cfg.Scale > scene.MaxScale:
		return usagef("-scale %d: want 1 to %d", cfg.Scale, scene.MaxScale)
	case !(cfg.Speed > 0 && cfg.Speed <= 1): // NaN too
		return usagef("-speed %v: want above 0, at most 1", cfg.Speed)
	case cfg.Unload < 0 || cfg.Unload > scene.MaxFrames:
		return usagef("-unload %d: want 0 to %d", cfg.Unload, scene.MaxFrames)
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
	if !flagSet(fs, "belt") {
		_, cfg.Belt = dev.(*webgpu.Device)
	}

	prog := newProgress(stderr)
	prog.mute = 0 // a demo's bar shows from the first frame
	prog.start("demo")
	cfg.Progress = func(n, total int) { prog.show(bar(n, total)) }
	cfg.ProfileLabels = cfg.cpuprofile != ""
	var res *scene.Run
	err = profile(cfg.cpuprofile, func() error {
		var err error
		res, err = scene.Stream(dev, name, cfg.Options)
		return err
	})
	prog.clear()
	if res == nil {
		return err
	}
	// A run that stopped in a frame still has its summary and report,
	// of the frames before.
	res.WriteSummary(stdout)
	if cfg.report != "" {
		var b bytes.Buffer
		if rerr := res.WriteReport(&b); rerr != nil {
			return errors.Join(err, rerr)
		}
		if werr := os.WriteFile(cfg.report, b.Bytes(), 0o644); werr != nil {
			return errors.Join(err, werr)
		}
		fmt.Fprintf(stdout, "report: %s\n", cfg.report)
	}
	var obe *scene.OverBudgetError
	if errors.As(err, &obe) {
		prog.start("the run again without a limit, for its peak")
		need, nerr := scene.NeededBudget(dev, name, cfg.Options)
		prog.clear()
		if nerr != nil {
			return errors.Join(err, nerr)
		}
		return fmt.Errorf("%w\nThe device had room: -budget %s is what ran out. Without a limit the run peaks at %s: -budget %sMiB or more passes.",
			err, inspect.FormatBytes(obe.Usage.Limit), inspect.FormatBytes(need), strconv.FormatFloat(math.Ceil(float64(need)/(1<<20)*10)/10, 'f', -1, 64))
	}
	if err != nil {
		return err
	}
	if cfg.dump != "" {
		var b bytes.Buffer
		last := res.Last()
		if err := last.WriteJSON(&b); err != nil {
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

// bar draws a progress bar of n out of total.
func bar(n, total int) string {
	const width = 30
	k := n * width / total
	return "[" + strings.Repeat("#", k) + strings.Repeat(".", width-k) + "] frame " + strconv.Itoa(n) + "/" + strconv.Itoa(total)
}

// parseSize parses a -budget value: a number of bytes with a unit (B,
// KiB, MiB, GiB; K, M, G are the same), or of MiB without one.
func parseSize(s string) (uint64, error) {
	num := strings.TrimRight(s, "BKMGibk")
	unit := s[len(num):]
	mult := map[string]float64{"": 1 << 20, "B": 1, "K": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MiB": 1 << 20, "G": 1 << 30, "GiB": 1 << 30}[unit]
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || mult == 0 || !(f > 0) || f*mult > 1<<50 {
		return 0, fmt.Errorf("%q: want a size such as 64MiB, 512KiB or 24 (MiB)", s)
	}
	return uint64(math.Round(f * mult)), nil
}
