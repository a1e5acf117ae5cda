package pool_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/pool"
)

const rw = device.CopySrc | device.CopyDst

func newPool(t *testing.T, dev device.Device, opts pool.Options) *pool.Pool {
	t.Helper()
	p, err := pool.New(dev, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Release)
	return p
}

func acquire(t *testing.T, p *pool.Pool, size, align uint64, usage device.Usage) pool.Lease {
	t.Helper()
	l, err := p.Acquire(size, align, usage)
	if err != nil {
		t.Fatalf("Acquire(%d, %d, %v): %v", size, align, usage, err)
	}
	if l.Buffer() == nil || l.Size() < size || l.Size()%max(align, 4) != 0 || l.Buffer().Size() != l.Size() {
		t.Fatalf("Acquire(%d, %d): lease of %d bytes, buffer %v", size, align, l.Size(), l.Buffer())
	}
	return l
}

func release(t *testing.T, p *pool.Pool, l pool.Lease) {
	t.Helper()
	if err := p.Put(l); err != nil {
		t.Fatal(err)
	}
}

// checkStats checks the invariants between a pool's counts.
func checkStats(t *testing.T, p *pool.Pool) pool.Stats {
	t.Helper()
	s := p.Stats()
	if s.Buffers != s.Leased+s.Idle || s.BytesHeld != s.BytesLeased+s.BytesIdle ||
		s.Acquires != s.Reuses+s.Creations || s.Leased < 0 || s.Idle < 0 {
		t.Fatalf("inconsistent stats %+v", s)
	}
	return s
}

// TestReuse runs on every backend: a released buffer, with its contents,
// serves the next request of its class, and Close releases everything.
func TestReuse(t *testing.T) {
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		p := newPool(t, dev, pool.Options{Label: "test"})
		a := acquire(t, p, 100, 0, rw)
		if a.Size() != 104 {
			t.Errorf("100 bytes leased as %d", a.Size())
		}
		data := bytes.Repeat([]byte{1, 2, 3, 4}, 26)
		if err := dev.WriteBuffer(a.Buffer(), 0, data); err != nil {
			t.Fatal(err)
		}
		buf := a.Buffer()
		release(t, p, a)
		if a.Buffer() != nil || a.Size() != 0 {
			t.Error("released lease still gives its buffer")
		}
		b := acquire(t, p, 97, 0, rw) // the same class
		if b.Buffer() != buf {
			t.Fatal("idle buffer of the class not reused")
		}
		got := make([]byte, len(data))
		if err := dev.ReadBuffer(b.Buffer(), 0, got); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("reused buffer holds %v, %v", got, err)
		}
		c := acquire(t, p, 100, 0, rw|device.Storage) // another usage
		if c.Buffer() == buf {
			t.Fatal("buffer reused for another usage")
		}
		s := checkStats(t, p)
		if s.Buffers != 2 || s.Leased != 2 || s.Creations != 2 || s.Reuses != 1 || s.ReuseRate() != 1.0/3 {
			t.Errorf("stats %+v", s)
		}
		release(t, p, b)
		p.Release()
		p.Release()
		if s := p.Stats(); s.Buffers != 0 || s.BytesHeld != 0 {
			t.Errorf("after Close: %+v", s)
		}
		if _, err := p.Acquire(4, 0, rw); !errors.Is(err, device.ErrReleased) {
			t.Errorf("Acquire after Close: %v", err)
		}
		if err := p.Put(c); !errors.Is(err, device.ErrReleased) {
			t.Errorf("Release after Close: %v", err)
		}
		if err := dev.Wait(); err != nil {
			t.Fatal(err)
		}
		if h, ok := dev.(*host.Device); ok && h.Stats().Buffers != 0 {
			t.Errorf("host device holds %d buffers after Close", h.Stats().Buffers)
		}
	})
}

