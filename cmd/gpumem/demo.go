package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"html/template"
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
	"github.com/gpumem/gpumem/meshlet"
	"github.com/gpumem/gpumem/offset"
)

const demoUsage = `usage: gpumem demo [flags]

Run a scene-streaming simulation on a device and report what the memory
managers did. A camera travels along a loop of zones; the zones near it
stream in, a few items a frame, and the ones it leaves unload at once:

  meshes    vertex and index data in two arenas (32-byte vertices,
            32-bit indices); meshes also swap level of detail at random
  meshlets  batches of meshlets through the meshlet manager (data words
            and metadata rows in two arenas kept in lockstep)

Every frame the arenas sweep within a budget (armed when the free space
is in pieces), data written is spot-checked by read-back, and at the end
every live allocation is read back and compared with what was written:
the demo proves nothing was lost while things moved.

It prints a summary table on stdout (a progress bar on stderr when that
is a terminal) and writes a self-contained HTML report: memory maps at the
first, middle and last frames and at the frame with the most moves, and plots of occupied vs reserved bytes,
fragmentation (1 - largest free / free) and moves per frame. The same seed
gives the same numbers, except timings.

The device is webgpu when an adapter is found, else host; see gpumem help
devbench for choosing an adapter.

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
	fs.StringVar(&cfg.device, "device", "", "`backend`: host or webgpu (default webgpu when an adapter is found, else host)")
	fs.Uint64Var(&cfg.seed, "seed", 1, "random `seed` of the scene")
	fs.IntVar(&cfg.frames, "frames", 300, "simulate `N` frames")
	fs.StringVar(&cfg.report, "o", "gpumem-report.html", "write the HTML report to `FILE` (\"\" for none)")
	fs.StringVar(&cfg.dump, "dump", "", "write the last frame's JSON dump to `FILE` (for gpumem map)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return &usageError{msg: err.Error(), reported: true}
	}
	switch {
	case fs.NArg() != 0:
		return usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	case cfg.frames < 1 || cfg.frames > 100000:
		return usagef("-frames %d: want 1 to 100000", cfg.frames)
	case cfg.device != "" && cfg.device != "host" && cfg.device != "webgpu":
		return usagef("-device %q: want host or webgpu", cfg.device)
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

// openDemoDevice opens the device kind asks for; "" means webgpu when an
// adapter is found, else host.
func openDemoDevice(kind string) (device.Device, string, error) {
	if kind != "host" {
		d, err := webgpu.New(webgpu.Options{})
		switch {
		case err == nil:
			return d, "webgpu: " + d.Info().String(), nil
		case kind == "webgpu" || !errors.Is(err, webgpu.ErrNoAdapter):
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
	demoSpotChecks = 4 // allocations read back per workload per frame
)

// demoBudget bounds each manager's sweep per frame.
var demoBudget = arena.Budget{Moves: 48, Bytes: 2 << 20, Steps: 2048}

// A workload is one manager at work in the scene. Plugging in another
// manager (mesh slabs, bindless textures, a ring of constants, a buffer
// pool) is one more implementation of this interface, added to the list
// newWorkloads returns; the frame loop, checks, summary, plots and maps
// take it from there.
type workload interface {
	// frame does the frame's work: unload what left the view, stream in
	// part of what is in view, churn, sweep.
	frame(f *frameState) error
	// check reads back n live allocations chosen by rng (every one when
	// n < 0) and compares them with what was written; it returns how
	// many it checked.
	check(rng *rand.Rand, n int) (int, error)
	// buffers returns the workload's buffers for a dump: allocations moved
	// during the current frame are marked moving.
	buffers() []inspect.Buffer
	// rows returns one summary row per buffer.
	rows() []bufferRow
	release()
}

// frameState is what a workload sees of the frame.
type frameState struct {
	n      int
	inView [demoZones]bool
	rng    *rand.Rand
	seed   uint64
}

// bufferRow sums up one buffer: allocations made and bytes written over the
// run, and its arena's statistics now.
type bufferRow struct {
	name, kind string
	allocs     uint64
	written    uint64
	st         arena.Stats
	elemBytes  uint64
}

// frameRecord is one frame's numbers, for the plots.
type frameRecord struct {
	capacity, reserved, occupied uint64
	fragmentation                float64
	moves, bytesMoved            uint64
	dur                          time.Duration
}

// demoResult is what a run produced.
type demoResult struct {
	cfg      demoConfig
	device   string
	records  []frameRecord
	rows     []bufferRow
	spot     int // allocations spot-checked during the run
	final    int // allocations checked at the end
	maps     []inspect.Dump
	last     inspect.Dump
	total    time.Duration
	peakLive int
}

// simulate runs the scene for cfg.frames frames on dev.
func simulate(dev device.Device, devName string, cfg demoConfig, prog *progress) (*demoResult, error) {
	ws, err := newWorkloads(dev)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, w := range ws {
			w.release()
		}
	}()
	res := &demoResult{cfg: cfg, device: devName}
	rng := rand.New(rand.NewPCG(cfg.seed, 0x9e3779b97f4a7c15))
	mapAt := map[int]bool{1: true, (cfg.frames + 1) / 2: true, cfg.frames: true}
	prog.start("demo")
	var prevMoves, prevBytes uint64
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
		if err := dev.Submit(); err != nil {
			return nil, fmt.Errorf("frame %d: submit: %w", n, err)
		}
		for _, w := range ws {
			c, err := w.check(rng, demoSpotChecks)
			if err != nil {
				return nil, fmt.Errorf("frame %d: %w", n, err)
			}
			res.spot += c
		}
		dur := time.Since(t0)
		rec := frameRecord{dur: dur}
		var free, largest uint64
		live := 0
		for _, r := range rowsOf(ws) {
			e := r.elemBytes
			rec.capacity += uint64(r.st.CapacityElems) * e
			rec.reserved += r.st.ReservedElems * e
			rec.occupied += r.st.OccupiedElems * e
			free += uint64(r.st.FreeElems) * e
			largest += uint64(r.st.LargestFreeElems) * e
			rec.moves += r.st.Moves
			rec.bytesMoved += r.st.BytesMoved
			live += r.st.Allocations
		}
		if free > 0 && largest < free {
			rec.fragmentation = 1 - float64(largest)/float64(free)
		}
		rec.moves, prevMoves = rec.moves-prevMoves, rec.moves
		rec.bytesMoved, prevBytes = rec.bytesMoved-prevBytes, rec.bytesMoved
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
	res.last = res.maps[len(res.maps)-1]
	if busiestMoves > 0 && !mapAt[frameOf(busiest)] {
		busiest.Label += fmt.Sprintf(" (the most moves: %d)", busiestMoves)
		res.maps = append(res.maps, busiest)
		slices.SortStableFunc(res.maps, func(a, b inspect.Dump) int { return frameOf(a) - frameOf(b) })
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

func newWorkloads(dev device.Device) ([]workload, error) {
	m, err := newMeshWorkload(dev)
	if err != nil {
		return nil, err
	}
	ml, err := newMeshletWorkload(dev)
	if err != nil {
		m.release()
		return nil, err
	}
	return []workload{m, ml}, nil
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

// fill returns n bytes of item tag's content, in scratch.
func fill(scratch *[]byte, tag uint32, n int) []byte {
	if cap(*scratch) < n {
		*scratch = make([]byte, n)
	}
	b := (*scratch)[:n]
	for i := 0; i < n/4; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], word(tag, i))
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
	return nil
}

// ---- meshes: vertex and index arenas ----

const (
	vertexBytes = 32
	meshSalt    = 0x6d657368
)

type mesh struct {
	zone       int
	name       string
	vtx, idx   arena.Handle
	tagV, tagI uint32
}

type meshWorkload struct {
	dev                device.Device
	vtx, idx           *arena.Arena
	zones              [demoZones]meshZone
	live               []*mesh // in load order
	owner              map[arena.Handle]*mesh
	moved              map[arena.Handle]int // handle -> frame of its last move
	frameN             int
	nextTag            uint32
	allocsV, allocsI   uint64
	writtenV, writtenI uint64
	scratch            []byte
}

// meshZone is one zone's meshes: their sizes (vertices, indices) and how
// many are loaded.
type meshZone struct {
	sizes  [][2]int
	loaded []*mesh
}

func newMeshWorkload(dev device.Device) (*meshWorkload, error) {
	w := &meshWorkload{dev: dev, owner: map[arena.Handle]*mesh{}, moved: map[arena.Handle]int{}}
	onMove := func(m arena.Move) { w.moved[m.Handle] = w.frameN }
	var err error
	w.vtx, err = arena.New(dev, arena.Options{Label: "meshes/vertex", ElemSize: vertexBytes, Usage: device.Vertex,
		InitialElems: 16 << 10, RoundToBins: true, Budget: demoBudget, OnMove: onMove})
	if err != nil {
		return nil, err
	}
	w.idx, err = arena.New(dev, arena.Options{Label: "meshes/index", ElemSize: 4, Usage: device.Index,
		InitialElems: 128 << 10, RoundToBins: true, Budget: demoBudget, OnMove: onMove})
	if err != nil {
		w.vtx.Release()
		return nil, err
	}
	return w, nil
}

func (w *meshWorkload) release() { w.vtx.Release(); w.idx.Release() }

func (w *meshWorkload) frame(f *frameState) error {
	w.frameN = f.n
	for z := range demoZones {
		zn := &w.zones[z]
		if zn.sizes == nil {
			r := zoneRand(f.seed, z, meshSalt)
			zn.sizes = make([][2]int, 8+r.IntN(17))
			for i := range zn.sizes {
				v := logUniform(r, 48, 12000)
				zn.sizes[i] = [2]int{v, 3 * (v + r.IntN(v)) / 2}
			}
		}
		if !f.inView[z] {
			for _, m := range zn.loaded {
				if err := w.unload(m); err != nil {
					return err
				}
			}
			zn.loaded = zn.loaded[:0]
		}
	}
	// Stream in: up to 5 meshes a frame, nearest zones first (in zone
	// order, which is deterministic).
	budget := 5
	for z := range demoZones {
		zn := &w.zones[z]
		for f.inView[z] && budget > 0 && len(zn.loaded) < len(zn.sizes) {
			i := len(zn.loaded)
			m, err := w.load(z, fmt.Sprintf("zone%d/mesh%d", z, i), zn.sizes[i][0], zn.sizes[i][1])
			if err != nil {
				return err
			}
			zn.loaded = append(zn.loaded, m)
			budget--
		}
	}
	// Level of detail: two random meshes swap to a finer or coarser
	// version (free, then allocate the new size).
	for range 2 {
		if len(w.live) == 0 {
			break
		}
		old := w.live[f.rng.IntN(len(w.live))]
		zn := &w.zones[old.zone]
		k := slices.Index(zn.loaded, old)
		v := w.verts(old)
		nv := v * 2
		if f.rng.IntN(2) == 0 || nv > 24000 {
			nv = max(24, v/2)
		}
		if err := w.unload(old); err != nil {
			return err
		}
		m, err := w.load(old.zone, old.name, nv, 3*nv/2+f.rng.IntN(nv))
		if err != nil {
			return err
		}
		zn.loaded[k] = m
	}
	return sweepArena(w.vtx, w.idx)
}

// verts returns a live mesh's vertex count.
func (w *meshWorkload) verts(m *mesh) int {
	n, _ := w.vtx.Elems(m.vtx)
	return int(n)
}

// sweepArena arms a sweep in each arena whose free space is mostly in
// pieces, and takes one budgeted sweep step in each.
func sweepArena(as ...*arena.Arena) error {
	for _, a := range as {
		if !a.Armed() && fragmented(a.Stats()) {
			a.Arm()
		}
		if _, err := a.Sweep(arena.Budget{}); err != nil {
			return err
		}
	}
	return nil
}

func (w *meshWorkload) load(z int, name string, verts, indices int) (*mesh, error) {
	m := &mesh{zone: z, name: name}
	var err error
	if m.vtx, err = w.vtx.Allocate(uint32(verts)); err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	if m.idx, err = w.idx.Allocate(uint32(indices)); err != nil {
		w.vtx.Free(m.vtx)
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	w.nextTag += 2
	m.tagV, m.tagI = w.nextTag, w.nextTag+1
	if err := w.vtx.Write(m.vtx, 0, fill(&w.scratch, m.tagV, verts*vertexBytes)); err != nil {
		return nil, err
	}
	if err := w.idx.Write(m.idx, 0, fill(&w.scratch, m.tagI, indices*4)); err != nil {
		return nil, err
	}
	w.allocsV++
	w.allocsI++
	w.writtenV += uint64(verts * vertexBytes)
	w.writtenI += uint64(indices * 4)
	w.owner[m.vtx], w.owner[m.idx] = m, m
	w.live = append(w.live, m)
	return m, nil
}

func (w *meshWorkload) unload(m *mesh) error {
	if err := w.vtx.Free(m.vtx); err != nil {
		return err
	}
	if err := w.idx.Free(m.idx); err != nil {
		return err
	}
	delete(w.owner, m.vtx)
	delete(w.owner, m.idx)
	delete(w.moved, m.vtx)
	delete(w.moved, m.idx)
	w.live = slices.DeleteFunc(w.live, func(x *mesh) bool { return x == m })
	return nil
}

func (w *meshWorkload) check(rng *rand.Rand, n int) (int, error) {
	if n < 0 {
		return checkAll(w.live, w.checkOne)
	}
	c := 0
	for range n {
		if len(w.live) == 0 {
			break
		}
		if err := w.checkOne(w.live[rng.IntN(len(w.live))]); err != nil {
			return c, err
		}
		c++
	}
	return c, nil
}

// checkAll checks every item.
func checkAll[T any](items []T, check func(T) error) (int, error) {
	for _, it := range items {
		if err := check(it); err != nil {
			return 0, err
		}
	}
	return len(items), nil
}

func (w *meshWorkload) checkOne(m *mesh) error {
	for _, p := range []struct {
		a   *arena.Arena
		h   arena.Handle
		tag uint32
		k   string
	}{{w.vtx, m.vtx, m.tagV, "vertices"}, {w.idx, m.idx, m.tagI, "indices"}} {
		n, err := p.a.Elems(p.h)
		if err != nil {
			return err
		}
		got := make([]byte, int(n)*int(p.a.ElemSize()))
		if err := p.a.Read(p.h, 0, got); err != nil {
			return err
		}
		if err := verify(got, p.tag, m.name+" "+p.k); err != nil {
			return err
		}
	}
	return nil
}

func (w *meshWorkload) buffers() []inspect.Buffer {
	owner := func(kind string) func(arena.Handle) inspect.Owner {
		return func(h arena.Handle) inspect.Owner {
			o := inspect.Owner{Kind: kind, Moving: w.moved[h] == w.frameN}
			if m := w.owner[h]; m != nil {
				o.Name = m.name
			}
			return o
		}
	}
	v := inspect.FromArena("meshes/vertex", w.vtx, owner("vertex"))
	i := inspect.FromArena("meshes/index", w.idx, owner("index"))
	return []inspect.Buffer{v, i}
}

func (w *meshWorkload) rows() []bufferRow {
	return []bufferRow{
		{"meshes/vertex", "vertex", w.allocsV, w.writtenV, w.vtx.Stats(), vertexBytes},
		{"meshes/index", "index", w.allocsI, w.writtenI, w.idx.Stats(), 4},
	}
}

// ---- meshlets: the meshlet manager ----

const (
	meshletRowWords = 4 // address, words, meshlet index, tag
	meshletSalt     = 0x6d6c6574
)

type meshletBatch struct {
	zone  int
	name  string
	h     meshlet.BatchHandle
	tag   uint32
	words int
	rel   []uint32 // each row's relative address
}

type meshletWorkload struct {
	dev      device.Device
	m        *meshlet.Manager
	zones    [demoZones]meshletZone
	live     []*meshletBatch
	byHandle map[meshlet.BatchHandle]*meshletBatch
	moved    map[meshlet.BatchHandle]int
	frameN   int
	nextTag  uint32
	allocs   uint64
	written  [2]uint64 // data, rows
	scratch  []byte
}

type meshletZone struct {
	sizes  [][2]int // meshlets, words per meshlet
	loaded []*meshletBatch
}

func newMeshletWorkload(dev device.Device) (*meshletWorkload, error) {
	w := &meshletWorkload{dev: dev, byHandle: map[meshlet.BatchHandle]*meshletBatch{}, moved: map[meshlet.BatchHandle]int{}}
	m, err := meshlet.New(dev, meshlet.Options{Label: "meshlets", RowWords: meshletRowWords, AddressWord: 0,
		Data:      arena.Options{InitialElems: 128 << 10, RoundToBins: true},
		Rows:      arena.Options{InitialElems: 4 << 10, RoundToBins: true},
		Budget:    demoBudget,
		OnChanged: func(h meshlet.BatchHandle) { w.moved[h] = w.frameN },
	})
	if err != nil {
		return nil, err
	}
	w.m = m
	return w, nil
}

func (w *meshletWorkload) release() { w.m.Release() }

func (w *meshletWorkload) frame(f *frameState) error {
	w.frameN = f.n
	for z := range demoZones {
		zn := &w.zones[z]
		if zn.sizes == nil {
			r := zoneRand(f.seed, z, meshletSalt)
			zn.sizes = make([][2]int, 4+r.IntN(9))
			for i := range zn.sizes {
				zn.sizes[i] = [2]int{logUniform(r, 8, 160), 24 + r.IntN(100)}
			}
		}
		if !f.inView[z] {
			for _, b := range zn.loaded {
				if err := w.unload(b); err != nil {
					return err
				}
			}
			zn.loaded = zn.loaded[:0]
		}
	}
	budget := 3
	for z := range demoZones {
		zn := &w.zones[z]
		for f.inView[z] && budget > 0 && len(zn.loaded) < len(zn.sizes) {
			i := len(zn.loaded)
			b, err := w.load(z, fmt.Sprintf("zone%d/batch%d", z, i), zn.sizes[i][0], zn.sizes[i][1], f.rng)
			if err != nil {
				return err
			}
			zn.loaded = append(zn.loaded, b)
			budget--
		}
	}
	// Arm a sweep when either arena's free space is mostly in pieces.
	st := w.m.Stats()
	if !w.m.Armed() && (fragmented(st.Data) || fragmented(st.Rows)) {
		w.m.Arm()
	}
	_, err := w.m.Sweep(arena.Budget{})
	return err
}

// fragmented reports whether an arena's free space is worth a sweep: more
// than an eighth of its capacity, and less than half of it in one piece.
func fragmented(st arena.Stats) bool {
	return st.FreeElems > st.CapacityElems/8 && st.LargestFreeElems < st.FreeElems/2
}

func (w *meshletWorkload) load(z int, name string, meshlets, wordsPer int, rng *rand.Rand) (*meshletBatch, error) {
	w.nextTag++
	b := &meshletBatch{zone: z, name: name, tag: w.nextTag}
	// Meshlets of wordsPer words, give or take a quarter.
	var data []uint32
	rows := make([]uint32, 0, meshlets*meshletRowWords)
	for i := range meshlets {
		n := wordsPer*3/4 + rng.IntN(wordsPer/2+1)
		b.rel = append(b.rel, uint32(len(data)))
		rows = append(rows, uint32(len(data)), uint32(n), uint32(i), b.tag)
		for range n {
			data = append(data, word(b.tag, len(data)))
		}
	}
	b.words = len(data)
	h, err := w.m.Add(data, rows)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	b.h = h
	w.allocs++
	w.written[0] += uint64(4 * len(data))
	w.written[1] += uint64(4 * len(rows))
	w.byHandle[h] = b
	w.live = append(w.live, b)
	return b, nil
}

func (w *meshletWorkload) unload(b *meshletBatch) error {
	if err := w.m.Remove(b.h); err != nil {
		return err
	}
	delete(w.byHandle, b.h)
	delete(w.moved, b.h)
	w.live = slices.DeleteFunc(w.live, func(x *meshletBatch) bool { return x == b })
	return nil
}

func (w *meshletWorkload) check(rng *rand.Rand, n int) (int, error) {
	if n < 0 {
		return checkAll(w.live, w.checkOne)
	}
	c := 0
	for range n {
		if len(w.live) == 0 {
			break
		}
		if err := w.checkOne(w.live[rng.IntN(len(w.live))]); err != nil {
			return c, err
		}
		c++
	}
	return c, nil
}

// checkOne reads a batch's data and rows back: the data as written, every
// row as written but for its address word, which must be the data's
// offset now plus the row's relative address.
func (w *meshletWorkload) checkOne(b *meshletBatch) error {
	p, err := w.m.Lookup(b.h)
	if err != nil {
		return err
	}
	data, rows := w.m.Buffers()
	got := make([]byte, 4*b.words)
	if err := w.dev.ReadBuffer(data, 4*uint64(p.DataOffset), got); err != nil {
		return err
	}
	if err := verify(got, b.tag, b.name+" data"); err != nil {
		return err
	}
	rb := make([]byte, 4*meshletRowWords*len(b.rel))
	if err := w.dev.ReadBuffer(rows, 4*meshletRowWords*uint64(p.RowOffset), rb); err != nil {
		return err
	}
	for i, rel := range b.rel {
		addr := binary.LittleEndian.Uint32(rb[16*i:])
		tag := binary.LittleEndian.Uint32(rb[16*i+12:])
		if addr != p.DataOffset+rel || tag != b.tag {
			return fmt.Errorf("%s row %d: address %d tag %d, want %d and %d: data lost", b.name, i, addr, tag, p.DataOffset+rel, b.tag)
		}
	}
	return nil
}

func (w *meshletWorkload) buffers() []inspect.Buffer {
	st := w.m.Stats()
	var data, rows []inspect.Region
	rw := uint64(4 * meshletRowWords)
	for _, b := range w.live {
		p, err := w.m.Lookup(b.h)
		if err != nil {
			continue
		}
		state := inspect.StateUsed
		if w.moved[b.h] == w.frameN {
			state = inspect.StateMoving
		}
		data = append(data, inspect.Region{Offset: 4 * uint64(p.DataOffset), Size: 4 * uint64(binRound(p.DataWords)),
			Used: 4 * uint64(p.DataWords), State: state, Kind: "meshlet-data", Name: b.name})
		rows = append(rows, inspect.Region{Offset: rw * uint64(p.RowOffset), Size: rw * uint64(binRound(p.Meshlets)),
			Used: rw * uint64(p.Meshlets), State: state, Kind: "meshlet-rows", Name: b.name})
	}
	db, err1 := inspect.NewBuffer("meshlets/data", "meshlet", 4*uint64(st.Data.CapacityElems), data)
	rb, err2 := inspect.NewBuffer("meshlets/rows", "meshlet", rw*uint64(st.Rows.CapacityElems), rows)
	if err := errors.Join(err1, err2); err != nil {
		panic("demo: meshlet placements overlap: " + err.Error()) // the manager's invariant broke
	}
	db.ElemBytes, rb.ElemBytes = 4, uint32(rw)
	return []inspect.Buffer{db.WithHistory(inspect.ArenaHistory(st.Data)), rb.WithHistory(inspect.ArenaHistory(st.Rows))}
}

// binRound is the size the arenas (RoundToBins) hold for a request.
func binRound(n uint32) uint32 {
	r, ok := offset.RoundUp(n)
	if !ok {
		return n
	}
	return r
}

func (w *meshletWorkload) rows() []bufferRow {
	st := w.m.Stats()
	return []bufferRow{
		{"meshlets/data", "meshlet-data", w.allocs, w.written[0], st.Data, 4},
		{"meshlets/rows", "meshlet-rows", w.allocs, w.written[1], st.Rows, 4 * meshletRowWords},
	}
}

// ---- output ----

func (r *demoResult) writeSummary(w io.Writer) {
	fmt.Fprintf(w, "gpumem demo: %d frames, seed %d, on %s\n\n", r.cfg.frames, r.cfg.seed, r.device)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "buffer        \tallocations\tlive\twritten\toccupied\treserved\tcapacity\tgrowths\tmoves\tmoved\tfragmentation\t")
	var t struct {
		allocs, written, occ, res, capb, growths, moves, moved, free, largest uint64
		live                                                                  int
	}
	for _, row := range r.rows {
		e := row.elemBytes
		st := row.st
		free, largest := uint64(st.FreeElems)*e, uint64(st.LargestFreeElems)*e
		fmt.Fprintf(tw, "%-14s\t%d\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t\n", row.name, row.allocs, st.Allocations,
			inspect.FormatBytes(row.written), inspect.FormatBytes(st.OccupiedElems*e), inspect.FormatBytes(st.ReservedElems*e),
			inspect.FormatBytes(uint64(st.CapacityElems)*e), st.Growths, st.Moves, inspect.FormatBytes(st.BytesMoved),
			pct(frag(largest, free)))
		t.allocs += row.allocs
		t.live += st.Allocations
		t.written += row.written
		t.occ += st.OccupiedElems * e
		t.res += st.ReservedElems * e
		t.capb += uint64(st.CapacityElems) * e
		t.growths += st.Growths
		t.moves += st.Moves
		t.moved += st.BytesMoved
		t.free += free
		t.largest += largest
	}
	fmt.Fprintf(tw, "%-14s\t%d\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t\n", "total", t.allocs, t.live, inspect.FormatBytes(t.written),
		inspect.FormatBytes(t.occ), inspect.FormatBytes(t.res), inspect.FormatBytes(t.capb), t.growths, t.moves,
		inspect.FormatBytes(t.moved), pct(frag(t.largest, t.free)))
	tw.Flush()
	var fragSum float64
	var peakMoves uint64
	durs := make([]time.Duration, len(r.records))
	for i, rec := range r.records {
		fragSum += rec.fragmentation
		peakMoves = max(peakMoves, rec.moves)
		durs[i] = rec.dur
	}
	slices.Sort(durs)
	fmt.Fprintf(w, "\nframes: %d; peak live allocations %d; fragmentation mean %s; moves per frame mean %.1f, max %d\n",
		len(r.records), r.peakLive, pct(fragSum/float64(len(r.records))), float64(t.moves)/float64(len(r.records)), peakMoves)
	fmt.Fprintf(w, "time per frame: mean %s, median %s, max %s (timings vary from run to run)\n",
		ms(r.total/time.Duration(len(r.records))), ms(durs[len(durs)/2]), ms(durs[len(durs)-1]))
	fmt.Fprintf(w, "read back: %d allocations spot-checked during the run, and all %d live meshes and batches at the end: every byte intact\n", r.spot, r.final)
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

// writeReport writes the HTML report: the summary, plots over frames and
// the memory maps.
func (r *demoResult) writeReport(w io.Writer) error {
	var sum strings.Builder
	r.writeSummary(&sum)
	n := len(r.records)
	series := func(f func(frameRecord) float64) []float64 {
		v := make([]float64, n)
		for i, rec := range r.records {
			v[i] = f(rec)
		}
		return v
	}
	plots := []inspect.Plot{
		{Title: "Memory: occupied vs reserved vs capacity", Unit: inspect.UnitBytes, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
			{Name: "capacity", Color: "#909ca8", Values: series(func(f frameRecord) float64 { return float64(f.capacity) })},
			{Name: "reserved", Color: inspect.KindColor("index"), Values: series(func(f frameRecord) float64 { return float64(f.reserved) })},
			{Name: "occupied", Color: inspect.KindColor("vertex"), Fill: true, Values: series(func(f frameRecord) float64 { return float64(f.occupied) })},
		}},
		{Title: "Fragmentation: 1 - largest free / free (all buffers)", Unit: inspect.UnitRatio, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
			{Name: "fragmentation", Color: inspect.KindColor("texture"), Fill: true, Values: series(func(f frameRecord) float64 { return f.fragmentation })},
		}},
		{Title: "Moves per frame (sweeps and compactions)", Unit: inspect.UnitCount, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
			{Name: "moves", Color: inspect.KindColor("meshlet-data"), Fill: true, Values: series(func(f frameRecord) float64 { return float64(f.moves) })},
		}},
		{Title: "Bytes moved per frame", Unit: inspect.UnitBytes, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
			{Name: "bytes moved", Color: inspect.KindColor("meshlet-rows"), Fill: true, Values: series(func(f frameRecord) float64 { return float64(f.bytesMoved) })},
		}},
		{Title: "Time per frame (CPU, including device waits for read-back checks)", Unit: inspect.UnitMillis, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
			{Name: "time", Color: "#5f6b76", Values: series(func(f frameRecord) float64 { return float64(f.dur) / float64(time.Millisecond) })},
		}},
	}
	type mapSection struct {
		Label      string
		SVG, Table template.HTML
	}
	var maps []mapSection
	for i := range r.maps {
		d := &r.maps[i]
		svg, err := inspect.MapSVG(d)
		if err != nil {
			return err
		}
		table, err := inspect.StatsTable(d.Buffers, d.Totals)
		if err != nil {
			return err
		}
		maps = append(maps, mapSection{Label: d.Label, SVG: svg, Table: table})
	}
	var plotSVG []template.HTML
	for i := range plots {
		plotSVG = append(plotSVG, plots[i].SVG())
	}
	return reportPage.Execute(w, struct {
		Frames  int
		Seed    uint64
		Device  string
		Summary string
		Style   template.CSS
		Plots   []template.HTML
		Maps    []mapSection
		Last    mapSection
	}{r.cfg.frames, r.cfg.seed, r.device, sum.String(), inspect.PageStyle, plotSVG, maps, maps[len(maps)-1]})
}

var reportPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>gpumem demo report</title>
<style>{{.Style}}
pre{background:#f3f5f7;padding:12px;font-size:12px;overflow-x:auto}</style>
</head>
<body>
<h1>gpumem demo report</h1>
<p class="muted">{{.Frames}} frames of scene streaming, seed {{.Seed}}, on {{.Device}}.
Zones of meshes (vertex and index arenas) and meshlet batches (the meshlet manager) stream in and out as a camera circles a loop of zones;
arenas sweep within a budget each frame; written data is read back and checked.</p>
<pre>{{.Summary}}</pre>
<h2>Memory at the last frame</h2>
{{with .Last}}{{.SVG}}{{end}}
<p class="muted">One bar per buffer, to its own scale. Allocations are colored by owner kind; the lighter part of one is bin-rounding slack;
striped allocations moved during that frame; gray is free. Hover over a region for its owner, offset and size.</p>
<h2>Over time</h2>
{{range .Plots}}{{.}}
{{end}}
<h2>Memory maps</h2>
{{range .Maps}}<h2>{{.Label}}</h2>
{{.SVG}}
{{.Table}}
{{end}}
</body>
</html>
`))
