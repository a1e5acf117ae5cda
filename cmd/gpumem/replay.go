package main

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
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
The exact policy refuses what the reference OffsetAllocator refuses, even
with the room: a free region is filed in the bin its size rounds down to
and a request looked up from the bin its size rounds up to, so in an empty
allocator of capacity 1000 "a 1 1000" is refused (1000 files in the bin of
960 and is looked up from the bin of 1024). Capacities and requests that
are bin sizes (see offset.RoundUp) meet exactly; -policy fit serves such
requests too.

An offsets file (NAME.offsets.gz, a line per allocation: its offset, or
"-" when refused, as -offsets writes) is not a trace: given with its trace
(NAME.trace.gz), it checks the replay under -policy exact, offset by offset,
and a difference is a failure; given alone it is skipped with a note, so
gpumem replay testdata/traces/* replays every trace and checks each against
the reference's answers. A trace that fails to load or replay is reported
and the others still run; the exit status is then 1.

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
	// ReferenceOffsets is the check of the replay against an offsets file
	// given beside the trace: "match", or how many offsets differ.
	ReferenceOffsets string `json:"reference_offsets,omitempty"`
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
	names, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	traces, check, skipped := pairOffsets(names)
	switch {
	case len(names) == 0:
		return usagef("no TRACE given")
	case len(traces) == 0:
		return usagef("no TRACE given, only offsets files (%s): name their traces too", strings.Join(skipped, ", "))
	case cfg.repeat < 1:
		return usagef("-repeat %d: want at least 1", cfg.repeat)
	case cfg.maxAllocs < 2 || cfg.maxAllocs > offset.MaxNodes:
		return usagef("-max-allocs %d: want 2 to %d", cfg.maxAllocs, offset.MaxNodes)
	case cfg.offsets != "" && len(traces) > 1:
		return usagef("-offsets takes one TRACE, got %d", len(traces))
	}
	policy, round, err := parsePolicy(cfg.policy)
	if err != nil {
		return err
	}
	if cfg.offsets != "" {
		if err := checkWritable(cfg.offsets); err != nil {
			return fmt.Errorf("-offsets: %w", err)
		}
	}
	for _, name := range skipped {
		fmt.Fprintf(stderr, "gpumem replay: %s: an offsets file (an allocator's answers to a trace), not a trace: skipped; name its trace too to check the replay against it\n", name)
	}
	if len(check) > 0 && (cfg.policy != "exact" || cfg.maxAllocs != 1<<20) {
		fmt.Fprintf(stderr, "gpumem replay: offsets files not checked: they hold the reference allocator's answers, which -policy exact gives with the node limit %d\n", 1<<20)
		check = nil
	}

	var rows []replayRow
	var failed []string
	enc := json.NewEncoder(stdout)
	progress := newProgress(stderr)
	defer progress.done()
	for _, name := range traces {
		row, err := replayOne(name, policy, round, check[name], &cfg, progress, stderr)
		if err != nil && len(traces) == 1 && !errors.Is(err, errOffsetsFile) {
			return err
		}
		if err != nil {
			// One bad trace does not stop the others.
			progress.clear()
			fmt.Fprintf(stderr, "gpumem replay: %v\n", err)
			if !errors.Is(err, errOffsetsFile) {
				failed = append(failed, name)
			}
			continue
		}
		if row.ReferenceOffsets != "" && row.ReferenceOffsets != "match" {
			failed = append(failed, name)
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
	switch {
	case len(failed) == 1 && len(traces) == 1:
		return fmt.Errorf("%s: replay differs from %s", failed[0], check[failed[0]])
	case len(failed) > 0:
		return fmt.Errorf("%d of %d traces failed: %s", len(failed), len(traces), strings.Join(failed, ", "))
	}
	return nil
}

// errOffsetsFile is replayOne's error for an offsets file given as a trace
// under another name: skipped, not a failure.
var errOffsetsFile = errors.New("an offsets file (a number a line), not a trace: skipped")

// isOffsetsFile reports whether name is an offsets file by its name
// (NAME.offsets or NAME.offsets.gz), and returns NAME.
func isOffsetsFile(name string) (base string, ok bool) {
	for _, ext := range []string{".offsets.gz", ".offsets"} {
		if b, ok := strings.CutSuffix(name, ext); ok {
			return b, true
		}
	}
	return "", false
}

// pairOffsets splits names into traces and offsets files. An offsets file
// whose trace (NAME.trace.gz or NAME.trace) is among the names checks that
// trace's replay (check maps the trace to it); the others are skipped.
func pairOffsets(names []string) (traces []string, check map[string]string, skipped []string) {
	given := map[string]bool{}
	for _, n := range names {
		given[n] = true
	}
	check = map[string]string{}
	for _, n := range names {
		base, ok := isOffsetsFile(n)
		if !ok {
			traces = append(traces, n)
			continue
		}
		paired := false
		for _, t := range []string{base + ".trace.gz", base + ".trace"} {
			if given[t] {
				check[t], paired = n, true
				break
			}
		}
		if !paired {
			skipped = append(skipped, n)
		}
	}
	return traces, check, skipped
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
// When offsets names an offsets file, the offsets of the first replay are
// compared with it.
func replayOne(name string, policy offset.Policy, round bool, offsets string, cfg *replayConfig, progress *progress, stderr io.Writer) (replayRow, error) {
	progress.start(name)
	progress.show("loading")
	p, err := trace.Load(name)
	if err != nil {
		if _, ok := isOffsetsFile(name); !ok && looksLikeOffsets(name) {
			return replayRow{}, fmt.Errorf("%s: %w", name, errOffsetsFile)
		}
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

	var row replayRow
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
			if offsets != "" {
				progress.show("checking " + offsets)
				if row.ReferenceOffsets, err = compareOffsets(r.Offsets(), offsets); err != nil {
					return replayRow{}, err
				}
			}
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

	row.Trace, row.Ops, row.Failures, row.PeakEnd = name, res.Ops, res.Failures, res.PeakEnd
	row.FreeAtEnd, row.LargestFreeAtEnd = a.Report().Free, a.LargestFree()
	if res.Ops > 0 {
		slices.Sort(times)
		row.NsPerOp = round3(float64(median(times).Nanoseconds()) / float64(res.Ops))
		row.AllocsPerOp = round3(float64(mallocs) / float64(res.Ops) / float64(cfg.repeat))
	}
	return row, nil
}

// compareOffsets compares a replay's offsets with the offsets file name and
// returns "match" or what differs.
func compareOffsets(got []uint32, name string) (string, error) {
	want, err := trace.LoadOffsets(name)
	if err != nil {
		return "", err
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d allocations, %s has %d", len(got), name, len(want)), nil
	}
	bad, first := 0, -1
	for i := range got {
		if got[i] != want[i] {
			if bad == 0 {
				first = i
			}
			bad++
		}
	}
	if bad == 0 {
		return "match", nil
	}
	return fmt.Sprintf("%d differ, first allocation %d", bad, first), nil
}

// looksLikeOffsets reports whether the file name starts as an offsets file
// does: a number or "-" alone on the first line.
func looksLikeOffsets(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var in io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return false
		}
		in = zr
	}
	line, _ := bufio.NewReader(io.LimitReader(in, 64)).ReadString('\n')
	line = strings.TrimRight(line, "\r\n")
	if line == "-" {
		return true
	}
	_, err = strconv.ParseUint(line, 10, 32)
	return err == nil
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
	checked := slices.ContainsFunc(rows, func(r replayRow) bool { return r.ReferenceOffsets != "" })
	if checked {
		header = append(header, "offsets file")
	}
	cells := [][]string{header}
	for _, r := range rows {
		ref := []string{}
		if checked {
			ref = append(ref, cmp.Or(r.ReferenceOffsets, "-"))
		}
		cells = append(cells, append([]string{
			r.Trace,
			strconv.Itoa(r.Ops),
			strconv.FormatFloat(r.NsPerOp, 'f', 1, 64),
			strconv.Itoa(r.Failures),
			strconv.FormatUint(uint64(r.PeakEnd), 10),
			strconv.FormatUint(uint64(r.FreeAtEnd), 10),
			strconv.FormatUint(uint64(r.LargestFreeAtEnd), 10),
		}, ref...))
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