func TestBestFit(t *testing.T) {
	tests := []struct {
		name  string
		idle  []uint64 // sizes acquired then released, in order
		size  uint64
		align uint64
		want  int // index in idle of the buffer served, -1 for a new one
	}{
		{"exact class", []uint64{1024, 2048}, 1000, 0, 0},
		{"smallest that fits", []uint64{1536, 1152, 1280}, 1000, 0, 1},
		{"below the request's class never", []uint64{896, 960}, 1000, 0, -1},
		{"under twice the class", []uint64{1920}, 1000, 0, 0},
		{"twice the class is too big", []uint64{2048}, 1000, 0, -1},
		{"alignment skips a class", []uint64{1152, 1280}, 1000, 256, 1},
		{"alignment skips every class", []uint64{1152, 1408}, 1000, 512, -1},
		{"most recently released of a class", []uint64{1024, 1024, 1024}, 1024, 0, 2},
	}
	testdevice.Each(t, func(t *testing.T, dev device.Device) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) { bestFit(t, dev, tc.idle, tc.size, tc.align, tc.want) })
		}
	})
}

// bestFit acquires buffers of the sizes in idle, releases them in order,
// and checks which one a request of size and align is served (want: its
// position in idle, -1 for a new buffer).
func bestFit(t *testing.T, dev device.Device, idle []uint64, size, align uint64, want int) {
	p := newPool(t, dev, pool.Options{})
	var ls []pool.Lease
	var bufs []device.Buffer
	for _, n := range idle {
		l := acquire(t, p, n, 0, rw)
		if l.Size() != n {
			t.Fatalf("setup: %d bytes leased as %d", n, l.Size())
		}
		ls, bufs = append(ls, l), append(bufs, l.Buffer())
	}
	for _, l := range ls {
		release(t, p, l)
	}
	l := acquire(t, p, size, align, rw)
	got := -1
	for k, b := range bufs {
		if b == l.Buffer() {
			got = k
		}
	}
	if got != want {
		t.Errorf("served buffer %d (%d bytes), want %d", got, l.Size(), want)
	}
}

func TestReleaseErrors(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	p := newPool(t, dev, pool.Options{})
	other := newPool(t, dev, pool.Options{})
	a := acquire(t, p, 64, 0, rw)
	release(t, p, a)
	if err := p.Put(a); !errors.Is(err, pool.ErrNotLeased) {
		t.Errorf("double put: %v", err)
	}
	b := acquire(t, p, 64, 0, rw) // a's buffer, leased again
	if b.Buffer() == nil || a.Buffer() != nil {
		t.Fatal("old lease sees the buffer leased again")
	}
	if err := p.Put(a); !errors.Is(err, pool.ErrNotLeased) {
		t.Errorf("release of an old lease of a buffer leased again: %v", err)
	}
	if b.Buffer() == nil {
		t.Fatal("the stale release took the new lease's buffer")
	}
	if err := p.Put(pool.Lease{}); !errors.Is(err, pool.ErrUnknownLease) {
		t.Errorf("zero lease: %v", err)
	}
	o := acquire(t, other, 64, 0, rw)
	if err := p.Put(o); !errors.Is(err, pool.ErrUnknownLease) {
		t.Errorf("lease of another pool: %v", err)
	}
	before := checkStats(t, p)
	for _, c := range []struct {
		size, align uint64
		usage       device.Usage
		want        error
	}{
		{0, 0, rw, pool.ErrInvalidRequest},
		{64, 3, rw, pool.ErrInvalidRequest},
		{64, 2, rw, pool.ErrInvalidRequest},
		{64, 0, 0, pool.ErrInvalidRequest},
		{64, 0, device.MapRead | device.Storage, device.ErrInvalidUsage},
		{256<<20 + 1, 0, rw, pool.ErrTooLarge},
		{1 << 63, 0, rw, pool.ErrTooLarge},
		{4, 1 << 29, rw, pool.ErrTooLarge},
	} {
		if _, err := p.Acquire(c.size, c.align, c.usage); !errors.Is(err, c.want) {
			t.Errorf("Acquire(%d, %d, %v) = %v, want %v", c.size, c.align, c.usage, err, c.want)
		}
	}
	if after := checkStats(t, p); after != before {
		t.Errorf("refused requests changed stats: %+v, then %+v", before, after)
	}
}

