package scene

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/gpumem/gpumem/budget"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/staging"
)

// Giving memory back. With Options.Unload N the run ends with a zone unload:
// after the Options.Frames frames of streaming the camera stops, the view
// narrows to the zone under it (the others unload at once, most of what
// is loaded), nothing streams in any more, and N more frames run. The
// mesh slabs and meshlet arenas shrink (ShrinkBelow demoMeshShrinkBelow
// and demoMeshletShrinkBelow, after demoShrinkAfter frames in a row below
// it), the texture registry
// compacts at each of those frames (bindless.Registry.Compact: a renderer
// calls it at a level change): the textures left move down into the
// layers the unloaded ones freed, their handles rewritten, and the pages
// no texture uses any more are released, the others trimmed to their
// textures, and
// the summary says how the bytes the managers hold fell against those the
// zone data occupies, manager by manager, and from which frame they held
// at most demoUnloadGoal times it.
//
// With Options.Budget the managers create everything through accounts of one
// budget.Budget, whose reclaimers give memory back before a request is
// refused: the pool's idle buffers first, then the mesh slabs and the
// meshlet arenas shrink, then the texture pages no texture uses go.
//
// The shrink thresholds sit below what a growth leaves (1/GrowthFactor
// full: two thirds for the slabs' 1.5, half for the arenas' 2), so a
// buffer that just grew does not shrink back; a shrink leaves it 1/1.0625
// full.
const (
	demoMeshShrinkBelow    = 0.6
	demoMeshletShrinkBelow = 0.45
	demoShrinkAfter        = 60 // a second at 60 frames a second
	demoUnloadGoal         = 1.15
	demoUnloadView         = 0.5 // the view radius after the unload: one zone
)

// workloadOptions is how the workloads make their managers: on the
// device, or on an account of a budget each, shrinking or not.
type workloadOptions struct {
	dev    device.Device
	shrink bool
	// flushBytes bounds a mesh Flush (Options.FlushBytes); belt gives the mesh
	// allocator a staging belt (Options.Belt), which the mesh workload makes and
	// puts in sharedBelt for the constants ring to write through too.
	flushBytes uint64
	belt       bool
	sharedBelt *staging.Belt
	budget     *budget.Budget
	// accounts are the budget's, by name; err is the first error making
	// one (a bug: names are the demo's own).
	accounts map[string]*budget.Account
	err      error
}

// device returns the device a manager named name makes its buffers on:
// its account of the budget, when there is one.
func (o *workloadOptions) device(name string) device.Device {
	if o.budget == nil {
		return o.dev
	}
	if a := o.accounts[name]; a != nil {
		return a
	}
	a, err := o.budget.Account(name)
	if err != nil {
		o.err = err
		return o.dev
	}
	o.accounts[name] = a
	return a
}

// reclaim sets the reclaimer of name's account, when there is a budget.
func (o *workloadOptions) reclaim(name string, f budget.Reclaimer) {
	if a := o.accounts[name]; a != nil {
		a.SetReclaimer(f)
	}
}

// holding is what one manager holds at one frame, in bytes.
type holding struct {
	capacity, reserved, occupied uint64
}

func holdingOf(bufs []memory.Buffer) holding {
	t := memory.Totals(bufs)
	return holding{t.CapacityBytes, t.ReservedBytes, t.OccupiedBytes}
}

// ratio is capacity over occupied (over reserved with res): what the
// buffers hold per byte of data (of allocations).
func (h holding) ratio(res bool) float64 {
	d := h.occupied
	if res {
		d = h.reserved
	}
	if d == 0 {
		return math.Inf(1)
	}
	return float64(h.capacity) / float64(d)
}

// unloadNames are the managers whose memory the zones fill, in the
// summary's order; the last row is their sum.
var unloadNames = []string{"meshes", "meshlets", "textures", "zone data"}

