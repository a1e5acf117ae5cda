package scene

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpumem/gpumem/budget"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
)

// group is a row of the summary's table: the buffers of one kind and one
// element size (a texture page's: its layer size).
type group struct {
	kind memory.Kind
	elem uint32
}

func groupOf(b *memory.Buffer) group { return group{b.Kind, b.ElemBytes} }

// String returns the row's name: "vertex slabs of 12-byte elements",
// "texture pages of 1.0 KiB layers", "ring buffers".
func (g group) String() string {
	name := g.kind.String()
	if name == "" {
		name = "other buffer"
	}
	switch {
	case g.kind == memory.TexturePage:
		return fmt.Sprintf("%ss of %s layers", name, inspect.FormatBytes(uint64(g.elem)))
	case g.elem > 1:
		return fmt.Sprintf("%ss of %d-byte elements", name, g.elem)
	}
	return name + "s"
}

// bufferColumns head the rows of bufferRows.
var bufferColumns = []string{"buffers", "count", "live", "occupied", "reserved", "capacity", "growths", "moves", "moved", "fragmentation"}

// bufferRows returns the summary's table of the last frame's buffers: a
// row per group, in the dump's order, then the total. Fragmentation is
// of the buffers that compact ("-" for the others).
func (r *Run) bufferRows() [][]string {
	var groups []group
	rows := map[group][]memory.Buffer{}
	var swept []memory.Buffer
	// Those held ahead of a growth, on some devices, are left out: see
	// preparedLine.
	shown := slices.DeleteFunc(slices.Clone(r.last.Buffers), isPrepared)
	for _, b := range shown {
		g := groupOf(&b)
		if rows[g] == nil {
			groups = append(groups, g)
		}
		rows[g] = append(rows[g], b)
		if b.Kind.Compacts() {
			swept = append(swept, b)
		}
	}
	line := func(name string, bufs []memory.Buffer, frag bool) []string {
		t := memory.Totals(bufs)
		fr := "-"
		if frag {
			fr = pct(t.Fragmentation)
		}
		return []string{name, strconv.Itoa(t.Buffers), strconv.Itoa(t.Allocations),
			inspect.FormatBytes(t.OccupiedBytes), inspect.FormatBytes(t.ReservedBytes), inspect.FormatBytes(t.CapacityBytes),
			strconv.FormatUint(t.Growths, 10), strconv.FormatUint(t.Moves, 10), inspect.FormatBytes(t.BytesMoved), fr}
	}
	var out [][]string
	for _, g := range groups {
		out = append(out, line(g.String(), rows[g], g.kind.Compacts()))
	}
	total := line("total", shown, false)
	if len(swept) > 0 {
		total[len(total)-1] = pct(memory.Totals(swept).Fragmentation)
	}
	return append(out, total)
}

func isPrepared(b memory.Buffer) bool { return b.Kind == memory.PreparedBuffer }

// preparedLine says what the last frame's buffers made ahead of a growth
// (arena.Options.GrowAhead) and texture pages made ahead of need
// (bindless.Options.PageAhead) hold, which the table leaves out: a device
// that makes them off the caller's goroutine (webgpu) holds them ahead,
// others make them at the growth, and the table's figures are alike on
// every device. "" when there are none.
func (r *Run) preparedLine() string {
	var bufs []memory.Buffer
	for _, b := range r.last.Buffers {
		if isPrepared(b) {
			bufs = append(bufs, b)
		}
	}
	if len(bufs) == 0 {
		return ""
	}
	pages := 0
	for _, b := range bufs {
		if b.Layers > 0 {
			pages++
		}
	}
	return fmt.Sprintf("made ahead of need (GrowAhead, PageAhead), beside the table: %s in %d buffers and %d texture pages",
		inspect.FormatBytes(memory.Totals(bufs).CapacityBytes), len(bufs)-pages, pages)
}

