package arena_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
)

// FuzzArena drives allocate, batches (Place and PlaceSome, with data or
// fill functions, through the queue or an uploader: at most one growth
// each, all or nothing on error), free, write, sweep,
// compact and injected device refusals against a model of every live
// allocation's bytes and owner tag, and checks the whole model after every
// command: bytes, Owner, Regions, and every move's owner (OnMove, Sweep,
// Compact). Hostile commands write and read at
// offsets and lengths near 2^32 and 2^64 (refused with ErrInvalidSize) and
// use another arena's handles (refused with ErrInvalidHandle); the model
// check proves they changed nothing. Each command is 3 bytes.
func FuzzArena(f *testing.F) {
	f.Add([]byte{0, 10, 0, 0, 20, 1, 1, 0, 0, 3, 0, 0, 0, 50, 2, 4, 0, 0})
	f.Add([]byte{0, 200, 0, 0, 200, 0, 1, 0, 0, 0, 255, 1, 5, 1, 0, 0, 255, 3, 3, 1, 0})
	f.Add([]byte{0, 4, 0, 0, 4, 0, 6, 3, 9, 6, 3, 137, 7, 0, 0, 7, 1, 1, 6, 1, 11})
	f.Add([]byte{0xC0, 10, 0, 0, 20, 1, 2, 0, 0, 4, 0, 0, 4, 0, 0, 4, 0, 0, 4, 0, 0, 4, 0, 0})
	f.Add([]byte{1, 60, 6, 1, 90, 14, 2, 0, 0, 1, 200, 2, 1, 96, 22, 2, 1, 0, 1, 150, 3, 4, 0, 1, 1, 50, 7, 5, 0, 0})
	// Batches (op 1, y&2), among frees, with guards.
	f.Add([]byte{0, 40, 32, 0, 30, 36, 0, 20, 40, 2, 0, 0, 0, 10, 32, 1, 70, 34, 0, 96, 32, 5, 0, 0, 0, 50, 32})
	f.Add([]byte{0x80, 40, 32, 0, 30, 36, 2, 1, 0, 1, 20, 34, 0, 5, 40, 4, 0, 1, 4, 0, 0, 0, 60, 32})
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := runArena(data); err != nil {
			t.Fatal(err)
		}
	})
}

// hostile are byte offsets a caller might pass by mistake or malice: near
// 0, near 2^32 and near 2^64, where a bounds check written as off+n wraps.
var hostile = []uint64{0, 4, 8, 1 << 31, 1<<32 - 4, 1 << 32, 1<<32 + 4, 1<<63 - 4, 1 << 63,
	1<<64 - 4, 1<<64 - 8, 1<<64 - 12, 1<<64 - 16, 1<<64 - 1, 3, 1<<64 - 2}