// unloadResult is the zone unload's record: frames[0] is the last frame
// before it, frames[k] the k-th frame after it began, each with a holding
// per unloadNames.
type unloadResult struct {
	at       int // the first frame of the unload
	zones    int // zones unloaded at it
	items    int // live meshes, batches and textures before it
	after    int // live after it
	frames   [][]holding
	released uint64 // texture page bytes released
}

// holdings returns the zone managers' holdings now, per unloadNames.
func holdings(ws []workload) []holding {
	var hs [3]holding
	for _, w := range ws {
		k := -1
		switch w.(type) {
		case *meshWorkload:
			k = 0
		case *meshletWorkload:
			k = 1
		case *textureWorkload:
			k = 2
		}
		if k >= 0 {
			hs[k] = holdingOf(w.memory().Memory())
		}
	}
	sum := holding{}
	for _, h := range hs {
		sum.capacity += h.capacity
		sum.reserved += h.reserved
		sum.occupied += h.occupied
	}
	return append(hs[:], sum)
}

// liveItems counts the zone workloads' live meshes, batches and textures.
func liveItems(ws []workload) int {
	n := 0
	for _, w := range ws {
		switch w := w.(type) {
		case *meshWorkload:
			n += len(w.live)
		case *meshletWorkload:
			n += len(w.live)
		case *textureWorkload:
			n += len(w.live)
		}
	}
	return n
}

// goalFrame returns the first frame after the unload (1 is the unload's)
// from which manager k's buffers hold at most demoUnloadGoal times its
// data (its allocations, with res) to the end of the run, or 0 when they
// never do.
func (u *unloadResult) goalFrame(k int, res bool) int {
	first := 0
	for i := len(u.frames) - 1; i >= 1; i-- {
		if u.frames[i][k].ratio(res) > demoUnloadGoal {
			break
		}
		first = i
	}
	return first
}

// write prints the unload's figures.
func (u *unloadResult) write(w io.Writer) {
	n := len(u.frames) - 1
	fmt.Fprintf(w, "\nzone unload at frame %d: the camera stops, %d of the zones in view unload (%d of %d meshes, batches and textures), nothing streams in;\n"+
		"  %d frames after, with shrinking on (mesh slabs below %.0f%% full and meshlet arenas below %.0f%% for %d frames shrink;\n"+
		"  textures moved down into freed layers, texture pages released when empty, trimmed to their textures: %s given back):\n",
		u.at, u.zones, u.items-u.after, u.items, n, 100*demoMeshShrinkBelow, 100*demoMeshletShrinkBelow, demoShrinkAfter, inspect.FormatBytes(u.released))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "manager   \toccupied\treserved\tcapacity\tcapacity/reserved\tcapacity/occupied\tbefore the unload\tat the unload\t≤ 1.15x occupied from\t≤ 1.15x reserved from\t")
	for k, name := range unloadNames {
		before, at, last := u.frames[0][k], u.frames[1][k], u.frames[n][k]
		from := [2]string{"never", "never"}
		for i, res := range []bool{false, true} {
			if g := u.goalFrame(k, res); g > 0 {
				from[i] = fmt.Sprintf("frame %d (+%d)", u.at+g-1, g-1)
			}
		}
		fmt.Fprintf(tw, "%-10s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name,
			inspect.FormatBytes(last.occupied), inspect.FormatBytes(last.reserved), inspect.FormatBytes(last.capacity),
			ratio(float64(last.capacity), float64(last.reserved)), ratio(float64(last.capacity), float64(last.occupied)),
			ratio(float64(before.capacity), float64(before.occupied)), ratio(float64(at.capacity), float64(at.occupied)),
			from[0], from[1])
	}
	tw.Flush()
	fmt.Fprintf(w, "  (at the last frame; reserved: what the allocations take with bin rounding; capacity: what the buffers hold on the device;\n"+
		"  before and at the unload: capacity/occupied; from: the first frame from which capacity stays at most %.2fx occupied, or reserved,\n"+
		"  to the end, and the frames since the unload)\n", demoUnloadGoal)
}

// ratio formats a/b as "1.23x", "-" when b is 0.
func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "x"
}