func TestBudget(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	p := newPool(t, dev, pool.Options{BudgetBytes: 4096})
	a := acquire(t, p, 2048, 0, rw)
	b := acquire(t, p, 2048, 0, rw)
	before := checkStats(t, p)
	if _, err := p.Acquire(1024, 0, rw); !errors.Is(err, pool.ErrOverBudget) {
		t.Fatalf("past the budget with nothing idle: %v", err)
	}
	if s := checkStats(t, p); s.Refusals != 1 || s.Sub(before) != (pool.Stats{Buffers: 2, Leased: 2, BytesHeld: 4096, BytesLeased: 4096, Refusals: 1}) {
		t.Fatalf("refusal changed the pool: %+v", s)
	}
	release(t, p, a)
	release(t, p, b)
	// 1024 fits no idle buffer (2048 is twice its class): the oldest idle
	// buffer, a's, is evicted to make room.
	c := acquire(t, p, 1024, 0, rw)
	if s := checkStats(t, p); s.BytesHeld != 3072 || s.Evictions != 1 || s.Idle != 1 || dev.Stats().Bytes != 3072 {
		t.Fatalf("after eviction for the budget: %+v, device %+v", s, dev.Stats())
	}
	d := acquire(t, p, 2000, 0, rw) // b's buffer
	if _, err := p.Acquire(2048, 0, device.Storage); !errors.Is(err, pool.ErrOverBudget) {
		t.Fatalf("budget is not per usage: %v", err)
	}
	release(t, p, c)
	release(t, p, d)
	if n := p.Trim(2048); n != 1 || p.Stats().BytesIdle != 2048 {
		t.Fatalf("Trim(2048) evicted %d: %+v", n, p.Stats())
	}
	if n := p.Trim(0); n != 1 || p.Stats().Buffers != 0 || dev.Stats().Buffers != 0 {
		t.Fatalf("Trim(0) evicted %d: %+v", n, p.Stats())
	}
}

// TestDeviceRefuses injects creation failures: the error says what
// failed and wraps the device's, and nothing changes but Refusals.
func TestDeviceRefuses(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	p := newPool(t, dev, pool.Options{BudgetBytes: 1 << 20})
	a := acquire(t, p, 4096, 0, rw)
	release(t, p, a)
	keep := acquire(t, p, 512, 0, rw)
	before, devBefore := checkStats(t, p), dev.Stats()

	dev.FailNextCreates(1)
	_, err := p.Acquire(8192, 0, rw)
	if !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("injected failure: %v", err)
	}
	t.Logf("error: %v", err)
	dev.SetByteBudget(devBefore.Bytes + 1024)
	if _, err := p.Acquire(8192, 0, rw); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("device budget: %v", err)
	}
	after := checkStats(t, p)
	if after.Refusals != 2 || after.Sub(before).Refusals != 2 {
		t.Fatalf("refusals: %+v", after)
	}
	after.Refusals = before.Refusals
	if after != before || dev.Stats().Buffers != devBefore.Buffers || dev.Stats().Bytes != devBefore.Bytes {
		t.Fatalf("refusal changed the pool: %+v, then %+v", before, after)
	}
	dev.SetByteBudget(0)
	// The pool still works, and the idle buffer is still there.
	if l := acquire(t, p, 4000, 0, rw); l.Size() != 4096 || p.Stats().Reuses != 1 {
		t.Fatalf("after refusals: %d bytes, %+v", l.Size(), p.Stats())
	}
	release(t, p, keep)
}

func TestEvictByAge(t *testing.T) { testdevice.Each(t, evictByAge) }

func evictByAge(t *testing.T, dev device.Device) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	p := newPool(t, dev, pool.Options{MaxIdle: 10 * time.Second, Clock: clock})
	a, b, c := acquire(t, p, 64, 0, rw), acquire(t, p, 128, 0, rw), acquire(t, p, 256, 0, rw)
	release(t, p, a) // idle from 1000
	now = now.Add(5 * time.Second)
	release(t, p, b) // idle from 1005
	now = now.Add(4 * time.Second)
	if n := p.Evict(); n != 0 {
		t.Fatalf("evicted %d at 9 s", n)
	}
	now = now.Add(time.Second)
	if n := p.Evict(); n != 1 || p.Stats().Idle != 1 || deviceBuffers(dev, 2) != 2 {
		t.Fatalf("at 10 s: evicted %d, %+v", n, p.Stats())
	}
	// Reuse resets the age: b leased again, released at 1012.
	now = now.Add(2 * time.Second)
	b = acquire(t, p, 128, 0, rw)
	release(t, p, b)
	now = now.Add(9 * time.Second)
	// Release evicts what expired: nothing yet at 1021.
	release(t, p, c)
	if s := p.Stats(); s.Idle != 2 || s.Evictions != 1 {
		t.Fatalf("at 1021: %+v", s)
	}
	now = now.Add(time.Second) // 1022: b is 10 s idle
	if n := p.Evict(); n != 1 || p.Stats().Idle != 1 {
		t.Fatalf("at 1022: evicted %d", n)
	}
	// A clock going backwards evicts nothing early.
	now = now.Add(-time.Hour)
	if n := p.Evict(); n != 0 {
		t.Fatalf("backwards clock evicted %d", n)
	}
	if s := checkStats(t, p); s.Evictions != 2 || s.Buffers != 1 {
		t.Fatalf("final %+v", s)
	}
}