func runArena(data []byte) error {
	lim := device.DefaultLimits()
	lim.MaxBufferSize = 64 << 10
	dev, err := host.New(host.Options{Limits: lim})
	if err != nil {
		return err
	}
	defer dev.Release()
	owners := map[arena.Handle]uint64{}
	var moveErr error
	onMove := func(m arena.Move) {
		if w, ok := owners[m.Handle]; (!ok || m.Owner != w) && moveErr == nil {
			moveErr = fmt.Errorf("OnMove %+v: owner %#x, want %#x (live %v)", m, m.Owner, w, ok)
		}
	}
	opts := arena.Options{InitialElems: 32, MaxAllocs: 128, SweepLimits: arena.SweepLimits{Moves: 2}, OnMove: onMove}
	// The first byte's high bits (its command reads the low three) turn on
	// shrinking (bit 6) and guards (bit 7).
	if len(data) > 0 && data[0]&0x40 != 0 {
		opts.ShrinkBelow, opts.ShrinkAfter = 0.5, 2
	}
	if len(data) > 0 && data[0]&0x80 != 0 {
		opts.GuardBytes = 8
	}
	a, err := arena.New(dev, opts)
	if err != nil {
		return err
	}
	defer a.Release()
	// other's handles have the same IDs and generations as a's: the
	// first allocation of each is ID 0, generation 1.
	other, err := arena.New(dev, arena.Options{InitialElems: 32, MaxAllocs: 128})
	if err != nil {
		return err
	}
	defer other.Release()
	var foreign []arena.Handle
	model := map[arena.Handle][]byte{}
	var order []arena.Handle
	fill := byte(1)
	for step := 0; len(data) >= 3 && step < 256; step, data = step+1, data[3:] {
		op, x, y := data[0]%8, data[1], data[2]
		pick := func() (arena.Handle, bool) {
			if len(order) == 0 {
				return arena.Handle{}, false
			}
			return order[int(x)%len(order)], true
		}
		switch op {
		case 0, 1: // allocate and fill; op 1 with y&2 places a batch
			elems := uint32(x)%97 + 1
			if y&1 == 1 {
				dev.FailNextCreates(1)
			}
			// Owners: 0 (Allocate), a small one, or all 64 bits.
			owner := uint64(0)
			if y&4 != 0 {
				owner = uint64(step)<<56 | uint64(x)<<8 | uint64(y)
			} else if y&8 != 0 {
				owner = uint64(x)
			}
			if op == 1 && y&2 != 0 {
				err := placeBatch(a, dev, step, x, y, owner, &fill, model, owners, &order)
				dev.FailNextCreates(0)
				if err != nil {
					return err
				}
				break
			}
			var h arena.Handle
			if owner == 0 && y&16 != 0 {
				h, err = a.Allocate(elems)
			} else {
				h, err = a.AllocateOwned(elems, owner)
			}
			dev.FailNextCreates(0)
			if err != nil {
				if !errors.Is(err, arena.ErrFull) && !errors.Is(err, device.ErrOutOfMemory) && !errors.Is(err, arena.ErrTooManyAllocations) {
					return fmt.Errorf("step %d: allocate %d: %w", step, elems, err)
				}
				break
			}
			b := make([]byte, elems*4)
			for i := range b {
				b[i] = fill + byte(i)
			}
			fill++
			if err := a.Write(h, 0, b); err != nil {
				return err
			}
			model[h] = b
			owners[h] = owner
			order = append(order, h)
		case 2: // free
			h, ok := pick()
			if !ok {
				break
			}
			if err := a.Free(h); err != nil {
				return fmt.Errorf("step %d: free: %w", step, err)
			}
			if err := a.Free(h); !errors.Is(err, arena.ErrInvalidHandle) {
				return fmt.Errorf("step %d: second free: %v", step, err)
			}
			delete(model, h)
			delete(owners, h)
			i := int(x) % len(order)
			order = append(order[:i], order[i+1:]...)
		case 3: // overwrite a word
			h, ok := pick()
			if !ok {
				break
			}
			b := model[h]
			off := (int(y) % (len(b) / 4)) * 4
			w := []byte{y, x, y ^ x, 7}
			if err := a.Write(h, uint64(off), w); err != nil {
				return err
			}
			copy(b[off:], w)
		case 4: // sweep
			if y&1 == 1 {
				a.Arm()
			}
			moves, err := a.Sweep(arena.SweepLimits{})
			if err != nil {
				return err
			}
			if err := checkMoves(owners, moves); err != nil {
				return fmt.Errorf("step %d: sweep: %w", step, err)
			}
		case 5:
			moves, err := a.Compact()
			if err != nil {
				return err
			}
			if err := checkMoves(owners, moves); err != nil {
				return fmt.Errorf("step %d: compact: %w", step, err)
			}
		case 6: // a hostile write or read: must be refused, change nothing
			h, ok := pick()
			if !ok {
				break
			}
			off := hostile[int(y)%len(hostile)]
			n := int(x%4) * 4
			var err error
			if y&0x80 == 0 {
				err = a.Write(h, off, make([]byte, n))
			} else {
				err = a.Read(h, off, make([]byte, n))
			}
			size := uint64(len(model[h]))
			if fits := off <= size && uint64(n) <= size-off && off%4 == 0; !fits && !errors.Is(err, arena.ErrInvalidSize) {
				return fmt.Errorf("step %d: %d bytes at %d of %d: %v, want ErrInvalidSize", step, n, off, size, err)
			} else if fits && err != nil {
				return fmt.Errorf("step %d: %d bytes at %d of %d: %w", step, n, off, size, err)
			} else if fits && y&0x80 == 0 {
				clear(model[h][off : off+uint64(n)])
			}
		case 7: // another arena's handle: refused in both directions
			if y&1 == 0 || len(foreign) == 0 {
				h, err := other.Allocate(uint32(x)%8 + 1)
				if err != nil {
					break
				}
				foreign = append(foreign, h)
			}
			fh := foreign[int(x)%len(foreign)]
			if err := a.Write(fh, 0, make([]byte, 4)); !errors.Is(err, arena.ErrInvalidHandle) {
				return fmt.Errorf("step %d: write with another arena's handle: %v", step, err)
			}
			if err := a.Free(fh); !errors.Is(err, arena.ErrInvalidHandle) {
				return fmt.Errorf("step %d: free of another arena's handle: %v", step, err)
			}
			if h, ok := pick(); ok {
				if err := other.Free(h); !errors.Is(err, arena.ErrInvalidHandle) {
					return fmt.Errorf("step %d: free of a's handle in another arena: %v", step, err)
				}
			}
		}
		if moveErr != nil {
			return fmt.Errorf("step %d: %w", step, moveErr)
		}
		if err := checkOwners(a, owners); err != nil {
			return fmt.Errorf("step %d: %w", step, err)
		}
		st := a.Stats()
		if st.Allocations != len(model) || st.ReservedElems+uint64(st.FreeElems) != uint64(st.CapacityElems) {
			return fmt.Errorf("step %d: stats %+v, model %d live", step, st, len(model))
		}
		// Every write went through the arena, inside its allocation: no
		// margin may have changed, through moves, growths and shrinks.
		if bad, err := a.CheckGuards(); err != nil || bad != nil {
			return fmt.Errorf("step %d: CheckGuards: %v, %v", step, bad, err)
		}
		for h, want := range model {
			got := make([]byte, len(want))
			if err := a.Read(h, 0, got); err != nil {
				return err
			}
			if string(got) != string(want) {
				return fmt.Errorf("step %d: contents of %v changed", step, h)
			}
		}
	}
	return nil
}

