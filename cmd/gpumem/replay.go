package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpumem/gpumem/offset"
	"github.com/gpumem/gpumem/trace"
)

const replayUsage = `usage: gpumem replay [flags] TRACE...

Replay each trace (format v1, gzip-compressed or not) into a fresh offset
allocator of the trace's capacity and report, per trace: the lines executed,
the time per line (median over the repeats of the replay loop alone; parsing
is not timed), the refused allocations, the highest end of any allocation,
and the free space (total and largest region) at the end.

A refused allocation counts as a failure, and its later free is skipped.

Flags:
`

// replayRow is one trace's result; the JSON keys are a stable interface.
type replayRow struct {
	Trace            string  `json:"trace"`
	Ops              int     `json:"ops"`
	Failures         int     `json:"failures"`
	NsPerOp          float64 `json:"ns_per_op"`
	PeakEnd          uint32  `json:"peak_end"`
	FreeAtEnd        uint32  `json:"free_at_end"`
	LargestFreeAtEnd uint32  `json:"largest_free_at_end"`
	AllocsPerOp      float64 `json:"allocs_per_op"`
}

type replayConfig struct {
	json      bool
	repeat    int
	offsets   string
	policy    string
	maxAllocs uint64
}

func runReplay(args []string, stdout, stderr io.Writer) error {
	var cfg replayConfig
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), replayUsage)
		fs.PrintDefaults()
	}
	fs.BoolVar(&cfg.json, "json", false, "print one JSON object per trace instead of a table")
	fs.IntVar(&cfg.repeat, "repeat", 5, "replay each trace `N` times; ns/op is the median")
	fs.StringVar(&cfg.offsets, "offsets", "", "write the offset of each allocation to `FILE` (gzip when it ends in .gz); one TRACE only")
	fs.StringVar(&cfg.policy, "policy", "exact", "placement `policy`: exact (the reference's), fit (also tries the bin below), binround (exact, every request rounded up to its bin first)")
	fs.Uint64Var(&cfg.maxAllocs, "max-allocs", 1<<20, "the allocator's node limit `N` (allocations plus free regions)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return &usageError{msg: err.Error(), reported: true}
	}
	names := fs.Args()
	switch {
	case len(names) == 0:
		return usagef("no TRACE given")
	case cfg.repeat < 1:
		return usagef("-repeat %d: want at least 1", cfg.repeat)
	case cfg.maxAllocs < 2 || cfg.maxAllocs > offset.MaxNodes:
		return usagef("-max-allocs %d: want 2 to %d", cfg.maxAllocs, offset.MaxNodes)
	case cfg.offsets != "" && len(names) > 1:
		return usagef("-offsets takes one TRACE, got %d", len(names))
	}
	policy, round, err := parsePolicy(cfg.policy)
	if err != nil {
		return err
	}

	var rows []replayRow
	enc := json.NewEncoder(stdout)
	progress := newProgress(stderr)
	defer progress.done()
	for _, name := range names {
		row, err := replayOne(name, policy, round, &cfg, progress, stderr)
		if err != nil {
			if !cfg.json {
				progress.done()
				printTable(stdout, rows)
			}
			return err
		}
		if cfg.json {
			if err := enc.Encode(row); err != nil {
				return err
			}
		} else {
			rows = append(rows, row)
		}
	}
	if !cfg.json {
		progress.done()
		fmt.Fprintf(stdout, "policy %s, node limit %d, ns/op median of %d\n", cfg.policy, cfg.maxAllocs, cfg.repeat)
		printTable(stdout, rows)
	}
	return nil
}

func parsePolicy(s string) (p offset.Policy, round bool, err error) {
	switch s {
	case "exact":
		return offset.Exact, false, nil
	case "fit":
		return offset.Fit, false, nil
	case "binround":
		return offset.Exact, true, nil
	}
	return 0, false, usagef("-policy %q: want exact, fit or binround", s)
}

// roundUp is offset.RoundUp, leaving sizes it cannot round as they are
// (the allocator refuses them as too large).
func roundUp(size uint32) uint32 {
	if r, ok := offset.RoundUp(size); ok {
		return r
	}
	return size
}

