package scene

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

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
	// One row per group of buffers of the last frame, in the dump's order.
	var groups []group
	rows := map[group][]memory.Buffer{}
	for _, b := range r.last.Buffers {
		g := groupOf(&b)
		if rows[g] == nil {
			groups = append(groups, g)
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
	for _, g := range groups {
		line(g.String(), rows[g])
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
func (r *Run) writeManagerTimes(w io.Writer) {
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
