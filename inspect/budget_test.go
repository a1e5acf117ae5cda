package inspect_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/budget"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/pool"
)

// TestDumpBudget: a dump carries its program's budget through JSON and
// shows it on the map page; a budget that does not add up is refused as
// an invalid dump.
func TestDumpBudget(t *testing.T) {
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	b, err := budget.New(dev, budget.Options{Bytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := b.Account("pool")
	if err != nil {
		t.Fatal(err)
	}
	p, err := pool.New(acct, pool.Options{Label: "pool"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	if _, err := p.Acquire(256<<10, 256, device.Uniform|device.CopyDst); err != nil {
		t.Fatal(err)
	}
	d := inspect.Snapshot("host", "budgeted", p)
	u := b.Usage()
	d.Budget = &u
	var buf bytes.Buffer
	if err := d.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := inspect.ReadJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Budget == nil || got.Budget.Bytes != 256<<10 || got.Budget.Limit != 1<<20 || len(got.Budget.Accounts) != 1 {
		t.Fatalf("budget after a round trip: %+v", got.Budget)
	}
	var page bytes.Buffer
	if err := inspect.WriteHTML(&page, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "Budget: 256.0 KiB of 1.0 MiB in use (25%)") {
		t.Fatalf("the page does not show the budget: %q", got.BudgetLine())
	}
	bad := strings.Replace(buf.String(), `"limit_bytes": 1048576`, `"limit_bytes": 1024`, 1)
	if _, err := inspect.ReadJSON(strings.NewReader(bad)); !errors.Is(err, inspect.ErrInvalidDump) {
		t.Fatalf("a budget over its limit: %v", err)
	}
}
