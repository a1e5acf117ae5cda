package bindless_test

import (
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
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
