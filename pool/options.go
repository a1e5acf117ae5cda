package pool

import (
	"fmt"
	"time"

	"github.com/gpumem/gpumem/device"
)

// Options configure a Pool. The zero value is a pool without budget or
// eviction by age, on the wall clock.
type Options struct {
	// Label names the buffers the pool creates, in debuggers and errors.
	Label string
	// BudgetBytes caps the bytes the pool holds, leased and idle; 0 means
	// no cap, and a cap is at least the smallest buffer, 4 bytes. See the
	// package documentation.
	BudgetBytes uint64
	// MaxIdle is how long a buffer may stay idle before Put or Evict
	// evicts it; 0 means idle buffers stay until the budget, Trim or Release
	// takes them.
	MaxIdle time.Duration
	// Clock tells the time for MaxIdle; nil means time.Now. It is read once
	// per Put and per Evict, and only when MaxIdle is set. Times it
	// returns should not go backwards; if they do, buffers are evicted
	// late, never early.
	Clock func() time.Time
}

func (o Options) resolve() (Options, error) {
	if o.MaxIdle < 0 {
		return o, fmt.Errorf("%w: negative MaxIdle %v", ErrInvalidOptions, o.MaxIdle)
	}
	if o.BudgetBytes > 0 && o.BudgetBytes < device.CopyAlignment {
		return o, fmt.Errorf("%w: BudgetBytes %d, below the smallest buffer (%d bytes)", ErrInvalidOptions, o.BudgetBytes, device.CopyAlignment)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o, nil
}
