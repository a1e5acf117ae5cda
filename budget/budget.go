package budget

import (
	"errors"
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// ErrOverBudget is returned, wrapped together with device.ErrOutOfMemory,
// by an account's CreateBuffer and CreateTexture when the object would take
// usage over the limit even after every reclaimer ran.
var ErrOverBudget = errors.New("budget: over budget")

// ErrInvalidOptions is returned by New for a zero limit or a pressure level
// above it, and by Account for an empty name or one already taken.
var ErrInvalidOptions = errors.New("budget: invalid options")

// Options configure a Budget.
type Options struct {
	// Bytes is the limit: the most bytes the accounts' live buffers and
	// textures may hold together. Required.
	Bytes uint64
	// PressureBytes is the usage at or above which OnPressure is called;
	// zero means nine tenths of Bytes. At most Bytes.
	PressureBytes uint64
	// OnPressure, if set, is called when usage rises to PressureBytes; see
	// the package documentation. It may release memory (and is a good
	// place to trim caches), but must not create any through an account.
	OnPressure func(Usage)
}

// Usage is a snapshot of a Budget. The JSON keys are package inspect's
// dump schema (a dump shows its program's budget).
type Usage struct {
	Limit    uint64         `json:"limit_bytes"`    // Options.Bytes
	Pressure uint64         `json:"pressure_bytes"` // the pressure level
	Bytes    uint64         `json:"bytes"`          // held by every account's live objects
	Peak     uint64         `json:"peak_bytes"`     // the most Bytes has been
	Accounts []AccountUsage `json:"accounts"`
	// Refusals counts creations refused with ErrOverBudget; Reclaims the
	// times reclaimers were asked for memory, and Reclaimed the bytes
	// they gave back then.
	Refusals  int    `json:"refusals"`
	Reclaims  int    `json:"reclaims"`
	Reclaimed uint64 `json:"reclaimed_bytes"`
}

// AccountUsage is one account's part of a Usage.
type AccountUsage struct {
	Name     string `json:"name"`
	Bytes    uint64 `json:"bytes"`    // held by its live buffers and textures, and those it prepares
	Buffers  int    `json:"buffers"`  // live buffers
	Textures int    `json:"textures"` // live textures
	// Prepared counts the buffers and textures being made ahead of need
	// (Account.PrepareBuffer, PrepareTexture), neither taken nor given up
	// yet.
	Prepared int `json:"prepared,omitempty"`
}

// Check reports whether u is consistent: its accounts' bytes add up to
// Bytes, which is at most Limit and Peak, and the pressure level is at
// most the limit. For readers of dumps, which may come from anywhere.
func (u *Usage) Check() error {
	var sum uint64
	for _, a := range u.Accounts {
		if sum += a.Bytes; sum < a.Bytes {
			return fmt.Errorf("budget: accounts' bytes overflow")
		}
		if a.Buffers < 0 || a.Textures < 0 {
			return fmt.Errorf("budget: account %q: negative counts", a.Name)
		}
	}
	switch {
	case sum != u.Bytes:
		return fmt.Errorf("budget: accounts hold %d bytes, usage says %d", sum, u.Bytes)
	case u.Bytes > u.Limit || u.Bytes > u.Peak || u.Pressure > u.Limit:
		return fmt.Errorf("budget: %d bytes, peak %d, pressure %d, limit %d", u.Bytes, u.Peak, u.Pressure, u.Limit)
	case u.Refusals < 0 || u.Reclaims < 0:
		return fmt.Errorf("budget: negative counts")
	}
	return nil
}

// Reclaimer gives memory back: it releases the buffers or textures its
// manager can spare, through the account whose reclaimer it is, and
// returns the bytes it gave back. Every manager's Shrink is one as it is
// (pool.Pool, arena.Arena, mesh.Allocator, meshlet.Manager,
// bindless.Registry, ring.Buffer). The budget credits what the account
// released, whatever freedBytes says; an error ends that reclaimer's
// turn, and a later refusal asks again. A panic in it reaches the caller
// of the request that asked; the budget stays usable.
type Reclaimer func() (freedBytes uint64, err error)

// Budget is a byte limit over the accounts of one device. Create one with
// New.
type Budget struct {
	dev        device.Device
	opts       Options
	bytes      uint64
	peak       uint64
	accounts   []*Account
	reclaiming bool
	pressured  bool // usage reached the pressure level and has not dropped below it since
	refusals   int
	reclaims   int
	reclaimed  uint64
}

// New returns a budget of opts.Bytes over dev. It creates nothing.
func New(dev device.Device, opts Options) (*Budget, error) {
	if dev == nil {
		return nil, fmt.Errorf("budget: New: nil device: %w", device.ErrInvalidObject)
	}
	if opts.Bytes == 0 {
		return nil, fmt.Errorf("budget: New with a limit of 0 bytes: %w", ErrInvalidOptions)
	}
	if opts.PressureBytes == 0 {
		opts.PressureBytes = nineTenths(opts.Bytes)
	}
	if opts.PressureBytes > opts.Bytes {
		return nil, fmt.Errorf("budget: New: pressure level %d above the limit %d: %w", opts.PressureBytes, opts.Bytes, ErrInvalidOptions)
	}
	return &Budget{dev: dev, opts: opts}, nil
}

// nineTenths returns floor(n*9/10), exactly and without overflow for any n.
func nineTenths(n uint64) uint64 { return n/10*9 + n%10*9/10 }

// Account returns a new account named name: a device.Device that charges
// the buffers and textures it creates to name. Names are unique and not
// empty (ErrInvalidOptions).
func (b *Budget) Account(name string) (*Account, error) {
	if name == "" {
		return nil, fmt.Errorf("budget: Account with an empty name: %w", ErrInvalidOptions)
	}
	for _, a := range b.accounts {
		if a.name == name {
			return nil, fmt.Errorf("budget: Account %q exists: %w", name, ErrInvalidOptions)
		}
	}
	a := &Account{dev: b.dev, b: b, name: name}
	b.accounts = append(b.accounts, a)
	return a, nil
}

// Usage returns a snapshot of the budget and its accounts.
func (b *Budget) Usage() Usage {
	u := Usage{
		Limit: b.opts.Bytes, Pressure: b.opts.PressureBytes, Bytes: b.bytes, Peak: b.peak,
		Refusals: b.refusals, Reclaims: b.reclaims, Reclaimed: b.reclaimed,
		Accounts: make([]AccountUsage, len(b.accounts)),
	}
	for i, a := range b.accounts {
		u.Accounts[i] = AccountUsage{Name: a.name, Bytes: a.bytes, Buffers: len(a.buffers), Textures: len(a.textures), Prepared: a.prepared}
	}
	return u
}

// reserve makes room for n bytes for account a, reclaiming from the other
// accounts if it must, and charges them. It fails with ErrOverBudget.
func (b *Budget) reserve(a *Account, n uint64, what string) error {
	if n > b.opts.Bytes-b.bytes && !b.reclaiming {
		b.reclaim(a, n)
	}
	if n > b.opts.Bytes-b.bytes {
		b.refusals++
		return fmt.Errorf("budget: %s of %d bytes for %q with %d of %d in use: %w: %w",
			what, n, a.name, b.bytes, b.opts.Bytes, ErrOverBudget, device.ErrOutOfMemory)
	}
	b.bytes += n
	b.peak = max(b.peak, b.bytes)
	if b.bytes >= b.opts.PressureBytes && !b.pressured {
		b.pressured = true
		if b.opts.OnPressure != nil {
			b.opts.OnPressure(b.Usage())
		}
	}
	return nil
}

// reclaim asks the accounts other than a, in order, for memory until n
// bytes fit. b.reclaiming is true while the reclaimers run and false again
// however they return, a panic included (see "Over the limit" in doc.go).
func (b *Budget) reclaim(a *Account, n uint64) {
	b.reclaiming = true
	b.reclaims++
	before := b.bytes
	defer func() {
		if b.bytes < before {
			b.reclaimed += before - b.bytes
		}
		b.reclaiming = false
	}()
	for _, o := range b.accounts {
		if n <= b.opts.Bytes-b.bytes {
			break
		}
		if o != a && o.reclaim != nil && !o.released {
			_, _ = o.reclaim()
		}
	}
}

// credit gives n bytes back.
func (b *Budget) credit(n uint64) {
	b.bytes -= n
	if b.bytes < b.opts.PressureBytes {
		b.pressured = false
	}
}