// TestClassTooLarge: a request the device could hold, whose class it
// could not.
func TestClassTooLarge(t *testing.T) {
	p := newPool(t, testdevice.Host(t, host.Options{Limits: device.Limits{MaxBufferSize: 300 << 20}}), pool.Options{})
	if _, err := p.Acquire(290<<20, 0, rw); !errors.Is(err, pool.ErrTooLarge) {
		t.Fatalf("290 MiB (class 320 MiB) of 300: %v", err)
	}
	acquire(t, p, 280<<20, 0, rw) // class 288 MiB
}

// deviceBuffers returns the buffers a host device holds, or want on
// another backend, which does not count them.
func deviceBuffers(dev device.Device, want int) int {
	if h, ok := dev.(*host.Device); ok {
		return h.Stats().Buffers
	}
	return want
}

func TestNewInvalid(t *testing.T) {
	dev := testdevice.Host(t, host.Options{})
	if _, err := pool.New(dev, pool.Options{MaxIdle: -1}); !errors.Is(err, pool.ErrInvalidOptions) {
		t.Fatalf("negative MaxIdle: %v", err)
	}
	// A budget below the smallest buffer: every Acquire would fail.
	for _, b := range []uint64{1, device.CopyAlignment - 1} {
		if _, err := pool.New(dev, pool.Options{BudgetBytes: b}); !errors.Is(err, pool.ErrInvalidOptions) {
			t.Fatalf("BudgetBytes %d: %v", b, err)
		}
	}
	p := newPool(t, dev, pool.Options{BudgetBytes: device.CopyAlignment})
	release(t, p, acquire(t, p, 1, 0, device.Uniform|device.CopyDst))
}

// TestNilDevice: New refuses a nil device with ErrInvalidOptions instead
// of panicking (issue 21).
func TestNilDevice(t *testing.T) {
	if _, err := pool.New(nil, pool.Options{}); !errors.Is(err, pool.ErrInvalidOptions) {
		t.Fatalf("New(nil): %v, want ErrInvalidOptions", err)
	}
}

// TestHostileSizes: on a device that reports a largest buffer near 2^64,
// requests whose rounding to their alignment or class passes 2^64 are
// refused with ErrTooLarge, never leased a smaller buffer; a budget check
// does not wrap either (issue 21).
func TestHostileSizes(t *testing.T) {
	dev := testdevice.Host(t, host.Options{Limits: device.Limits{MaxBufferSize: 1<<64 - 4}})
	p := newPool(t, dev, pool.Options{BudgetBytes: 1 << 20})
	for _, c := range []struct{ size, align uint64 }{
		{1<<64 - 8, 16}, {1<<64 - 5, 0}, {1<<64 - 1<<20, 1 << 21}, {1<<63 + 1, 0}, {1 << 63, 1 << 62},
		{15<<59 + 1, 0}, {1<<62 + 1, 0},
	} {
		before := checkStats(t, p)
		l, err := p.Acquire(c.size, c.align, rw)
		if err == nil {
			t.Fatalf("Acquire(%d, %d) leased %d bytes", c.size, c.align, l.Size())
		}
		if !errors.Is(err, pool.ErrTooLarge) && !errors.Is(err, pool.ErrOverBudget) {
			t.Fatalf("Acquire(%d, %d): %v, want ErrTooLarge or ErrOverBudget", c.size, c.align, err)
		}
		after := checkStats(t, p)
		after.Refusals = before.Refusals
		if after != before {
			t.Fatalf("Acquire(%d, %d) refused changed stats %+v to %+v", c.size, c.align, before, after)
		}
	}
	acquire(t, p, 4096, 0, rw)
}