// WriteSummary writes the run's summary as text: a table of the last
// frame's buffers grouped by kind and element size, each manager's notes,
// the figures over the frames, gpumem's time by manager, the zone unload
// and the budget where the run had them, and what the checks read back.
func (r *Run) WriteSummary(w io.Writer) {
	scale := ""
	if r.opts.Scale > 1 {
		scale = fmt.Sprintf(", scale %d", r.opts.Scale)
	}
	if r.opts.Unload > 0 {
		scale += fmt.Sprintf(", then %d of a zone unload", r.opts.Unload)
	}
	if r.opts.Budget > 0 {
		scale += ", budget " + inspect.FormatBytes(r.opts.Budget)
	}
	fmt.Fprintf(w, "gpumem demo: %d frames, seed %d%s, on %s\n\n", r.opts.Frames, r.opts.Seed, scale, r.device)
	if r.err != nil {
		fmt.Fprintf(w, "The run stopped in frame %d; what follows is of the %d frames before it.\n\n", len(r.records)+1, len(r.records))
	}
	if len(r.records) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "buffers                                  \t"+strings.Join(bufferColumns[1:], "\t")+"\t")
	for _, row := range r.bufferRows() {
		fmt.Fprintf(tw, "%-41s\t%s\t\n", row[0], strings.Join(row[1:], "\t"))
	}
	tw.Flush()
	fmt.Fprintln(w, "(the managers' buffers at the last frame, as they show them; growths, moves and moved: over each live buffer's life;\nfragmentation: of the mesh slabs and meshlet arenas)")
	if l := r.preparedLine(); l != "" {
		fmt.Fprintln(w, l)
	}
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
		if dev := r.gpuTimes(recs); len(dev) > 0 {
			fmt.Fprintf(w, "  on the GPU (timestamps around the work gpumem recorded: copies, moves, mips): median %s, 99th percentile %s, max %s\n",
				ms(quantile(dev, 0.5)), ms(quantile(dev, 0.99)), ms(quantile(dev, 1)))
		}
	}
	times("all frames", r.records)
	times("second half", r.records[nf/2:])
	fmt.Fprintln(w, "  (the rest of a frame is the demo's: making data, checks read back, bookkeeping; timings vary from run to run)")
	r.writeManagerTimes(w)
	r.writeSlowest(w, 3)
	if r.unload != nil {
		r.unload.write(w)
	}
	if r.usage != nil {
		d := inspect.Dump{Budget: r.usage}
		fmt.Fprintf(w, "\n%s\n", d.BudgetLine())
	}
	if r.err != nil {
		fmt.Fprintf(w, "read back: %d items spot-checked intact before the run stopped; no final check\n", r.spot)
		return
	}
	fmt.Fprintf(w, "read back: %d items spot-checked during the run, and all %d live meshes, batches, textures and blocks of frames in flight at the end: every byte intact\n", r.spot, r.final)
}

// managerColumns head the rows of managerRows.
var managerColumns = []string{"manager", "median", "99th percentile", "max", "second half: median", "99th percentile", "max", "share"}

// managerRows returns gpumem's time per frame by manager: median, 99th
// percentile and max over all frames and over the second half, each
// manager's own (a manager's p99 frame need not be another's), and the
// share of gpumem's time over the run. The staging belt has a row only
// where the run used one.
func (r *Run) managerRows() [][]string {
	var total time.Duration
	for _, rec := range r.records {
		total += rec.gpumem
	}
	nf := len(r.records)
	var rows [][]string
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
		rows = append(rows, []string{managerNames[m], ms3(all[0]), ms3(all[1]), ms3(all[2]), ms3(late[0]), ms3(late[1]), ms3(late[2]), pct(share)})
	}
	return rows
}

// writeManagerTimes prints managerRows as a table.
func (r *Run) writeManagerTimes(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "gpumem's time per frame by manager (each manager's own quantiles; share: of gpumem's time over the run):")
	fmt.Fprintln(tw, "  manager     \tall frames: "+strings.Join(managerColumns[1:], "\t")+"\t")
	for _, row := range r.managerRows() {
		fmt.Fprintf(tw, "  %-12s\t%s\t\n", row[0], strings.Join(row[1:], "\t"))
	}
	tw.Flush()
}

