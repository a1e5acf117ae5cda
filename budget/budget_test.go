package budget_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/budget"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
	"github.com/gpumem/gpumem/pool"
)

func newBudget(t testing.TB, dev device.Device, opts budget.Options) *budget.Budget {
	t.Helper()
	b, err := budget.New(dev, opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func account(t testing.TB, b *budget.Budget, name string) *budget.Account {
	t.Helper()
	a, err := b.Account(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// check verifies the budget's invariants against the objects the test
// holds: each account's bytes are its live objects', the total is their
// sum, and never over the limit.
func check(t *testing.T, b *budget.Budget, live map[string]uint64) {
	t.Helper()
	u := b.Usage()
	var sum uint64
	for _, a := range u.Accounts {
		if a.Bytes != live[a.Name] {
			t.Fatalf("account %q holds %d bytes, its live objects %d", a.Name, a.Bytes, live[a.Name])
		}
		sum += a.Bytes
	}
	if u.Bytes != sum || u.Bytes > u.Limit || u.Peak < u.Bytes {
		t.Fatalf("usage %+v: accounts sum to %d", u, sum)
	}
}

func TestNewErrors(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	for _, o := range []budget.Options{{}, {Bytes: 100, PressureBytes: 101}} {
		if _, err := budget.New(dev, o); !errors.Is(err, budget.ErrInvalidOptions) {
			t.Errorf("New(%+v): %v, want ErrInvalidOptions", o, err)
		}
	}
	if _, err := budget.New(nil, budget.Options{Bytes: 1}); !errors.Is(err, device.ErrInvalidObject) {
		t.Errorf("New(nil): %v", err)
	}
	b := newBudget(t, dev, budget.Options{Bytes: 1 << 20})
	account(t, b, "a")
	for _, name := range []string{"", "a"} {
		if _, err := b.Account(name); !errors.Is(err, budget.ErrInvalidOptions) {
			t.Errorf("Account(%q): %v, want ErrInvalidOptions", name, err)
		}
	}
}

// TestChargeAndRefuse creates and releases buffers and textures at random
// through two accounts of a small budget on every backend: usage is always
// the live objects' sum, a refusal matches ErrOverBudget and
// device.ErrOutOfMemory and creates nothing, and the views work with the
// account and with the device itself.
func TestChargeAndRefuse(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		const limit = 1 << 20
		b := newBudget(t, dev, budget.Options{Bytes: limit})
		accts := []*budget.Account{account(t, b, "a"), account(t, b, "b")}
		type obj struct {
			acct  string
			bytes uint64
			rel   func()
		}
		var objs []obj
		live := map[string]uint64{}
		r := rand.New(rand.NewPCG(1, 2))
		refused := 0
		for i := range 300 {
			a := accts[r.IntN(2)]
			switch {
			case len(objs) > 0 && r.IntN(3) == 0:
				k := r.IntN(len(objs))
				o := objs[k]
				o.rel()
				o.rel() // credited once
				live[o.acct] -= o.bytes
				objs = append(objs[:k], objs[k+1:]...)
			case r.IntN(4) == 0:
				desc := device.TextureDesc{Format: device.RGBA8Unorm, Width: 32, Height: 32, Layers: 1 + uint32(r.IntN(8)), Mips: 6, Usage: device.TextureCopyDst | device.TextureCopySrc}
				before := b.Usage().Bytes
				tex, err := a.CreateTexture(desc)
				if err != nil {
					if !errors.Is(err, budget.ErrOverBudget) || !errors.Is(err, device.ErrOutOfMemory) {
						t.Fatalf("op %d: %v", i, err)
					}
					if before+desc.Bytes() <= limit {
						t.Fatalf("op %d: refused a texture of %d bytes with %d of %d in use", i, desc.Bytes(), before, limit)
					}
					refused++
					break
				}
				n := desc.Bytes()
				live[a.Name()] += n
				objs = append(objs, obj{a.Name(), n, tex.Release})
			default:
				size := uint64(4 * (1 + r.IntN(64<<10)))
				before := b.Usage().Bytes
				buf, err := a.CreateBuffer(device.BufferDesc{Label: "t", Size: size, Usage: device.CopyDst | device.CopySrc})
				if err != nil {
					if !errors.Is(err, budget.ErrOverBudget) || !errors.Is(err, device.ErrOutOfMemory) {
						t.Fatalf("op %d: %v", i, err)
					}
					if before+size <= limit {
						t.Fatalf("op %d: refused %d bytes with %d of %d in use", i, size, before, limit)
					}
					refused++
					break
				}
				// The view works through the account and the device.
				data := bytes.Repeat([]byte{byte(i), 1, 2, 3}, 4)
				if err := a.WriteBuffer(buf, 0, data); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(data))
				if err := dev.ReadBuffer(buf, 0, got); err != nil || !bytes.Equal(got, data) {
					t.Fatalf("op %d: read back %v, %v", i, got, err)
				}
				live[a.Name()] += size
				objs = append(objs, obj{a.Name(), size, buf.Release})
			}
			check(t, b, live)
		}
		if refused == 0 || b.Usage().Refusals != refused {
			t.Fatalf("%d refusals, usage says %d: the test must reach the limit", refused, b.Usage().Refusals)
		}
	})
}

// TestInvalidIsNotOverBudget: a descriptor the device refuses is refused
// as invalid, even when it would not fit the budget either.
func TestInvalidIsNotOverBudget(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	b := newBudget(t, dev, budget.Options{Bytes: 64})
	a := account(t, b, "a")
	_, err := a.CreateBuffer(device.BufferDesc{Size: 1001, Usage: device.CopyDst})
	if !errors.Is(err, device.ErrInvalidAlignment) && !errors.Is(err, device.ErrInvalidDescriptor) {
		t.Errorf("unaligned size: %v", err)
	}
	if errors.Is(err, budget.ErrOverBudget) {
		t.Errorf("unaligned size refused as over budget: %v", err)
	}
	_, err = a.CreateTexture(device.TextureDesc{Format: device.RGBA8Unorm, Width: 0, Height: 4, Usage: device.TextureCopyDst})
	if err == nil || errors.Is(err, budget.ErrOverBudget) {
		t.Errorf("zero-width texture: %v", err)
	}
	if u := b.Usage(); u.Bytes != 0 || u.Refusals != 0 {
		t.Errorf("usage after invalid requests: %+v", u)
	}
}

// TestDeviceRefusal: when the device refuses a creation the budget
// charged, the charge is given back.
func TestDeviceRefusal(t *testing.T) {
	dev := testdevice.Host(t, host.Options{FailCreateAt: 2})
	b := newBudget(t, dev, budget.Options{Bytes: 1 << 20})
	a := account(t, b, "a")
	if _, err := a.CreateBuffer(device.BufferDesc{Size: 1024, Usage: device.CopyDst}); err != nil {
		t.Fatal(err)
	}
	_, err := a.CreateBuffer(device.BufferDesc{Size: 2048, Usage: device.CopyDst})
	if !errors.Is(err, device.ErrOutOfMemory) || errors.Is(err, budget.ErrOverBudget) {
		t.Fatalf("device refusal: %v", err)
	}
	if u := b.Usage(); u.Bytes != 1024 || u.Accounts[0].Buffers != 1 {
		t.Fatalf("usage after a device refusal: %+v", u)
	}
}

// TestReclaim: a request over the limit asks the other accounts for
// memory, in order, never the requester's own reclaimer, and fits when
// they give enough back.
func TestReclaim(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	b := newBudget(t, dev, budget.Options{Bytes: 1 << 20})
	cache, other, req := account(t, b, "cache"), account(t, b, "other"), account(t, b, "requester")
	var held []device.Buffer
	for range 3 {
		buf, err := cache.CreateBuffer(device.BufferDesc{Size: 256 << 10, Usage: device.CopyDst})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, buf)
	}
	var calls []string
	cache.SetReclaimer(func() (freed uint64, _ error) { // gives back all it holds
		calls = append(calls, "cache")
		for _, h := range held {
			freed += h.Size()
			h.Release()
		}
		held = held[:0]
		return freed, nil
	})
	other.SetReclaimer(func() (uint64, error) { calls = append(calls, "other"); return 0, nil })
	req.SetReclaimer(func() (uint64, error) { t.Error("the requester's own reclaimer was called"); return 0, nil })
	buf, err := req.CreateBuffer(device.BufferDesc{Size: 512 << 10, Usage: device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	// 768 KiB in use: the cache gives its buffers back; the other
	// account is not asked, the request fitting.
	if len(calls) != 1 || calls[0] != "cache" || len(held) != 0 {
		t.Fatalf("reclaimers called %v, %d cache buffers left; want cache alone, once, giving all back", calls, len(held))
	}
	u := b.Usage()
	if u.Bytes != 512<<10 || u.Reclaims != 1 || u.Reclaimed != 768<<10 {
		t.Fatalf("usage %+v", u)
	}
	// The next fits without asking.
	calls = nil
	buf2, err := req.CreateBuffer(device.BufferDesc{Size: 512 << 10, Usage: device.CopyDst})
	if err != nil || len(calls) != 0 {
		t.Fatalf("second request: %v; reclaimers called %v, %d cache buffers left", err, calls, len(held))
	}
	// Nothing more to give: every reclaimer is asked, the request is
	// refused, and everything held stays.
	calls = nil
	_, err = req.CreateBuffer(device.BufferDesc{Size: 4, Usage: device.CopyDst})
	if !errors.Is(err, budget.ErrOverBudget) {
		t.Fatalf("over budget: %v", err)
	}
	if len(calls) != 2 || b.Usage().Bytes != 1<<20 {
		t.Fatalf("reclaimers called %v, usage %+v", calls, b.Usage())
	}
	buf.Release()
	buf2.Release()
	if u := b.Usage(); u.Bytes != 0 {
		t.Fatalf("usage after releasing everything: %+v", u)
	}
}

// TestReclaimerPanics: a reclaimer's panic reaches the caller of the
// request, which creates nothing, and the budget stays usable: the next
// request over the limit asks the reclaimers again.
func TestReclaimerPanics(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	b := newBudget(t, dev, budget.Options{Bytes: 1 << 20})
	cache, req := account(t, b, "cache"), account(t, b, "requester")
	held, err := cache.CreateBuffer(device.BufferDesc{Size: 768 << 10, Usage: device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	cache.SetReclaimer(func() (uint64, error) {
		if calls++; calls == 1 {
			panic("reclaimer failed")
		}
		held.Release()
		return held.Size(), nil
	})
	create := func() (buf device.Buffer, panicked any, err error) {
		defer func() { panicked = recover() }()
		buf, err = req.CreateBuffer(device.BufferDesc{Size: 512 << 10, Usage: device.CopyDst})
		return buf, nil, err
	}
	if _, p, _ := create(); p != "reclaimer failed" {
		t.Fatalf("first request: recovered %v, want the reclaimer's panic", p)
	}
	if u := b.Usage(); u.Bytes != 768<<10 || u.Accounts[1].Buffers != 0 {
		t.Fatalf("usage after the panic: %+v", u)
	}
	buf, p, err := create()
	if p != nil || err != nil || calls != 2 {
		t.Fatalf("second request: %v, panic %v, reclaimer called %d times; want it asked again", err, p, calls)
	}
	if u := b.Usage(); u.Bytes != 512<<10 || u.Reclaims != 2 || u.Reclaimed != 768<<10 {
		t.Fatalf("usage %+v", u)
	}
	buf.Release()
}

// TestDefaultPressure: a zero PressureBytes is nine tenths of the limit,
// rounded down, for any limit.
func TestDefaultPressure(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	for _, tt := range []struct{ limit, want uint64 }{
		{1, 0}, {10, 9}, {16, 14}, {1_000_003, 900_002},
		{math.MaxUint64, 16_602_069_666_338_596_453},
	} {
		b := newBudget(t, dev, budget.Options{Bytes: tt.limit})
		if got := b.Usage().Pressure; got != tt.want {
			t.Errorf("limit %d: pressure level %d, want %d", tt.limit, got, tt.want)
		}
	}
}

// TestPressure: OnPressure is called when usage rises to the level, once,
// and again only after it dropped below.
func TestPressure(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	var seen []uint64
	b := newBudget(t, dev, budget.Options{Bytes: 1000, PressureBytes: 800, OnPressure: func(u budget.Usage) { seen = append(seen, u.Bytes) }})
	a := account(t, b, "a")
	mk := func(n uint64) device.Buffer {
		buf, err := a.CreateBuffer(device.BufferDesc{Size: n, Usage: device.CopyDst})
		if err != nil {
			t.Fatal(err)
		}
		return buf
	}
	x := mk(400)
	y := mk(400) // 800: pressure
	z := mk(100) // still above: no second call
	y.Release()  // 500: below
	z.Release()
	y = mk(400) // 800 again
	if len(seen) != 2 || seen[0] != 800 || seen[1] != 800 {
		t.Fatalf("OnPressure saw %v, want [800 800]", seen)
	}
	x.Release()
	y.Release()
}

// meshSet is a mesh allocator and the meshes it should hold, with their
// bytes.
type meshSet struct {
	t    *testing.T
	dev  device.Device
	m    *mesh.Allocator
	r    *rand.Rand
	live []liveMesh
}

type liveMesh struct {
	h    mesh.Handle
	v, i []byte
}

func newMeshSet(t *testing.T, dev, acct device.Device, opts mesh.Options) *meshSet {
	t.Helper()
	m, err := mesh.New(acct, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Release)
	return &meshSet{t: t, dev: dev, m: m, r: rand.New(rand.NewPCG(3, 4))}
}

// frame adds n random meshes and flushes. When Flush fails it removes
// them again and returns the error; the set is then as before.
func (s *meshSet) frame(n int) error {
	var staged []liveMesh
	for range n {
		v := make([]byte, 12*(64+s.r.IntN(512)))
		idx := make([]byte, 4*3*(1+s.r.IntN(64)))
		for _, b := range [][]byte{v, idx} {
			for k := range b {
				b[k] = byte(s.r.Uint32())
			}
		}
		h, err := s.m.Add(mesh.Mesh{VertexStride: 12, Vertices: v, IndexFormat: mesh.Uint32, Indices: idx})
		if err != nil {
			s.t.Fatal(err)
		}
		staged = append(staged, liveMesh{h, v, idx})
	}
	if err := s.m.Flush(); err != nil {
		for _, l := range staged {
			if err := s.m.Remove(l.h); err != nil {
				s.t.Fatal(err)
			}
		}
		return err
	}
	s.live = append(s.live, staged...)
	return nil
}

// removeSome removes every k-th live mesh.
func (s *meshSet) removeSome(k int) {
	kept := s.live[:0]
	for i, l := range s.live {
		if i%k == 0 {
			if err := s.m.Remove(l.h); err != nil {
				s.t.Fatal(err)
			}
			continue
		}
		kept = append(kept, l)
	}
	s.live = kept
}

// verify reads every live mesh back.
func (s *meshSet) verify() {
	s.t.Helper()
	for _, l := range s.live {
		vs, is, err := s.m.Slices(l.h)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, c := range []struct {
			sl   mesh.Slice
			unit uint64
			want []byte
		}{{vs, 12, l.v}, {is, 4, l.i}} {
			got := make([]byte, len(c.want))
			if err := s.dev.ReadBuffer(c.sl.Buffer, uint64(c.sl.StartElem)*c.unit, got); err != nil {
				s.t.Fatal(err)
			}
			if !bytes.Equal(got, c.want) {
				s.t.Fatalf("mesh %v lost its bytes", l.h)
			}
		}
	}
}

// TestManagersOverBudget runs a mesh allocator and a pool under one
// budget: the pool's idle buffers are evicted for the meshes; once nothing
// is left to evict, Flush fails with ErrOverBudget, every resident mesh
// keeps its bytes, and after some are removed new meshes fit.
func TestManagersOverBudget(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		b := newBudget(t, dev, budget.Options{Bytes: 4 << 20})
		pa, ma := account(t, b, "pool"), account(t, b, "meshes")
		p, err := pool.New(pa, pool.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Release()
		pa.SetReclaimer(p.Shrink)
		var leases []pool.Lease
		for range 4 {
			l, err := p.Acquire(256<<10, 256, device.Uniform|device.CopyDst)
			if err != nil {
				t.Fatal(err)
			}
			leases = append(leases, l)
		}
		for _, l := range leases {
			if err := p.Put(l); err != nil {
				t.Fatal(err)
			}
		}
		if p.Stats().BytesIdle == 0 {
			t.Fatal("the pool holds no idle buffers")
		}
		ms := newMeshSet(t, dev, ma, mesh.Options{MinSlabBytes: 64 << 10})
		var overErr error
		for round := 0; round < 200 && overErr == nil; round++ {
			overErr = ms.frame(8)
		}
		if !errors.Is(overErr, budget.ErrOverBudget) {
			t.Fatalf("the meshes never reached the budget, or failed otherwise: %v", overErr)
		}
		if p.Stats().BytesIdle != 0 {
			t.Errorf("the pool still holds %d idle bytes after the meshes ran out of budget", p.Stats().BytesIdle)
		}
		ms.verify()
		if u := b.Usage(); u.Bytes > u.Limit || u.Refusals == 0 {
			t.Fatalf("usage %+v", u)
		}
		// Remove half; the allocator is still usable and the memory freed
		// within its slabs takes new meshes.
		ms.removeSome(2)
		if err := ms.frame(1); err != nil {
			t.Fatalf("a frame after removing half: %v", err)
		}
		ms.verify()
	})
}

// TestFaultsWithBudget runs frames of meshes under a budget on devices
// that refuse the k-th creation, for each k up to past the last: every
// Flush succeeds or fails with an out-of-memory error (the device's or the
// budget's; the allocator mostly gets by, compacting its slabs when a
// growth is refused), leaves every mesh before it intact, and the budget's
// usage equals the device's live bytes at every step.
func TestFaultsWithBudget(t *testing.T) {
	for k := 1; ; k++ {
		dev := testdevice.Host(t, host.Options{FailCreateAt: k})
		b := newBudget(t, dev, budget.Options{Bytes: 1 << 20})
		ms := newMeshSet(t, dev, account(t, b, "meshes"), mesh.Options{MinSlabBytes: 16 << 10})
		for round := range 40 {
			err := ms.frame(6)
			switch {
			case err == nil:
			case errors.Is(err, device.ErrOutOfMemory):
				ms.removeSome(3)
			default:
				t.Fatalf("k %d, round %d: %v", k, round, err)
			}
			ms.verify()
			if u, d := b.Usage(), dev.Stats(); u.Bytes != d.Bytes || u.Bytes > u.Limit {
				t.Fatalf("k %d, round %d: budget holds %d bytes, the device %d", k, round, u.Bytes, d.Bytes)
			}
		}
		if b.Usage().Refusals == 0 {
			t.Fatalf("k %d: the budget never refused: the test must reach it (usage %+v)", k, b.Usage())
		}
		if dev.Stats().FailedCreates == 0 {
			return // k is past the last creation: every refusal was tried
		}
	}
}

// TestShrinkReclaims: one mesh allocator unloads most of a level, leaving
// its slabs mostly empty; a second one's load, which would not fit the
// budget, gets through because the first's reclaimer shrinks its slabs.
func TestShrinkReclaims(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		b := newBudget(t, dev, budget.Options{Bytes: 1536 << 10})
		oldAcct, newAcct := account(t, b, "old level"), account(t, b, "new level")
		old, err := mesh.New(oldAcct, mesh.Options{MinSlabBytes: 16 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer old.Release()
		oldAcct.SetReclaimer(old.Shrink)
		cur, err := mesh.New(newAcct, mesh.Options{MinSlabBytes: 16 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Release()
		load := func(m *mesh.Allocator, n int) []mesh.Handle {
			var hs []mesh.Handle
			for i := range n {
				h, err := m.Add(mesh.Mesh{VertexStride: 12, Vertices: make([]byte, 12*(100+i%50)), IndexFormat: mesh.Uint32, Indices: make([]byte, 4*3*40)})
				if err != nil {
					t.Fatal(err)
				}
				hs = append(hs, h)
			}
			return hs
		}
		hs := load(old, 500)
		if err := old.Flush(); err != nil {
			t.Fatal(err)
		}
		for i, h := range hs {
			if i%8 != 0 {
				if err := old.Remove(h); err != nil {
					t.Fatal(err)
				}
			}
		}
		before := b.Usage()
		load(cur, 500)
		if err := cur.Flush(); err != nil {
			t.Fatalf("the new level did not fit after the old one's slabs shrank: %v (usage before %+v)", err, before)
		}
		u := b.Usage()
		if u.Reclaims == 0 || old.Stats().Shrinks == 0 {
			t.Fatalf("no reclaim: %+v, old level's stats %+v", u, old.Stats())
		}
		t.Logf("old level %d -> %d bytes; new level %d; %d reclaims gave back %d bytes",
			before.Accounts[0].Bytes, u.Accounts[0].Bytes, u.Accounts[1].Bytes, u.Reclaims, u.Reclaimed)
	})
}

// TestBindlessReclaims: a bindless registry unloads most of its textures,
// leaving whole pages empty; a buffer that would not fit the budget gets
// through because the registry's reclaimer releases the empty pages, and
// every texture still registered reads back with the texels it was
// registered with (checksummed). A request that no release makes room for
// is refused, with the registry intact and usable.
func TestBindlessReclaims(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		const side, layers = 32, 8
		page := uint64(side * side * 4 * layers) // 32 KiB
		b := newBudget(t, dev, budget.Options{Bytes: 8 * page})
		ta, own := account(t, b, "textures"), account(t, b, "own")
		reg, err := bindless.New[int](ta, bindless.Options{LayersPerPage: layers, MaxPages: 16})
		if err != nil {
			t.Fatal(err)
		}
		defer reg.Release()
		ta.SetReclaimer(reg.Shrink)
		key := bindless.Key{Format: device.RGBA8Unorm, Width: side, Height: side}
		ts := &textureSet{t: t, dev: dev, reg: reg, key: key, seed: 7, sums: map[int]uint64{}}
		texels, sums, verify := ts.texels, ts.sums, ts.verify
		for id := range 5 * layers { // pages 1 to 5
			if _, err := reg.Register(id, key, texels(id)); err != nil {
				t.Fatal(err)
			}
			sums[id] = checksum(texels(id))
		}
		// Pages 2 and 4 empty out; pages 1, 3 and 5 keep a texture each.
		for id := range 5 * layers {
			if p := id/layers + 1; p == 2 || p == 4 || id%layers != 0 {
				if err := reg.Unregister(id); err != nil {
					t.Fatal(err)
				}
				delete(sums, id)
			}
		}
		before := b.Usage()
		// Four pages' worth: over the limit unless pages are released.
		buf, err := own.CreateBuffer(device.BufferDesc{Label: "big", Size: 4 * page, Usage: device.Vertex | device.CopyDst})
		if err != nil {
			t.Fatalf("the buffer did not fit after the registry's empty pages were released: %v (usage before %+v)", err, before)
		}
		u, st := b.Usage(), reg.Stats()
		if u.Reclaims != 1 || u.Reclaimed < 2*page || st.PagesReleased != 2 || st.PagesTrimmed != 4 || st.BytesReleased != u.Reclaimed || st.Vacant != 2 {
			t.Fatalf("usage %+v, registry %+v", u, st)
		}
		verify()
		t.Logf("textures %d -> %d bytes: %d pages released, %d bytes", before.Accounts[0].Bytes, u.Accounts[0].Bytes, st.PagesReleased, st.BytesReleased)
		// Nothing more to release (pages 1, 3 and 5 were trimmed to their
		// one layer in use, page 0 to its 3 defaults): refused, everything intact.
		if _, err := own.CreateBuffer(device.BufferDesc{Label: "more", Size: 4 * page, Usage: device.Vertex | device.CopyDst}); !errors.Is(err, budget.ErrOverBudget) {
			t.Fatalf("a request nothing makes room for: %v", err)
		}
		verify()
		// The registry is usable: with the buffer gone, registrations take
		// the lowest page below full capacity each time the others are
		// full: page 1 grows back (1, 2, 4, 8 layers), page 2 is recreated
		// in its released slot, page 3 grows back; 4 stays vacant, 5
		// trimmed.
		buf.Release()
		for id := 1000; id < 1000+3*(layers-1)+1; id++ {
			if _, err := reg.Register(id, key, texels(id)); err != nil {
				t.Fatal(err)
			}
			sums[id] = checksum(texels(id))
		}
		verify()
		if u, st := b.Usage(), reg.Stats(); u.Bytes > u.Limit || st.Vacant != 1 || st.PagesGrown != 6 || reg.Pages()[5].Desc().Layers != 1 {
			t.Fatalf("usage %+v, registry %+v", u, reg.Stats())
		}
	})
}

// TestBindlessTrimRefused: a budget with no room for the smaller texture
// of a trim, or the larger one of a growth, refuses it; the registry is
// as it was (the same page textures, version and stats, every texture's
// texels checksummed), and trims and grows once there is room.
func TestBindlessTrimRefused(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		const side, layers = 16, 8
		layer := uint64(side * side * 4)
		b := newBudget(t, dev, budget.Options{Bytes: 64 * layer})
		ta, own := account(t, b, "textures"), account(t, b, "own")
		reg, err := bindless.New[int](ta, bindless.Options{LayersPerPage: layers, MaxPages: 8})
		if err != nil {
			t.Fatal(err)
		}
		defer reg.Release()
		key := bindless.Key{Format: device.RGBA8Unorm, Width: side, Height: side}
		ts := &textureSet{t: t, dev: dev, reg: reg, key: key, seed: 9, sums: map[int]uint64{}}
		texels, sums, verify := ts.texels, ts.sums, ts.verify
		for id := range layers { // page 1
			if _, err := reg.Register(id, key, texels(id)); err != nil {
				t.Fatal(err)
			}
			sums[id] = checksum(texels(id))
		}
		for id := 2; id < layers; id++ { // layers 0 and 1 stay
			if err := reg.Unregister(id); err != nil {
				t.Fatal(err)
			}
			delete(sums, id)
		}
		// Fill the budget to the byte: no room for a 2-layer texture.
		fill := func() device.Buffer {
			t.Helper()
			u := b.Usage()
			buf, err := own.CreateBuffer(device.BufferDesc{Label: "fill", Size: u.Limit - u.Bytes, Usage: device.Vertex | device.CopyDst})
			if err != nil {
				t.Fatal(err)
			}
			return buf
		}
		buf := fill()
		pages, version, st := reg.Pages(), reg.Version(), reg.Stats()
		if freed, err := reg.Shrink(); err != nil || freed != 0 {
			t.Fatalf("a refused trim: Shrink freed %d, %v", freed, err)
		}
		if !slices.Equal(reg.Pages(), pages) || reg.Version() != version || reg.Stats() != st {
			t.Fatalf("a refused trim changed the registry: %+v, was %+v", reg.Stats(), st)
		}
		verify()
		buf.Release()
		freed, err := reg.Shrink()
		if err != nil || freed != 6*layer+5*4 || reg.Pages()[1].Desc().Layers != 2 || reg.Stats().PagesTrimmed != 2 { // page 0 too: 8 layers of 1x1, 3 in use
			t.Fatalf("Shrink with room: freed %d, %v, %+v", freed, err, reg.Stats())
		}
		verify()
		// A growth refused: ErrFull and ErrOverBudget, nothing changed.
		buf = fill()
		pages, version, st = reg.Pages(), reg.Version(), reg.Stats()
		if _, err := reg.Register(100, key, texels(100)); !errors.Is(err, bindless.ErrFull) || !errors.Is(err, budget.ErrOverBudget) {
			t.Fatalf("Register needing a growth over budget: %v", err)
		}
		if !slices.Equal(reg.Pages(), pages) || reg.Version() != version || reg.Stats() != st {
			t.Fatalf("a refused growth changed the registry: %+v, was %+v", reg.Stats(), st)
		}
		verify()
		buf.Release()
		h, err := reg.Register(100, key, texels(100))
		if err != nil || h.String() != "1:2" || reg.Pages()[1].Desc().Layers != 4 || reg.Stats().PagesGrown != 1 {
			t.Fatalf("Register with room: %v, %v, %+v", h, err, reg.Stats())
		}
		sums[100] = checksum(texels(100))
		verify()
	})
}

// textureSet is a bindless registry's textures of one key under test:
// each id's texels are random from (id, seed), and sums holds the
// checksum of every texture that must read back.
type textureSet struct {
	t    *testing.T
	dev  device.Device
	reg  *bindless.Registry[int]
	key  bindless.Key
	seed uint64
	sums map[int]uint64
}

// texels returns texture id's texels.
func (s *textureSet) texels(id int) []byte {
	px := make([]byte, s.key.Width*s.key.Height*4)
	r := rand.New(rand.NewPCG(uint64(id), s.seed))
	for i := range px {
		px[i] = byte(r.Uint32())
	}
	return px
}

// verify reads every texture in sums back from where the registry says
// it is.
func (s *textureSet) verify() {
	s.t.Helper()
	for id, sum := range s.sums {
		h, ok := s.reg.Handle(id)
		tex, layer, found := s.reg.Locate(h)
		if !ok || !found {
			s.t.Fatalf("texture %d: handle %v, located %v", id, h, found)
		}
		got := make([]byte, s.key.Width*s.key.Height*4)
		if err := s.dev.ReadTexture(tex, layer, 0, got); err != nil {
			s.t.Fatal(err)
		}
		if checksum(got) != sum {
			s.t.Fatalf("texture %d at %v lost its texels", id, h)
		}
	}
}

// checksum is FNV-1a of p.
func checksum(p []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range p {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}
