package pool_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/pool"
)

// FuzzPool drives a pool on a host device with a stream of operations (a
// byte each, and argument bytes for some), injected creation failures and
// a moving clock, and checks after every step: the stats' invariants, the
// budget, that the device holds exactly the pool's buffers, that leases are
// distinct buffers of the size they asked for, and that a lease put back
// is refused. The device reports a largest buffer near 2^64, and hostile
// requests (sizes and alignments near 2^32 and 2^64) must be refused with
// ErrTooLarge or ErrOverBudget, changing nothing but Refusals.
// hostile are request sizes near 2^32, 2^62, 2^63 and 2^64, where a
// rounding up wraps.
var hostile = []uint64{1<<64 - 1, 1<<64 - 16, 1<<64 - 1<<20, 1 << 63, 1<<63 + 1, 15<<59 + 1, 1<<62 + 1, 1<<32 + 1, 1 << 32, 1<<64 - 4096}

func FuzzPool(f *testing.F) {
	f.Add([]byte{0, 10, 0, 0, 200, 3, 1, 0, 2, 0, 0, 10, 0})
	f.Add([]byte{0, 255, 9, 0, 255, 9, 0, 255, 9, 1, 1, 1, 0, 4, 4, 5, 0, 60, 1, 6, 0})
	f.Add([]byte{7, 0, 3, 2, 7, 1, 0, 0, 0, 10, 0, 0, 7, 5, 1, 60, 7, 9, 7, 28})
	f.Fuzz(func(t *testing.T, ops []byte) {
		const budget = 64 << 10
		dev, err := host.New(host.Options{Limits: device.Limits{MaxBufferSize: 1<<64 - 4}})
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Release()
		now := time.Unix(0, 0)
		p, err := pool.New(dev, pool.Options{BudgetBytes: budget, MaxIdle: 10 * time.Second, Clock: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		type held struct {
			l    pool.Lease
			size uint64
		}
		var leases []held
		var stale []pool.Lease
		next := func(k *int) int {
			if *k+1 < len(ops) {
				*k++
				return int(ops[*k])
			}
			return 0
		}
		for k := 0; k < len(ops); k++ {
			switch ops[k] % 8 {
			case 0: // acquire: size from a byte (up to 32 KiB), alignment, usage
				size := uint64(next(&k))*uint64(1+next(&k)%128) + 1
				align := uint64(4) << (next(&k) % 9)
				usage := rw
				if ops[k]%2 == 1 {
					usage |= device.Storage
				}
				before := p.Stats()
				l, err := p.Acquire(size, align, usage)
				switch {
				case err == nil:
					if l.Size() < size || l.Size()%align != 0 || l.Buffer().Desc().Usage != usage {
						t.Fatalf("op %d: Acquire(%d, %d) leased %d bytes %v", k, size, align, l.Size(), l.Buffer().Desc().Usage)
					}
					leases = append(leases, held{l, size})
				case errors.Is(err, pool.ErrOverBudget) || errors.Is(err, device.ErrOutOfMemory):
					after := p.Stats()
					after.Refusals--
					if after != before {
						t.Fatalf("op %d: refused Acquire changed stats %+v to %+v", k, before, after)
					}
				default:
					t.Fatalf("op %d: Acquire(%d, %d): %v", k, size, align, err)
				}
			case 1: // put a lease back
				if len(leases) > 0 {
					j := next(&k) % len(leases)
					if err := p.Put(leases[j].l); err != nil {
						t.Fatalf("op %d: %v", k, err)
					}
					stale = append(stale, leases[j].l)
					leases[j] = leases[len(leases)-1]
					leases = leases[:len(leases)-1]
				}
			case 2: // release a stale lease
				if len(stale) > 0 {
					if err := p.Put(stale[next(&k)%len(stale)]); !errors.Is(err, pool.ErrNotLeased) {
						t.Fatalf("op %d: stale put: %v", k, err)
					}
				}
			case 3: // time passes
				now = now.Add(time.Duration(next(&k)) * 100 * time.Millisecond)
			case 4:
				p.Evict()
			case 5:
				p.Trim(uint64(next(&k)) << 8)
			case 6: // the device refuses the next creations
				dev.FailNextCreates(next(&k) % 3)
			case 7: // a hostile request
				size := hostile[next(&k)%len(hostile)] - uint64(next(&k)%8)
				align := uint64(4) << (next(&k) % 62)
				before := p.Stats()
				l, err := p.Acquire(size, align, rw)
				if err == nil {
					t.Fatalf("op %d: Acquire(%d, %d) leased %d bytes", k, size, align, l.Size())
				}
				if !errors.Is(err, pool.ErrTooLarge) && !errors.Is(err, pool.ErrOverBudget) && !errors.Is(err, pool.ErrInvalidRequest) {
					t.Fatalf("op %d: Acquire(%d, %d): %v", k, size, align, err)
				}
				after := p.Stats()
				after.Refusals = before.Refusals
				if after != before {
					t.Fatalf("op %d: refused Acquire changed stats %+v to %+v", k, before, after)
				}
			}

			s := p.Stats()
			if s.Buffers != s.Leased+s.Idle || s.BytesHeld != s.BytesLeased+s.BytesIdle ||
				s.Acquires != s.Reuses+s.Creations || s.BytesHeld > budget || s.Leased != len(leases) {
				t.Fatalf("op %d: stats %+v with %d leases", k, s, len(leases))
			}
			if d := dev.Stats(); d.Buffers != s.Buffers || d.Bytes != s.BytesHeld {
				t.Fatalf("op %d: device holds %d buffers, %d bytes; pool %+v", k, d.Buffers, d.Bytes, s)
			}
			seen := map[device.Buffer]bool{}
			var leased uint64
			for _, h := range leases {
				b := h.l.Buffer()
				if b == nil || seen[b] || h.l.Size() < h.size {
					t.Fatalf("op %d: lease of %d bytes: buffer %v (seen %v)", k, h.size, b, seen[b])
				}
				seen[b] = true
				leased += h.l.Size()
			}
			if leased != s.BytesLeased {
				t.Fatalf("op %d: leases hold %d bytes, stats %+v", k, leased, s)
			}
		}
		p.Release()
		if d := dev.Stats(); d.Buffers != 0 {
			t.Fatalf("device holds %d buffers after Close", d.Buffers)
		}
	})
}