// writeSlowest writes the n frames of the longest time in gpumem's calls,
// longest first, each with its managers' shares (those of a tenth of it or
// more) and what the frame did: live allocations gained or lost (a zone
// loaded or unloaded), bytes uploaded and moved, buffers new or grown
// (those that need their bind groups made again; the first frame's are
// all new).
func (r *Run) writeSlowest(w io.Writer, n int) {
	frames := make([]int, len(r.records))
	for i := range frames {
		frames[i] = i
	}
	slices.SortStableFunc(frames, func(a, b int) int { return cmp.Compare(r.records[b].gpumem, r.records[a].gpumem) })
	fmt.Fprintln(w, "gpumem's slowest frames:")
	for _, i := range frames[:min(n, len(frames))] {
		rec := r.records[i]
		var mgrs []string
		for m := range numManagers {
			if d := rec.byManager[m]; d > 0 && 10*d >= rec.gpumem {
				mgrs = append(mgrs, managerNames[m]+" "+ms(d))
			}
		}
		prev := 0
		if i > 0 {
			prev = r.records[i-1].live
		}
		rebound := fmt.Sprintf(", buffers new or grown: %d", len(rec.rebind))
		if i == 0 {
			rebound = ", every buffer new"
		}
		fmt.Fprintf(w, "  frame %d: %s (%s); live allocations %+d, uploaded %s, moved %s%s\n",
			i+1, ms(rec.gpumem), strings.Join(mgrs, ", "), rec.live-prev, inspect.FormatBytes(rec.uploaded),
			inspect.FormatBytes(rec.bytesMoved), rebound)
	}
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

// stagedMeshes is what the bound on a mesh Flush (Options.FlushBytes)
// left staged: the frames that ended with meshes staged, the most staged
// at a frame's end, and the spot checks skipped because of them.
type stagedMeshes struct {
	frames        uint64
	peak, skipped int
}

// frameBudget is a frame at 60 frames a second: gpumem's 99th percentile
// above it is a problem the report flags.
const frameBudget = time.Second / 60

// figures are a run's key figures, as the report's cards show them.
type figures struct {
	frames                  int // frames that ran
	resident, residentPeak  uint64
	capacity                uint64 // at the last frame
	streamedPerSecond       uint64 // at 60 frames a second
	gpumemMedian, gpumemP99 time.Duration
	frameMedian, frameP99   time.Duration
	// gpuMedian and gpuP99: the device's time for gpumem's work a frame,
	// from GPU timestamps; gpuOK false on a device without them.
	gpuMedian, gpuP99        time.Duration
	gpuOK                    bool
	moves                    uint64
	movedBytes               uint64
	fragmentation, fragLast  float64 // mean over the frames; the last frame's
	largestBuffer, maxBuffer uint64
	spot, final              int
	intact                   bool // every byte of the final check read back intact
	budget                   *budget.Usage
	problems                 []string
}

// figures returns r's key figures and the problems a reader should see
// first: a run that stopped, memory over the budget, meshes left staged
// by Flush's bound in many frames, gpumem's 99th percentile over a frame
// at 60 frames a second.
func (r *Run) figures() figures {
	f := figures{frames: len(r.records), spot: r.spot, final: r.final, intact: r.err == nil, budget: r.usage,
		maxBuffer: r.limits.MaxBufferSize, resident: r.last.Totals.OccupiedBytes, capacity: r.last.Totals.CapacityBytes}
	var streamed uint64
	var fragSum float64
	durs, gpu := make([]time.Duration, len(r.records)), make([]time.Duration, len(r.records))
	for i, rec := range r.records {
		f.residentPeak = max(f.residentPeak, rec.occupied)
		streamed += rec.streamed
		f.moves += rec.moves
		f.movedBytes += rec.bytesMoved
		fragSum += rec.fragmentation
		durs[i], gpu[i] = rec.dur, rec.gpumem
		f.fragLast = rec.fragmentation
	}
	if dev := r.gpuTimes(r.records); len(dev) > 0 {
		f.gpuMedian, f.gpuP99, f.gpuOK = quantile(dev, 0.5), quantile(dev, 0.99), true
	}
	for _, b := range r.last.Buffers {
		if b.Layers == 0 {
			f.largestBuffer = max(f.largestBuffer, b.CapacityBytes)
		}
	}
	if n := len(r.records); n > 0 {
		f.streamedPerSecond = 60 * streamed / uint64(n)
		f.fragmentation = fragSum / float64(n)
		f.frameMedian, f.frameP99 = quantile(durs, 0.5), quantile(durs, 0.99)
		f.gpumemMedian, f.gpumemP99 = quantile(gpu, 0.5), quantile(gpu, 0.99)
	}
	var obe *OverBudgetError
	switch {
	case errors.As(r.err, &obe):
		f.problems = append(f.problems, fmt.Sprintf("Over budget: the budget of %s refused memory in frame %d after its reclaimers ran; the managers had held %s at their peak. The run needs a budget above %s; this report shows the %d frames before.",
			inspect.FormatBytes(obe.Usage.Limit), obe.Frame, inspect.FormatBytes(obe.Usage.Peak), inspect.FormatBytes(obe.Usage.Limit), f.frames))
	case r.err != nil:
		f.problems = append(f.problems, fmt.Sprintf("The run stopped in frame %d: %v. This report shows the %d frames before.", f.frames+1, r.err, f.frames))
	}
	if u := r.usage; u != nil && u.Refusals > 0 && obe == nil {
		f.problems = append(f.problems, fmt.Sprintf("Over budget: the budget of %s refused %d requests the managers survived (peak %s).",
			inspect.FormatBytes(u.Limit), u.Refusals, inspect.FormatBytes(u.Peak)))
	}
	// Flush's bound spreads a burst of loading over a few frames; staged
	// meshes at the end of a tenth of the frames or more mean the stream
	// outruns it.
	if st := r.staged; f.frames > 0 && st.frames*10 >= uint64(f.frames) {
		f.problems = append(f.problems, fmt.Sprintf("Meshes still staged: %d of %d frames ended with meshes a Flush had not taken (%d at most), and %d spot checks skipped them: the stream outruns the Flush bound of %s (-flush-bytes).",
			st.frames, f.frames, st.peak, st.skipped, inspect.FormatBytes(r.opts.FlushBytes)))
	}
	if f.gpumemP99 > frameBudget {
		f.problems = append(f.problems, fmt.Sprintf("Slow frames: gpumem's calls took %s at the 99th percentile, more than a frame at 60 frames a second (%s).",
			ms(f.gpumemP99), ms(frameBudget)))
	}
	return f
}

// gpuTimes returns the GPU times of the records that have one.
func (r *Run) gpuTimes(recs []frameRecord) []time.Duration {
	var ds []time.Duration
	for _, rec := range recs {
		if rec.gpuOK {
			ds = append(ds, rec.gpu)
		}
	}
	return ds
}
