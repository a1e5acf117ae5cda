package pool_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/pool"
)

// scanPool is the baseline, written the simple way: every buffer in one
// slice, acquire scanning all of them for the smallest idle one that fits,
// put scanning for the buffer's id.
type scanPool struct {
	dev    device.Device
	bufs   []scanBuf
	nextID uint64
}

type scanBuf struct {
	id    uint64
	buf   device.Buffer
	size  uint64
	usage device.Usage
	inUse bool
}

var errScanUnknown = errors.New("unknown buffer")

func (p *scanPool) acquire(size, align uint64, usage device.Usage) (uint64, error) {
	best := -1
	for i := range p.bufs {
		b := &p.bufs[i]
		if !b.inUse && b.usage == usage && b.size >= size && b.size%align == 0 &&
			(best < 0 || b.size < p.bufs[best].size) {
			best = i
		}
	}
	if best >= 0 {
		p.bufs[best].inUse = true
		return p.bufs[best].id, nil
	}
	size = (size + align - 1) &^ (align - 1)
	buf, err := p.dev.CreateBuffer(device.BufferDesc{Size: size, Usage: usage})
	if err != nil {
		return 0, err
	}
	p.nextID++
	p.bufs = append(p.bufs, scanBuf{id: p.nextID, buf: buf, size: size, usage: usage, inUse: true})
	return p.nextID, nil
}

func (p *scanPool) release(id uint64) error {
	for i := range p.bufs {
		if p.bufs[i].id == id {
			if !p.bufs[i].inUse {
				return errScanUnknown
			}
			p.bufs[i].inUse = false
			return nil
		}
	}
	return errScanUnknown
}

// heldSizes returns n buffer sizes spread over the 48 classes from 64
// bytes to 4 KiB, each a class's exact size, so both pools hold the same.
func heldSizes(n int) []uint64 {
	var classes []uint64
	for size := uint64(64); size < 4096; size += size / 8 {
		classes = append(classes, size)
	}
	sizes := make([]uint64, n)
	for i := range sizes {
		sizes[i] = classes[(i*7)%len(classes)]
	}
	return sizes
}

var heldCounts = []int{10, 1000, 100000}

// BenchmarkAcquirePut measures an Acquire and Release pair with n
// buffers held, half leased and half idle; each pair asks for the size of
// one of the idle buffers, in turn, and is served by it. ns/op is per pair.
func BenchmarkAcquirePut(b *testing.B) {
	for _, n := range heldCounts {
		b.Run(fmt.Sprintf("held=%d", n), func(b *testing.B) {
			dev, err := host.New(host.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer dev.Release()
			p, err := pool.New(dev, pool.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Release()
			sizes := heldSizes(n)
			ls := make([]pool.Lease, n)
			for i, size := range sizes {
				if ls[i], err = p.Acquire(size, 0, rw); err != nil {
					b.Fatal(err)
				}
			}
			var asks []uint64
			for i := 0; i < n; i += 2 {
				p.Put(ls[i])
				if len(asks) < 8 {
					asks = append(asks, sizes[i])
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				l, err := p.Acquire(asks[i%len(asks)], 0, rw)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Put(l); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if s := p.Stats(); s.Creations != uint64(n) {
				b.Fatalf("created %d buffers in the loop", s.Creations-uint64(n))
			}
		})
	}
}

// BenchmarkScanAcquirePut is the baseline of BenchmarkAcquirePut:
// the same buffers and requests on scanPool.
func BenchmarkScanAcquirePut(b *testing.B) {
	for _, n := range heldCounts {
		b.Run(fmt.Sprintf("held=%d", n), func(b *testing.B) {
			dev, err := host.New(host.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer dev.Release()
			p := &scanPool{dev: dev}
			sizes := heldSizes(n)
			ids := make([]uint64, n)
			for i, size := range sizes {
				if ids[i], err = p.acquire(size, 4, rw); err != nil {
					b.Fatal(err)
				}
			}
			var asks []uint64
			for i := 0; i < n; i += 2 {
				p.release(ids[i])
				if len(asks) < 8 {
					asks = append(asks, sizes[i])
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				id, err := p.acquire(asks[i%len(asks)], 4, rw)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.release(id); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if len(p.bufs) != n {
				b.Fatalf("created %d buffers in the loop", len(p.bufs)-n)
			}
		})
	}
}
