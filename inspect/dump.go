package inspect

import (
	"encoding/json"
	"fmt"
	"github.com/gpumem/gpumem/budget"
	"io"

	"github.com/gpumem/gpumem/memory"
)

// Version is the dump schema version this package writes and reads.
const Version = 1

// Limits on what a dump may hold, so that a hostile or broken file cannot
// make a reader or a renderer use unbounded memory or time.
const (
	MaxBuffers = 4096    // buffers in one dump
	MaxRegions = 1 << 22 // regions in one dump, all buffers together
)

// Dump is the whole picture at one moment: every buffer, every region,
// and their totals. See the package documentation for its JSON schema.
type Dump struct {
	Version int             `json:"version"`
	Device  string          `json:"device"`
	Label   string          `json:"label,omitempty"`
	Buffers []memory.Buffer `json:"buffers"`
	Totals  memory.Stats    `json:"totals"`
	// Budget, when the program keeps its managers under one (package
	// budget), is its usage at the dump's moment: set it from
	// budget.Budget.Usage.
	Budget *budget.Usage `json:"budget,omitempty"`
}

// New returns a dump of buffers, with its version set and totals summed.
// It keeps buffers (the slice, not a copy). O(len(buffers)).
func New(device, label string, buffers ...memory.Buffer) Dump {
	if buffers == nil {
		buffers = []memory.Buffer{}
	}
	return Dump{Version: Version, Device: device, Label: label, Buffers: buffers, Totals: memory.Totals(buffers)}
}

// Check reports whether d is well formed: the version is Version, at most
// MaxBuffers buffers and MaxRegions regions, every buffer's regions tile
// [0, CapacityBytes) in address order with nonzero sizes, states are known
// and an allocation's Used is at most its Size. The error wraps
// ErrVersion or ErrInvalidDump. O(regions).
func (d *Dump) Check() error {
	if d.Version != Version {
		return fmt.Errorf("%w: version %d, this reader knows %d", ErrVersion, d.Version, Version)
	}
	if len(d.Buffers) > MaxBuffers {
		return fmt.Errorf("%w: %d buffers, at most %d", ErrInvalidDump, len(d.Buffers), MaxBuffers)
	}
	n := 0
	for i := range d.Buffers {
		b := &d.Buffers[i]
		if n += len(b.Regions); n > MaxRegions {
			return fmt.Errorf("%w: more than %d regions", ErrInvalidDump, MaxRegions)
		}
		if err := b.Check(); err != nil {
			return fmt.Errorf("%w: buffer %d (%q): %v", ErrInvalidDump, i, b.Name, err)
		}
	}
	if d.Budget != nil {
		if len(d.Budget.Accounts) > MaxBuffers {
			return fmt.Errorf("%w: %d budget accounts, at most %d", ErrInvalidDump, len(d.Budget.Accounts), MaxBuffers)
		}
		if err := d.Budget.Check(); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidDump, err)
		}
	}
	return nil
}

// BudgetLine says the dump's budget in one sentence: usage against the
// limit, the peak, each account and what was refused and reclaimed; ""
// without a budget.
func (d *Dump) BudgetLine() string {
	u := d.Budget
	if u == nil {
		return ""
	}
	s := fmt.Sprintf("Budget: %s of %s in use (%.0f%%), peak %s, pressure from %s", FormatBytes(u.Bytes), FormatBytes(u.Limit),
		100*float64(u.Bytes)/float64(max(u.Limit, 1)), FormatBytes(u.Peak), FormatBytes(u.Pressure))
	for i, a := range u.Accounts {
		sep := "; "
		if i > 0 {
			sep = ", "
		}
		s += fmt.Sprintf("%s%s %s", sep, a.Name, FormatBytes(a.Bytes))
	}
	return s + fmt.Sprintf("; %d requests refused, %d reclaims gave back %s.", u.Refusals, u.Reclaims, FormatBytes(u.Reclaimed))
}

// WriteJSON writes d as indented JSON. It does not check d.
func (d *Dump) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(d)
}

// ReadJSON reads one dump from r and checks it (see Check). Malformed
// input is an error wrapping ErrInvalidDump or ErrVersion, never a panic.
func ReadJSON(r io.Reader) (Dump, error) {
	var d Dump
	dec := json.NewDecoder(r)
	if err := dec.Decode(&d); err != nil {
		return Dump{}, fmt.Errorf("%w: %v", ErrInvalidDump, err)
	}
	if dec.More() {
		return Dump{}, fmt.Errorf("%w: data after the dump", ErrInvalidDump)
	}
	if err := d.Check(); err != nil {
		return Dump{}, err
	}
	return d, nil
}
