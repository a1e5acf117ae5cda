package bindless_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/staging"
)

// BenchmarkLookup measures Handle (by id) and Source (by handle) with
// many buckets: both are O(1), so the cost does not grow with the bucket
// count (the reference scans every bucket).
func BenchmarkLookup(b *testing.B) {
	for _, buckets := range []int{1, 64} {
		dev, err := host.New(host.Options{Limits: device.Limits{MaxTextureSize2D: 1 << 14}})
		if err != nil {
			b.Fatal(err)
		}
		r, err := bindless.New[int](dev, bindless.Options{LayersPerPage: 16, MaxPages: 1 << 12})
		if err != nil {
			b.Fatal(err)
		}
		var handles []bindless.Handle
		for i := range 1024 {
			key := bindless.Key{Format: device.R8Unorm, Width: uint32(4 + i%buckets), Height: 4}
			h, err := r.Register(i, key, make([]byte, key.Width*4))
			if err != nil {
				b.Fatal(err)
			}
			handles = append(handles, h)
		}
		b.Run(fmt.Sprintf("Handle/buckets=%d", buckets), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, ok := r.Handle(i & 1023); !ok {
					b.Fatal("missing")
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("Source/buckets=%d", buckets), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, ok := r.Source(handles[i&1023]); !ok {
					b.Fatal("missing")
				}
				i++
			}
		})
		r.Release()
		dev.Release()
	}
}

// BenchmarkChurn measures an Unregister and a Register of 1x1 textures
// in a registry holding about 1,000 of them over pages of 256 layers, the
// ids freed in a scattered order: the cost of finding and giving back a
// layer (the device's write of one texel is the rest).
func BenchmarkChurn(b *testing.B) {
	dev, err := host.New(host.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Release()
	r, err := bindless.New[int](dev, bindless.Options{LayersPerPage: 256, MaxPages: 16})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Release()
	key := bindless.Key{Format: device.R8Unorm, Width: 1, Height: 1}
	px := []byte{7}
	const n = 1024
	for i := range n {
		if _, err := r.Register(i, key, px); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		old := (i * 397) % n // a scattered order over the live ids
		if err := r.Unregister(old + i/n*n); err != nil {
			b.Fatal(err)
		}
		if _, err := r.Register(old+(i/n+1)*n, key, px); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkCompact measures Compact after an unload: 1,024 4x4 textures
// over pages of 64 layers, three in four unregistered (every fourth
// kept), then Compact packs the 256 left into 4 pages and releases the
// other 12. Reported per texture moved; the setup is not timed.
func BenchmarkCompact(b *testing.B) {
	dev, err := host.New(host.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Release()
	key := bindless.Key{Format: device.RGBA8Unorm, Width: 4, Height: 4}
	px := make([]byte, 64)
	moves := 0
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		r, err := bindless.New[int](dev, bindless.Options{LayersPerPage: 64, MaxPages: 32})
		if err != nil {
			b.Fatal(err)
		}
		for i := range 1024 {
			if _, err := r.Register(i, key, px); err != nil {
				b.Fatal(err)
			}
		}
		for i := range 1024 {
			if i%4 != 3 {
				if err := r.Unregister(i); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StartTimer()
		n, _, err := r.Compact()
		if err != nil || n == 0 {
			b.Fatalf("Compact: %d moves, %v", n, err)
		}
		moves += n
		b.StopTimer()
		r.Release()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(moves), "ns/move")
}

// BenchmarkRegisterFrame measures a frame of a streaming renderer's
// texture loads on the webgpu device: 512 textures of 32x32 RGBA8 (2 MiB)
// registered through a staging belt into pages of 256 layers, the frame
// submitted (Fence, whose Submit is timed with the frame: it is where
// wgpu validates what the Registers recorded), then the textures
// unregistered, untimed. Metrics: ns/register, the frame's time per
// texture with its submit, and submit-us/frame alone.
func BenchmarkRegisterFrame(b *testing.B) {
	dev := testdevice.WebGPU(b, webgpu.Options{})
	belt, err := staging.New(dev, staging.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer belt.Release()
	r, err := bindless.New[int](dev, bindless.Options{LayersPerPage: 256, MaxPages: 8, Belt: belt})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Release()
	key := bindless.Key{Format: device.RGBA8Unorm, Width: 32, Height: 32}
	const n = 512
	px := make([]byte, 32*32*4)
	frame := func() (time.Duration, time.Duration) {
		t0 := time.Now()
		for i := range n {
			if _, err := r.Register(i, key, px); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		fence, err := dev.Fence()
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := belt.EndFrame(fence); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			if err := r.Unregister(i); err != nil {
				b.Fatal(err)
			}
		}
		if err := dev.Wait(); err != nil {
			b.Fatal(err)
		}
		return t2.Sub(t0), t2.Sub(t1)
	}
	frame() // pages and chunks made, untimed
	var total, submit time.Duration
	for b.Loop() {
		f, s := frame()
		total += f
		submit += s
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N*n), "ns/register")
	b.ReportMetric(float64(submit.Microseconds())/float64(b.N), "submit-us/frame")
}