// replayOne loads one trace and replays it cfg.repeat times.
func replayOne(name string, policy offset.Policy, round bool, cfg *replayConfig, progress *progress, stderr io.Writer) (replayRow, error) {
	progress.start(name)
	progress.show("loading")
	p, err := trace.Load(name)
	if err != nil {
		return replayRow{}, err
	}
	if round {
		p = p.MapSizes(roundUp)
	}
	a, err := offset.NewPolicy(p.Capacity, uint32(cfg.maxAllocs), policy)
	if err != nil {
		return replayRow{}, fmt.Errorf("%s: %w", name, err)
	}
	r, err := trace.NewReplayer(p)
	if err != nil {
		return replayRow{}, err
	}

	times := make([]time.Duration, cfg.repeat)
	var mallocs uint64
	var first, res trace.Result
	var m0, m1 runtime.MemStats
	// Collect the parser's garbage now: the replay loop allocates nothing,
	// so no collection can start during it and none is left running.
	runtime.GC()
	for i := range times {
		progress.show("replay " + strconv.Itoa(i+1) + "/" + strconv.Itoa(cfg.repeat))
		a.Reset()
		runtime.ReadMemStats(&m0)
		t0 := time.Now()
		res, err = r.Run(a)
		times[i] = time.Since(t0)
		runtime.ReadMemStats(&m1)
		if err != nil {
			return replayRow{}, fmt.Errorf("%s: %w", name, err)
		}
		mallocs += m1.Mallocs - m0.Mallocs
		if i == 0 {
			first = res
		} else if res != first {
			return replayRow{}, fmt.Errorf("%s: replay %d gave %+v, replay 1 gave %+v: the allocator is not deterministic", name, i+1, res, first)
		}
	}
	if res.Invalid > 0 {
		progress.clear()
		fmt.Fprintf(stderr, "gpumem replay: %s: %d of the %d failures were not for lack of space (zero or oversize requests, or the node limit of %d)\n",
			name, res.Invalid, res.Failures, cfg.maxAllocs)
	}
	if cfg.offsets != "" {
		progress.show("writing " + cfg.offsets)
		if err := trace.SaveOffsets(cfg.offsets, r.Offsets()); err != nil {
			return replayRow{}, err
		}
	}

	row := replayRow{
		Trace:            name,
		Ops:              res.Ops,
		Failures:         res.Failures,
		PeakEnd:          res.PeakEnd,
		FreeAtEnd:        a.Report().Free,
		LargestFreeAtEnd: a.LargestFree(),
	}
	if res.Ops > 0 {
		slices.Sort(times)
		row.NsPerOp = round3(float64(median(times).Nanoseconds()) / float64(res.Ops))
		row.AllocsPerOp = round3(float64(mallocs) / float64(res.Ops) / float64(cfg.repeat))
	}
	return row, nil
}

// median returns the median of sorted durations.
func median(d []time.Duration) time.Duration {
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return (d[n/2-1] + d[n/2]) / 2
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// printTable prints rows with the trace name left-aligned and the numbers
// right-aligned.
func printTable(w io.Writer, rows []replayRow) {
	header := []string{"trace", "ops", "ns/op", "failures", "peak end", "free at end", "largest free at end"}
	cells := [][]string{header}
	for _, r := range rows {
		cells = append(cells, []string{
			r.Trace,
			strconv.Itoa(r.Ops),
			strconv.FormatFloat(r.NsPerOp, 'f', 1, 64),
			strconv.Itoa(r.Failures),
			strconv.FormatUint(uint64(r.PeakEnd), 10),
			strconv.FormatUint(uint64(r.FreeAtEnd), 10),
			strconv.FormatUint(uint64(r.LargestFreeAtEnd), 10),
		})
	}
	width := make([]int, len(header))
	for _, row := range cells {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	for _, row := range cells {
		b.Reset()
		for i, c := range row {
			if i == 0 {
				b.WriteString(c + strings.Repeat(" ", width[0]-len(c)))
				continue
			}
			b.WriteString("  " + strings.Repeat(" ", width[i]-len(c)) + c)
		}
		fmt.Fprintln(w, b.String())
	}
}

// progress shows what replay is doing on one line of stderr, only when
// stderr is a terminal and only once a trace has taken more than a moment.
type progress struct {
	w     io.Writer // nil when not a terminal
	name  string
	since time.Time
	shown bool
	mute  time.Duration
}

func newProgress(stderr io.Writer) *progress {
	p := &progress{mute: 500 * time.Millisecond}
	if f, ok := stderr.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.w = stderr
		}
	}
	return p
}

// start begins a new trace.
func (p *progress) start(name string) {
	p.name, p.since = name, time.Now()
}

// show reports what is being done, if the trace has run long enough.
func (p *progress) show(what string) {
	if p.w == nil || time.Since(p.since) < p.mute {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s: %s", p.name, what)
	p.shown = true
}

// clear erases the progress line so other output starts clean.
func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

func (p *progress) done() { p.clear() }
