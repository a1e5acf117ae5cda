package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/inspect"
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
            buffer pool (package pool) and released after; idle buffers
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
	fs.Uint64Var(&cfg.seed, "seed", 1, "random `seed` of the scene")
	fs.IntVar(&cfg.frames, "frames", 300, "simulate `N` frames")
	fs.StringVar(&cfg.report, "o", "gpumem-report.html", "write the HTML report to `FILE` (\"\" for none)")
	fs.StringVar(&cfg.dump, "dump", "", "write the last frame's JSON dump to `FILE` (for gpumem map)")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) != 0:
		return usagef("unexpected arguments: %s (demo takes flags only)", strings.Join(rest, " "))
	case cfg.frames < 1 || cfg.frames > 100000:
		return usagef("-frames %d: want 1 to 100000", cfg.frames)
	}
	if err := checkDevice(cfg.device, true); err != nil {
		return err
	}
	// The output files are checked before the simulation, not after it.
	for _, out := range []struct{ flag, name string }{{"-o", cfg.report}, {"-dump", cfg.dump}} {
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
	res, err := simulate(dev, name, cfg, prog)
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
// take it from there.
type workload interface {
	// frame does the frame's work: unload what left the view, stream in
	// part of what is in view, churn, sweep.
	frame(f *frameState) error
	// endFrame is told the fence of the submission that carries the
	// frame's work.
	endFrame(fence uint64) error
	// check reads back n live items chosen by rng (every one when n < 0)
	// and compares them with what was written; it returns how many it
	// checked.
	check(rng *rand.Rand, n int) (int, error)
	// buffers returns the workload's buffers for a dump: allocations moved
	// during the current frame are marked moving.
	buffers() []inspect.Buffer
	// rows returns the workload's summary rows.
	rows() []bufferRow
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
}

// bufferRow sums up one buffer or group of buffers: allocations made and
// bytes written over the run, and the state and history now. Bytes are
// bytes.
type bufferRow struct {
	name    string
	allocs  uint64 // allocations made over the run
	live    int    // live allocations now
	written uint64 // bytes written over the run

	occupied, reserved, capacity uint64
	// free and largest (the sum of each buffer's largest free region) give
	// the fragmentation, when frag says it applies: a manager placing
	// ranges of any size. For one of fixed-size slots (texture layers),
	// a ring or a pool, free space does not fragment.
	free, largest uint64
	frag          bool

	growths, moves, bytesMoved uint64
	// bytesCopied is what growths copied into new buffers; newBuffers
	// counts buffers added beside the old ones (mesh slabs), which also
	// need bind groups.
	bytesCopied, newBuffers uint64

	// category is what the memory is for, in the plot of memory by
	// category: one of categories, or "" for a row whose sub rows say.
	category string

	// sub marks a row breaking the row above it down (a layout of the
	// mesh allocator's): left out of totals and plots, and without
	// history of its own.
	sub bool
}

// categories are what the demo's memory is for, in the order the plot
// of memory by category stacks them.
var categories = []string{"vertex", "index", "meshlet", "texture", "uniform", "scratch", "readback"}

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

// arenaRow returns the row of an arena's statistics st, elemBytes bytes an
// element.
func arenaRow(name, category string, allocs, written uint64, st arena.Stats, elemBytes uint64) bufferRow {
	e := elemBytes
	return bufferRow{name: name, category: category, bytesCopied: st.BytesCopied, allocs: allocs, live: st.Allocations, written: written,
		occupied: st.OccupiedElems * e, reserved: st.ReservedElems * e, capacity: uint64(st.CapacityElems) * e,
		free: uint64(st.FreeElems) * e, largest: uint64(st.LargestFreeElems) * e, frag: true,
		growths: st.Growths, moves: st.Moves, bytesMoved: st.BytesMoved}
}

// frameRecord is one frame's numbers, for the plots. Bytes are bytes.
type frameRecord struct {
	capacity, reserved, occupied uint64
	fragmentation                float64
	// Of the frame alone: moves recorded and bytes they moved; bytes
	// uploaded (written from the CPU), copied into grown buffers, and
	// copied into read-back buffers.
	moves, bytesMoved             uint64
	uploaded, grownCopy, readBack uint64
	// byCategory is the capacity held for each of categories.
	byCategory []uint64
	// rebind lists the buffers replaced or added in the frame (growths,
	// new slabs, new texture pages): bind groups that use them need
	// rebuilding.
	rebind []string
	dur    time.Duration
}

// demoResult is what a run produced.
type demoResult struct {
	cfg      demoConfig
	device   string
	records  []frameRecord
	rows     []bufferRow
	notes    []string
	spot     int // items spot-checked during the run
	final    int // items checked at the end
	maps     []inspect.Dump
	last     inspect.Dump
	total    time.Duration
	peakLive int
	limits   device.Limits
}

// simulate runs the scene for cfg.frames frames on dev.
func simulate(dev device.Device, devName string, cfg demoConfig, prog *progress) (*demoResult, error) {
	ws, err := newWorkloads(dev)
	if err != nil {
		return nil, err
	}
	defer func() {
		for i := len(ws) - 1; i >= 0; i-- {
			ws[i].release()
		}
	}()
	res := &demoResult{cfg: cfg, device: devName, limits: dev.Limits()}
	rng := rand.New(rand.NewPCG(cfg.seed, 0x9e3779b97f4a7c15))
	mapAt := map[int]bool{1: true, (cfg.frames + 1) / 2: true, cfg.frames: true}
	prog.start("demo")
	prev := map[string]bufferRow{}
	// busiest is the dump of the first frame with the most moves: its map
	// shows the sweep at work (moving allocations are striped).
	var busiest inspect.Dump
	var busiestMoves uint64
	start := time.Now()
	for n := 1; n <= cfg.frames; n++ {
		t0 := time.Now()
		f := &frameState{n: n, rng: rng, seed: cfg.seed}
		cam := float64(n-1) * demoSpeed
		for z := range demoZones {
			d := math.Abs(float64(z) - math.Mod(cam, demoZones))
			d = min(d, demoZones-d)
			f.inView[z] = d <= demoViewRadius
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
			if err := w.endFrame(fence); err != nil {
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
		dur := time.Since(t0)
		rec := frameRecord{dur: dur, byCategory: make([]uint64, len(categories))}
		var free, largest uint64
		live := 0
		for _, r := range rowsOf(ws) {
			if i := slices.Index(categories, r.category); i >= 0 {
				rec.byCategory[i] += r.capacity
			}
			if r.sub {
				continue
			}
			p := prev[r.name]
			prev[r.name] = r
			rec.moves += r.moves - p.moves
			rec.bytesMoved += r.bytesMoved - p.bytesMoved
			rec.grownCopy += r.bytesCopied - p.bytesCopied
			if r.category == "readback" {
				rec.readBack += r.written - p.written
			} else {
				rec.uploaded += r.written - p.written
			}
			if g, nb := r.growths-p.growths, r.newBuffers-p.newBuffers; n > 1 && g+nb > 0 && r.category != "readback" {
				what := fmt.Sprintf("%s: %d grown", r.name, g)
				if nb > 0 {
					what += fmt.Sprintf(", %d new", nb)
				}
				rec.rebind = append(rec.rebind, what)
			}
			rec.capacity += r.capacity
			rec.reserved += r.reserved
			rec.occupied += r.occupied
			if r.frag {
				free += r.free
				largest += r.largest
			}
			live += r.live
		}
		rec.fragmentation = frag(largest, free)
		res.records = append(res.records, rec)
		res.peakLive = max(res.peakLive, live)
		if mapAt[n] {
			res.maps = append(res.maps, dumpOf(ws, devName, n))
		}
		if rec.moves > busiestMoves {
			busiestMoves, busiest = rec.moves, dumpOf(ws, devName, n)
		}
		prog.show(bar(n, cfg.frames))
	}
	prog.clear()
	if err := dev.Wait(); err != nil {
		return nil, fmt.Errorf("wait: %w", err)
	}
	res.total = time.Since(start)
	for _, w := range ws {
		c, err := w.check(rng, -1)
		if err != nil {
			return nil, fmt.Errorf("final check: %w", err)
		}
		res.final += c
	}
	res.rows = rowsOf(ws)
	for _, w := range ws {
		res.notes = append(res.notes, w.notes()...)
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

// frameOf returns the frame number of a dump labelled by dumpOf.
func frameOf(d inspect.Dump) int {
	var n int
	fmt.Sscanf(d.Label, "frame %d", &n)
	return n
}

func rowsOf(ws []workload) []bufferRow {
	var rows []bufferRow
	for _, w := range ws {
		rows = append(rows, w.rows()...)
	}
	return rows
}

func dumpOf(ws []workload, devName string, frame int) inspect.Dump {
	var bufs []inspect.Buffer
	for _, w := range ws {
		bufs = append(bufs, w.buffers()...)
	}
	return inspect.New(devName, "frame "+strconv.Itoa(frame), bufs...)
}

// bar draws a progress bar of n out of total.
func bar(n, total int) string {
	const width = 30
	k := n * width / total
	return "[" + strings.Repeat("#", k) + strings.Repeat(".", width-k) + "] frame " + strconv.Itoa(n) + "/" + strconv.Itoa(total)
}

// newWorkloads returns the scene's workloads. The pool's comes last in
// the summary but is made first: the others read back through it.
func newWorkloads(dev device.Device) ([]workload, error) {
	rb, err := newReadbackWorkload(dev)
	if err != nil {
		return nil, err
	}
	var ws []workload
	gpu := &lagged{Device: dev} // the device as the ring's allocators see it
	for _, mk := range []func() (workload, error){
		func() (workload, error) { return newMeshWorkload(dev, rb) },
		func() (workload, error) { return newMeshletWorkload(dev, rb) },
		func() (workload, error) { return newTextureWorkload(dev) },
		func() (workload, error) { return newConstantsWorkload(gpu, rb) },
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

func (r *demoResult) writeSummary(w io.Writer) {
	fmt.Fprintf(w, "gpumem demo: %d frames, seed %d, on %s\n\n", r.cfg.frames, r.cfg.seed, r.device)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "buffer              \tallocations\tlive\twritten\toccupied\treserved\tcapacity\tgrowths\tmoves\tmoved\tfragmentation\t")
	var t bufferRow
	line := func(row bufferRow, fr string) {
		growths, moves, moved := strconv.FormatUint(row.growths, 10), strconv.FormatUint(row.moves, 10), inspect.FormatBytes(row.bytesMoved)
		if row.sub {
			growths, moves, moved = "", "", ""
		}
		fmt.Fprintf(tw, "%-20s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.name, row.allocs, row.live,
			inspect.FormatBytes(row.written), inspect.FormatBytes(row.occupied), inspect.FormatBytes(row.reserved),
			inspect.FormatBytes(row.capacity), growths, moves, moved, fr)
	}
	for _, row := range r.rows {
		fr := "-"
		if row.frag {
			fr = pct(frag(row.largest, row.free))
		}
		line(row, fr)
		if row.sub {
			continue
		}
		if row.frag {
			t.free += row.free
			t.largest += row.largest
		}
		t.allocs += row.allocs
		t.live += row.live
		t.written += row.written
		t.occupied += row.occupied
		t.reserved += row.reserved
		t.capacity += row.capacity
		t.growths += row.growths
		t.moves += row.moves
		t.bytesMoved += row.bytesMoved
	}
	t.name = "total"
	line(t, pct(frag(t.largest, t.free)))
	tw.Flush()
	fmt.Fprintln(w, "(allocations, written, growths, moves and moved: over the whole run; live, occupied, reserved, capacity and\nfragmentation: at the last frame)")
	fmt.Fprintln(w)
	for _, n := range r.notes {
		fmt.Fprintln(w, n)
	}
	var fragSum float64
	var peakMoves uint64
	durs := make([]time.Duration, len(r.records))
	for i, rec := range r.records {
		fragSum += rec.fragmentation
		peakMoves = max(peakMoves, rec.moves)
		durs[i] = rec.dur
	}
	slices.Sort(durs)
	fmt.Fprintf(w, "\nframes: %d; peak live allocations %d; fragmentation mean %s (of the mesh slabs and meshlet arenas); moves per frame mean %.1f, max %d\n",
		len(r.records), r.peakLive, pct(fragSum/float64(len(r.records))), float64(t.moves)/float64(len(r.records)), peakMoves)
	fmt.Fprintf(w, "time per frame: mean %s, median %s, max %s (timings vary from run to run)\n",
		ms(r.total/time.Duration(len(r.records))), ms(durs[len(durs)/2]), ms(durs[len(durs)-1]))
	fmt.Fprintf(w, "read back: %d items spot-checked during the run, and all %d live meshes, batches, textures and blocks of frames in flight at the end: every byte intact\n", r.spot, r.final)
}

func frag(largest, free uint64) float64 {
	if free == 0 || largest >= free {
		return 0
	}
	return 1 - float64(largest)/float64(free)
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
}
