package invariant_test

import (
	"testing"

	"github.com/gpumem/gpumem/internal/invariant"
)

func TestBroken(t *testing.T) {
	defer func() {
		if got, want := recover(), "mesh: internal error: range 7 not in its slab"; got != want {
			t.Errorf("panic %q, want %q", got, want)
		}
	}()
	invariant.Check(true, "mesh", "never")
	invariant.Broken("mesh", "range %d not in its slab", 7)
	t.Error("Broken returned")
}