// checkMoves checks that every move names its allocation's owner.
func checkMoves(owners map[arena.Handle]uint64, moves []arena.Move) error {
	for _, m := range moves {
		if w, ok := owners[m.Handle]; !ok || m.Owner != w {
			return fmt.Errorf("move %+v: owner %#x, want %#x (live %v)", m, m.Owner, w, ok)
		}
	}
	return nil
}

// checkOwners checks Owner and Regions against owners, the live
// allocations' tags.
func checkOwners(a *arena.Arena, owners map[arena.Handle]uint64) error {
	for h, w := range owners {
		if got, err := a.Owner(h); err != nil || got != w {
			return fmt.Errorf("Owner(%v) = %#x, %v; want %#x", h, got, err, w)
		}
	}
	n := 0
	for r := range a.Regions() {
		w, ok := owners[r.Handle]
		switch {
		case !r.Used() && r.Owner != 0:
			return fmt.Errorf("free region %+v with an owner", r)
		case r.Used() && (!ok || r.Owner != w):
			return fmt.Errorf("region %+v: owner %#x, want %#x (live %v)", r, r.Owner, w, ok)
		}
		if r.Used() {
			n++
		}
	}
	if n != len(owners) || a.Len() != n {
		return fmt.Errorf("%d regions used, Len %d, %d live", n, a.Len(), len(owners))
	}
	return nil
}

// placeBatch places a batch of 1 to 4 requests on a, from x and y (y&2 is
// set): y&32 PlaceSome, y&64 through an uploader, y&128 fill functions;
// failing commands (y&1) make the device refuse a buffer. It checks
// Place's contract and adds what it placed to the model.
func placeBatch(a *arena.Arena, dev *host.Device, step int, x, y byte, owner uint64, fill *byte,
	model map[arena.Handle][]byte, owners map[arena.Handle]uint64, order *[]arena.Handle) error {
	n := 1 + int(x)%4
	reqs := make([]arena.Request, n)
	bytes := make([][]byte, n)
	for i := range reqs {
		elems := (uint32(x)*uint32(i+3)+uint32(y))%97 + 1
		b := make([]byte, elems*4)
		for k := range b {
			b[k] = *fill + byte(k)
		}
		*fill++
		bytes[i] = b
		reqs[i] = arena.Request{Owner: owner + uint64(i), Elems: elems, Data: b}
		if y&128 != 0 {
			reqs[i].Data = nil
			reqs[i].Fill = func(dst []byte) { copy(dst, b) }
		} else if i%2 == 1 {
			reqs[i].Data = b[:len(b)-int(x)%4] // the last bytes zeros
			clear(b[len(b)-int(x)%4:])
		}
	}
	var up arena.Uploader
	if y&64 != 0 {
		up = &countingUploader{dev: dev}
	}
	before, live := a.Stats(), a.Len()
	var ps []arena.Placement
	var err error
	if y&32 != 0 {
		ps, _, err = a.PlaceSome(nil, reqs, up)
	} else {
		ps, _, err = a.Place(nil, reqs, up)
	}
	st := a.Stats()
	if st.Growths > before.Growths+1 {
		return fmt.Errorf("step %d: a batch of %d grew %d times", step, n, st.Growths-before.Growths)
	}
	if err != nil {
		if !errors.Is(err, arena.ErrFull) && !errors.Is(err, device.ErrOutOfMemory) && !errors.Is(err, arena.ErrTooManyAllocations) {
			return fmt.Errorf("step %d: place %d: %w", step, n, err)
		}
		if len(ps) != 0 || a.Len() != live {
			return fmt.Errorf("step %d: a failed batch left %d placements, %d allocations of %d", step, len(ps), a.Len(), live)
		}
		return nil
	}
	if len(ps) != n {
		return fmt.Errorf("step %d: %d placements for %d requests", step, len(ps), n)
	}
	for i, p := range ps {
		if p.Handle == (arena.Handle{}) {
			if y&32 == 0 {
				return fmt.Errorf("step %d: Place left request %d", step, i)
			}
			continue
		}
		if off, err := a.Offset(p.Handle); err != nil || off != p.Offset {
			return fmt.Errorf("step %d: placed at %d, Offset %d, %v", step, p.Offset, off, err)
		}
		model[p.Handle] = bytes[i]
		owners[p.Handle] = owner + uint64(i)
		*order = append(*order, p.Handle)
	}
	return nil
}

// countingUploader uploads as queue writes, and counts its calls.
type countingUploader struct {
	dev            device.Device
	uploads, fills int
}

func (u *countingUploader) Upload(dst device.Buffer, off uint64, data []byte) error {
	u.uploads++
	return u.dev.WriteBuffer(dst, off, data)
}

func (u *countingUploader) UploadFunc(dst device.Buffer, off, n uint64, fill func([]byte)) error {
	u.fills++
	b := make([]byte, n)
	fill(b)
	return u.dev.WriteBuffer(dst, off, b)
}
