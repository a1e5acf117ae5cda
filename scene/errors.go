package scene

import (
	"fmt"
	"strings"

	"github.com/gpumem/gpumem/budget"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/inspect"
)

// OverBudgetError is Stream's error when Options.Budget refused a
// manager memory that its reclaimers could not free: the run needs a
// larger budget. It wraps the refusal, so errors.Is(err,
// budget.ErrOverBudget) holds.
type OverBudgetError struct {
	Frame int          // the frame refused memory
	Usage budget.Usage // the budget's usage after the refusal
	Err   error        // the refusal, as the manager returned it
}

func (e *OverBudgetError) Error() string {
	// The refusal wraps device.ErrOutOfMemory so that managers survive it
	// as they survive the device's; the device itself had room.
	refused := strings.TrimSuffix(e.Err.Error(), ": "+device.ErrOutOfMemory.Error())
	return fmt.Sprintf("over the budget of %s in frame %d: the managers held %s at their peak and needed more than the limit; the refusal: %s",
		inspect.FormatBytes(e.Usage.Limit), e.Frame, inspect.FormatBytes(e.Usage.Peak), refused)
}

func (e *OverBudgetError) Unwrap() error { return e.Err }

// unlimited is a budget no run reaches: NeededBudget's, which only counts.
const unlimited = 1 << 50

// NeededBudget streams the run of o again under a limit it never reaches
// and returns the managers' peak usage: under a budget at or above it the
// run refuses nothing (no request is refused, no reclaimer runs, and the
// same seed makes the same requests). It takes as long as the run.
func NeededBudget(dev device.Device, devName string, o Options) (uint64, error) {
	o.Budget, o.ProfileLabels = unlimited, false
	r, err := Stream(dev, devName, o)
	if err != nil {
		return 0, err
	}
	return r.usage.Peak, nil
}
