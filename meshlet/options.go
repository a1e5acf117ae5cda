package meshlet

import (
	"fmt"
	"math"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/staging"
)

// Options configure a Manager. RowWords is required; every other zero field
// means its default. New validates the result.
type Options struct {
	// Label names the manager's buffers: Label+"/data" and Label+"/rows"
	// unless Data.Label or Rows.Label is set. Default "meshlet".
	Label string

	// RowWords is the size of one meshlet's metadata row, in 32-bit words.
	// Required: at least 1.
	RowWords uint32
	// AddressWord is the index, within a row, of the word that holds the
	// address of the meshlet's data: relative to the batch's data when
	// given to Add, an absolute word index into the data buffer once
	// placed. Below RowWords.
	AddressWord uint32

	// Data configures the arena of data words (4-byte elements) and Rows
	// the arena of metadata rows (RowWords*4-byte elements): capacities,
	// growth, RoundToBins, policy, MaxAllocs (which bounds the batches),
	// usage. ElemSize, OnMove and SweepLimits belong to the manager and
	// must be left zero (ElemSize may also be given as its only valid value).
	// Rows.MaxElems is clamped so that every word index of the rows
	// buffer fits in 32 bits, as device.Patch needs.
	Data, Rows arena.Options

	// SweepLimits bounds one Sweep call, spent across both arenas. Zero
	// fields take arena.DefaultSweepLimits's.
	SweepLimits arena.SweepLimits

	// ShrinkBelow and ShrinkAfter let both arenas give memory back: an
	// arena whose reserved elements stay at or below ShrinkBelow of its
	// capacity for ShrinkAfter of its Sweep calls in a row moves into a
	// buffer of what it holds plus a sixteenth, never below its MinElems
	// (arena.Options.ShrinkBelow; Data.MinElems and Rows.MinElems, which
	// default to the arenas' InitialElems). They fill in Data's and
	// Rows' own fields where those are zero. Its buffer changes, as at a
	// growth: watch Stats().Shrinks beside the arenas' Growths. Off (0) by
	// default; 0.5 suits the arenas' default GrowthFactor. A Sweep call
	// whose first arena spends the whole budget leaves the second
	// unswept, and its count of calls waits a call.
	ShrinkBelow float64
	ShrinkAfter int

	// Belt, if set, carries the uploads of Add, AddReserved and AddBatches:
	// each run of batches that lie end to end in an arena is written into
	// the belt's mapped staging chunks and copied on the GPU, instead of
	// being a queue write (see mesh.Options.Belt). The belt must be on the
	// manager's device; the caller ends every frame on it (EndFrame with
	// the fence of the submission that carries the frame), and releases it
	// after the manager.
	Belt *staging.Belt
}

// resolve fills in defaults and checks o; the arenas check the rest.
func (o Options) resolve() (Options, error) {
	if o.Label == "" {
		o.Label = "meshlet"
	}
	if o.RowWords == 0 || o.RowWords > math.MaxUint32/4 {
		return o, fmt.Errorf("%w: RowWords %d, want 1 to %d", ErrInvalidOptions, o.RowWords, math.MaxUint32/4)
	}
	if o.AddressWord >= o.RowWords {
		return o, fmt.Errorf("%w: AddressWord %d outside a row of %d words", ErrInvalidOptions, o.AddressWord, o.RowWords)
	}
	for _, a := range []struct {
		name, suffix string
		o            *arena.Options
		elem         uint32
	}{{"Data", "/data", &o.Data, 4}, {"Rows", "/rows", &o.Rows, o.RowWords * 4}} {
		switch {
		case a.o.ElemSize != 0 && a.o.ElemSize != a.elem:
			return o, fmt.Errorf("%w: %s.ElemSize %d, want %d or 0", ErrInvalidOptions, a.name, a.o.ElemSize, a.elem)
		case a.o.OnMove != nil:
			return o, fmt.Errorf("%w: %s.OnMove is the manager's", ErrInvalidOptions, a.name)
		case a.o.SweepLimits != arena.SweepLimits{}:
			return o, fmt.Errorf("%w: %s.SweepLimits is unused: set Options.SweepLimits", ErrInvalidOptions, a.name)
		}
		a.o.ElemSize = a.elem
		if a.o.Label == "" {
			a.o.Label = o.Label + a.suffix
		}
	}
	// Every word index of the rows buffer must fit a device.Patch index.
	if lim := math.MaxUint32 / o.RowWords; o.Rows.MaxElems == 0 || o.Rows.MaxElems > lim {
		o.Rows.MaxElems = lim
	}
	if !(o.ShrinkBelow >= 0 && o.ShrinkBelow < 1) || o.ShrinkAfter < 0 {
		return o, fmt.Errorf("%w: ShrinkBelow %v (want 0 to below 1), ShrinkAfter %d", ErrInvalidOptions, o.ShrinkBelow, o.ShrinkAfter)
	}
	for _, a := range []*arena.Options{&o.Data, &o.Rows} {
		if a.ShrinkBelow == 0 {
			a.ShrinkBelow = o.ShrinkBelow
		}
		if a.ShrinkAfter == 0 {
			a.ShrinkAfter = o.ShrinkAfter
		}
	}
	o.SweepLimits = o.SweepLimits.Or(arena.DefaultSweepLimits)
	return o, nil
}
