//go:build cgo

package webgpu

import (
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/device"
)

// TestCutRuns cuts the compaction batch's table, in groups of at most
// 4,096 entries, into runs under several limits, and checks that the
// runs are the table's groups in dispatch order, each once, that no run
// or view is empty, and that each run's table fits the limit (a run of
// one group may fill it).
func TestCutRuns(t *testing.T) {
	var p planner
	var mt moveTables
	p.plan(compactionMoves(rand.New(rand.NewPCG(7, 8))), 128<<20, false)
	const segAlign = 256
	phases := mt.buildGroups(&p, 64<<20, 4096)
	var all []*group
	for i := range phases {
		for j := range phases[i].used() {
			all = append(all, &phases[i].groups[j])
		}
	}
	total := tableBytes(phases, segAlign)
	for _, limit := range []uint64{segmentBytes(4 * 4096), 256 << 10, 1 << 20, total - segAlign, total} {
		views, ends := mt.cutRuns(phases, segAlign, limit)
		if limit >= total && len(ends) != 1 {
			t.Fatalf("limit %d: %d runs of a table of %d bytes", limit, len(ends), total)
		}
		if limit < total && len(ends) < 2 {
			t.Fatalf("limit %d: one run of a table of %d bytes", limit, total)
		}
		k, from := 0, 0
		for _, end := range ends {
			run := views[from:end]
			if len(run) == 0 {
				t.Fatalf("limit %d: an empty run", limit)
			}
			groups := 0
			for _, v := range run {
				if v.n == 0 {
					t.Fatalf("limit %d: an empty view", limit)
				}
				for j := range v.used() {
					if k == len(all) || &v.groups[j] != all[k] {
						t.Fatalf("limit %d: group %d of the runs is not the table's", limit, k)
					}
					k++
					groups++
				}
			}
			if n := tableBytes(run, segAlign); n > limit && groups > 1 {
				t.Fatalf("limit %d: a run of %d groups takes %d bytes", limit, groups, n)
			}
			from = end
		}
		if k != len(all) || from != len(views) {
			t.Fatalf("limit %d: the runs hold %d of %d groups", limit, k, len(all))
		}
	}
}

// TestMoveRunsOneTableBuffer records a batch whose table is more than the
// largest table buffer holds below its last binding's window, twice, in
// one encoder, on a device of 1 MiB buffers, and checks that it takes one
// table buffer of the largest size (each run past the first written from
// its start again), staging buffers no larger than a buffer may be, and
// leaves every byte as the moves done in order.
func TestMoveRunsOneTableBuffer(t *testing.T) {
	lim := device.Limits{MaxBufferSize: 1 << 20, MaxStorageBufferBindingSize: 256 << 10}
	d := newTestDevice(t, Options{Moves: MoveCompute, Limits: lim})
	_, runMax := d.tableLimits(256)
	n := int(runMax/16) + 1000 // 4-byte moves: an entry each
	size := uint64(16 * n)
	b, err := d.CreateBuffer(device.BufferDesc{Label: "runs", Size: size, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, size)
	r := rand.New(rand.NewPCG(9, 10))
	for i := range want {
		want[i] = byte(r.Uint32())
	}
	if err := d.WriteBuffer(b, 0, want); err != nil {
		t.Fatal(err)
	}
	batch := make([]device.Move, n)
	for i := range batch {
		batch[i] = device.Move{Src: 16 * uint64(i), Dst: 4 * uint64(i), Size: 4}
	}
	for range 2 {
		if err := d.Move(b, batch); err != nil {
			t.Fatal(err)
		}
		refMoves(want, batch)
	}
	tb := &d.kernels.table
	if tb.buffers != 1 || tb.capacity != lim.MaxBufferSize {
		t.Fatalf("%d table buffers, the last of %d bytes; want one of %d", tb.buffers, tb.capacity, lim.MaxBufferSize)
	}
	for _, sb := range d.stage.pending {
		if sb.size > lim.MaxBufferSize {
			t.Fatalf("a staging buffer of %d bytes, more than a buffer may be", sb.size)
		}
	}
	checkBytes(t, d, b, want)
}
