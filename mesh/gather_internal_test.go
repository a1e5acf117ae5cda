package mesh

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestGatherParallel: a run gathered by several goroutines is byte for byte
// the run gathered by one (every array at its offset, its slot's padding
// zeroed over whatever dst held), for any number of workers, runs below
// and above the split threshold, and arrays larger than a worker's share
// (one array crossing several shares, a share that starts inside it).
func TestGatherParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		name  string
		sizes []uint64 // slot bytes of each array; its data is 0 to all of it
	}{
		{"small", sizes(r, 40, 4<<10)},
		{"many", sizes(r, 3000, 8<<10)},
		{"one huge", []uint64{5 << 20}},
		{"huge between", append(append(sizes(r, 50, 4<<10), 3<<20), sizes(r, 50, 4<<10)...)},
		{"huge first", append([]uint64{6 << 20}, sizes(r, 400, 8<<10)...)},
	} {
		var run []slabUpload
		var off uint64 = 4096 // runs start anywhere in a slab
		for _, n := range c.sizes {
			data := make([]byte, r.Uint64N(n+1)&^3)
			for i := range data {
				data[i] = byte(r.Uint32() | 1)
			}
			run = append(run, slabUpload{off: off, n: n, data: data})
			off += n
		}
		total := off - run[0].off
		want := make([]byte, total)
		gatherPart(want, run, run[0].off)
		for _, workers := range []int{1, 2, 3, 4, 7} {
			t.Run(fmt.Sprintf("%s/%d", c.name, workers), func(t *testing.T) {
				a := &Allocator{set: Options{CopyWorkers: workers}}
				got := bytes.Repeat([]byte{0xee}, int(total)) // padding must be cleared
				a.gather(got, run)
				if !bytes.Equal(got, want) {
					i := 0
					for got[i] == want[i] {
						i++
					}
					t.Fatalf("%d bytes gathered by %d workers differ from one's first at byte %d", total, workers, i)
				}
			})
		}
	}
}

// sizes returns n slot sizes, multiples of 4 from 4 to max bytes.
func sizes(r *rand.Rand, n int, max uint64) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = 4 + r.Uint64N(max/4)*4
	}
	return s
}
