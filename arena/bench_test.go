package arena_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/staging"
	"github.com/gpumem/gpumem/trace"
)

// tracePath finds a trace: the full one beside the repository when
// GPUMEM_TRACES or ../../shared/traces has it, else the repository's prefix.
func tracePath(name string) string {
	dirs := []string{os.Getenv("GPUMEM_TRACES"), filepath.Join("..", "..", "shared", "traces")}
	for _, d := range dirs {
		if p := filepath.Join(d, name+".trace.gz"); d != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return filepath.Join("..", "testdata", "traces", name+".trace.gz")
}

// opsPerFrame is how many trace lines make one frame; every frame ends with
// one Sweep call with the default budget.
const opsPerFrame = 100

// growthFactor is the arenas' growth when short of room: a modest one, so
// that the fragmentation strategies, not doubling, decide the peak.
const growthFactor = 1.25

// packing is what one trace replay through an arena measured.
type packing struct {
	peakOccupied, peakCapacity uint64 // elements
	endOccupied                uint64 // elements live after the last line
	failures                   int
	stats                      arena.Stats
}

// replayArena replays prog into an arena of 4-byte elements on a host
// device, starting at 64 Ki elements and growing up to the trace's
// capacity, sweeping once a frame under SweepThenCompact or with
// shrinking on. opts gives the strategy, GrowthFactor and the shrink
// options; the sizes are the replay's.
func replayArena(tb testing.TB, prog *trace.Program, opts arena.Options) packing {
	lim := device.DefaultLimits()
	lim.MaxBufferSize = uint64(prog.Capacity) * 4
	dev, err := host.New(host.Options{Limits: lim})
	if err != nil {
		tb.Fatal(err)
	}
	defer dev.Release()
	opts.InitialElems = min(64<<10, prog.Capacity)
	opts.MaxElems = prog.Capacity
	opts.MaxAllocs = 1 << 20
	a, err := arena.New(dev, opts)
	if err != nil {
		tb.Fatal(err)
	}
	defer a.Release()
	slots := make([]arena.Handle, prog.Slots)
	sizes := make([]uint32, prog.Slots)
	var p packing
	var occupied uint64
	for i, s := range prog.Steps {
		if s.IsFree() {
			if h := slots[s.Slot()]; h != (arena.Handle{}) {
				if err := a.Free(h); err != nil {
					tb.Fatal(err)
				}
				occupied -= uint64(sizes[s.Slot()])
			}
		} else {
			h, err := a.Allocate(s.Size())
			if err != nil {
				p.failures++
			} else {
				occupied += uint64(s.Size())
				p.peakOccupied = max(p.peakOccupied, occupied)
			}
			slots[s.Slot()], sizes[s.Slot()] = h, s.Size()
		}
		if i%opsPerFrame == opsPerFrame-1 && (opts.Fragmented == arena.SweepThenCompact || opts.ShrinkBelow > 0) {
			// Capacity rises only in Allocate and falls only in Sweep:
			// its peak is seen before some Sweep or at the end.
			p.peakCapacity = max(p.peakCapacity, uint64(a.Stats().CapacityElems))
			if _, err := a.Sweep(arena.SweepLimits{}); err != nil {
				tb.Fatal(err)
			}
		}
	}
	p.stats = a.Stats()
	p.peakCapacity = max(p.peakCapacity, uint64(p.stats.CapacityElems))
	p.endOccupied = occupied
	return p
}

// BenchmarkTracePacking replays the meshlet, lognormal and thinning traces (sizes as
// 4-byte elements) through an arena under each fragmentation strategy and
// reports the peak capacity against the peak occupied, and the work done.
func BenchmarkTracePacking(b *testing.B) {
	for _, name := range []string{"meshlet", "lognormal", "thinning"} {
		prog, err := trace.Load(tracePath(name))
		if err != nil {
			b.Fatal(err)
		}
		for _, st := range []arena.Strategy{arena.GrowOnly, arena.SweepThenCompact, arena.CompactAlways} {
			b.Run(name+"/"+st.String(), func(b *testing.B) {
				var p packing
				for i := 0; i < b.N; i++ {
					p = replayArena(b, prog, arena.Options{Fragmented: st, GrowthFactor: growthFactor})
				}
				s := p.stats
				b.ReportMetric(float64(p.peakCapacity)/float64(p.peakOccupied), "cap/occ")
				b.ReportMetric(float64(s.Growths), "growths")
				b.ReportMetric(float64(s.FullCompactions), "compactions")
				b.ReportMetric(float64(s.Refusals), "refusals")
				b.ReportMetric(float64(s.BytesMoved)/(1<<20), "MiB-moved")
				b.ReportMetric(float64(p.failures), "failures")
			})
		}
	}
}

// BenchmarkTracePackingShrink replays the same traces with a sweep a
// frame and shrinking on (ShrinkBelow 0.5 for 30 frames) at growth factors
// of 1.25 and 1.1: peak capacity against peak occupied (shrinking cannot
// lower a peak; the growth step decides it), capacity against occupied at
// the end of the trace (what shrinking gives back), and the growths and
// shrinks that cost.
func BenchmarkTracePackingShrink(b *testing.B) {
	for _, name := range []string{"meshlet", "lognormal", "thinning"} {
		prog, err := trace.Load(tracePath(name))
		if err != nil {
			b.Fatal(err)
		}
		for _, gf := range []float64{1.25, 1.1} {
			b.Run(fmt.Sprintf("%s/growth=%g", name, gf), func(b *testing.B) {
				var p packing
				for i := 0; i < b.N; i++ {
					p = replayArena(b, prog, arena.Options{GrowthFactor: gf, ShrinkBelow: 0.5, ShrinkAfter: 30})
				}
				s := p.stats
				b.ReportMetric(float64(p.peakCapacity)/float64(p.peakOccupied), "cap/occ")
				b.ReportMetric(float64(s.CapacityElems)/float64(max(p.endOccupied, 1)), "end-cap/occ")
				b.ReportMetric(float64(s.Growths), "growths")
				b.ReportMetric(float64(s.Shrinks), "shrinks")
				b.ReportMetric(float64(p.failures), "failures")
			})
		}
	}
}

// BenchmarkSweep measures one Sweep call with the default budget (64 moves)
// over an arena of 100,000 allocations of 256 bytes with every other one
// freed; a fresh arena is made, untimed, whenever a sweep completes. On
// "device" (host, or webgpu with GPUMEM_BENCH_DEVICE=webgpu: the call
// records, the device runs the moves at a Wait every 64 calls, untimed)
// and on "walk" (a device whose Move does nothing: the arena's own
// share). ns/move is the call's time per allocation moved (the goal: 60
// on webgpu; the host device copies the bytes in the call).
func BenchmarkSweep(b *testing.B) {
	for _, c := range []struct {
		name string
		open func(b *testing.B) device.Device
	}{
		{"device", benchDevice},
		{"walk", func(b *testing.B) device.Device {
			return &nullMover{Device: testdevice.Host(b, host.Options{Limits: bigLimits()})}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dev := c.open(b)
			const n = 100_000
			var a *arena.Arena
			var err error
			fragment := func() {
				if a != nil {
					a.Release()
				}
				if a, err = arena.New(dev, arena.Options{ElemSize: 16, InitialElems: 1 << 21, MaxAllocs: 1 << 18}); err != nil {
					b.Fatal(err)
				}
				hs := make([]arena.Handle, n)
				for i := range hs {
					if hs[i], err = a.Allocate(16); err != nil {
						b.Fatal(err)
					}
				}
				for i := 0; i < n; i += 2 {
					a.Free(hs[i])
				}
				a.Arm()
				if err := settle(dev); err != nil {
					b.Fatal(err)
				}
			}
			fragment()
			moves := 0
			var spent time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if !a.Armed() {
					fragment()
				}
				t0 := time.Now()
				ms, err := a.Sweep(arena.SweepLimits{})
				spent += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				moves += len(ms)
				if i%64 == 63 {
					if err := settle(dev); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			a.Release()
			b.ReportMetric(float64(moves)/float64(b.N), "moves/op")
			b.ReportMetric(float64(spent.Nanoseconds())/float64(max(moves, 1)), "ns/move")
		})
	}
}

// benchDevice opens the benchmarks' device: webgpu with the adapter's
// limits when GPUMEM_BENCH_DEVICE=webgpu, else host with buffers up to
// 1 GiB.
func benchDevice(b *testing.B) device.Device {
	if os.Getenv("GPUMEM_BENCH_DEVICE") == "webgpu" {
		return testdevice.WebGPU(b, webgpu.Options{AdapterLimits: true})
	}
	return testdevice.Host(b, host.Options{Limits: bigLimits()})
}

// fragmented releases old (if any) and returns a fresh arena of total
// bytes in 16-byte elements, filled with allocations of 16 KiB to
// 256 KiB drawn from r, a quarter of them then freed: the fragmented
// arena the compaction benchmarks sweep (about 2,900 moves, 384 MiB moved
// for 512 MiB).
func fragmented(b *testing.B, dev device.Device, old *arena.Arena, r *rand.Rand, total uint64) *arena.Arena {
	return fragmentedTimed(b, dev, old, r, total, false)
}

// fragmentedTimed is fragmented with Options.TimeMoves as timed says.
func fragmentedTimed(b *testing.B, dev device.Device, old *arena.Arena, r *rand.Rand, total uint64, timed bool) *arena.Arena {
	if old != nil {
		old.Release()
	}
	a, err := arena.New(dev, arena.Options{ElemSize: 16, InitialElems: uint32(total / 16), MaxAllocs: 1 << 16, TimeMoves: timed})
	if err != nil {
		b.Fatal(err)
	}
	var hs []arena.Handle
	for used := uint64(0); ; {
		n := 1024 + r.Uint32N(15*1024) // 16 KiB to 256 KiB
		if used+uint64(n)*16 > total {
			break
		}
		h, err := a.Allocate(n)
		if err != nil {
			b.Fatal(err)
		}
		hs = append(hs, h)
		used += uint64(n) * 16
	}
	for _, h := range hs {
		if r.IntN(4) == 0 {
			a.Free(h)
		}
	}
	// The garbage of making it is collected now, not during the
	// measurement that follows.
	runtime.GC()
	return a
}

// BenchmarkCompactCall measures the Compact call alone, on the fragmented
// 512 MiB arena of BenchmarkSweepThroughput (host, or webgpu with
// GPUMEM_BENCH_DEVICE=webgpu): the CPU cost of the sweep's walk, building
// the device batch, and the device's planning and recording of the moves
// (the GPU work runs at the Wait after it, untimed). ns/move is the goal's
// figure (at most 60); walk-ns/move is the same arena walked on a device
// that records nothing (a counting device, in the same run), the arena's own
// share, and device-ns/move the rest. move-ns/move is the time spent
// inside the device's Move during the timed calls themselves (the device
// seen through a wrapper that times Move): the device's share measured
// directly, on the same arenas and caches as ns/move.
func BenchmarkCompactCall(b *testing.B) {
	dev := &moveTimer{Device: benchDevice(b)}
	const total = 512 << 20
	r := rand.New(rand.NewPCG(7, 8))
	var a *arena.Arena
	// Untimed first: kernels and scratch are made once per device.
	a = fragmented(b, dev, a, r, total)
	if _, err := a.Compact(); err != nil {
		b.Fatal(err)
	}
	if err := settle(dev); err != nil {
		b.Fatal(err)
	}
	dev.spent = 0
	call, moves := timeCompacts(b, dev, func() *arena.Arena {
		a = fragmented(b, dev, a, r, total)
		return a
	})
	a.Release()
	// The walk alone: the same arenas on a device whose Move only counts.
	nd := &nullMover{Device: testdevice.Host(b, host.Options{Limits: bigLimits()})}
	r = rand.New(rand.NewPCG(7, 8))
	var walk time.Duration
	var c *arena.Arena
	for range max(b.N, 5) {
		c = fragmented(b, nd, c, r, total)
		t0 := time.Now()
		if _, err := c.Compact(); err != nil {
			b.Fatal(err)
		}
		walk += time.Since(t0)
	}
	c.Release()
	perMove := float64(call.Nanoseconds()) / float64(max(moves, 1))
	walkPerMove := float64(walk.Nanoseconds()) / float64(max(nd.moves, 1))
	b.ReportMetric(float64(moves)/float64(b.N), "moves/op")
	b.ReportMetric(call.Seconds()*1e3/float64(b.N), "call-ms/op")
	b.ReportMetric(perMove, "ns/move")
	b.ReportMetric(walkPerMove, "walk-ns/move")
	b.ReportMetric(perMove-walkPerMove, "device-ns/move")
	b.ReportMetric(float64(dev.spent.Nanoseconds())/float64(max(moves, 1)), "move-ns/move")
}

// BenchmarkCompactSteady is BenchmarkCompactCall on one long-lived arena,
// as a renderer keeps its slabs: between the timed calls (untimed) the
// arena fills its free tail again with allocations of 16 KiB to 256 KiB
// and frees, at random, a quarter of the allocations the benchmark made,
// so each Compact has about as many moves in the same buffer. BenchmarkCompactCall
// compacts a new arena each time instead, which also counts what a
// device does once per buffer moved (bind groups, on webgpu) and what it
// still owes for the arena released before it. Metrics: ns/move (the
// call), move-ns/move (inside the device's Move) and moves/op.
func BenchmarkCompactSteady(b *testing.B) {
	dev := &moveTimer{Device: benchDevice(b)}
	const total = 512 << 20
	r := rand.New(rand.NewPCG(7, 8))
	a := fragmented(b, dev, nil, r, total)
	defer a.Release()
	var live []arena.Handle
	refragment := func() {
		for {
			n := 1024 + r.Uint32N(15*1024)
			// Twice n: a free range of n elements may sit in a
			// bin that a request of n does not search, and the
			// arena would grow instead.
			if a.Stats().LargestFreeElems < 2*n {
				break
			}
			h, err := a.Allocate(n)
			if err != nil {
				b.Fatal(err)
			}
			live = append(live, h)
		}
		kept := live[:0]
		for _, h := range live {
			if r.IntN(4) == 0 {
				if err := a.Free(h); err != nil {
					b.Fatal(err)
				}
				continue
			}
			kept = append(kept, h)
		}
		live = kept
	}
	// The first compaction is untimed: kernels, scratch and the buffer's
	// bind groups are made once. Its handles are not kept (fragmented
	// made them), so the first refragment frees from the new ones only;
	// the arena's own allocations stay live throughout.
	if _, err := a.Compact(); err != nil {
		b.Fatal(err)
	}
	if err := settle(dev); err != nil {
		b.Fatal(err)
	}
	growths := a.Stats().Growths
	dev.spent = 0
	call, moves := timeCompacts(b, dev, func() *arena.Arena {
		refragment()
		return a
	})
	if g := a.Stats().Growths; g != growths {
		b.Fatalf("the arena grew %d times: the benchmark must compact one buffer", g-growths)
	}
	b.ReportMetric(float64(moves)/float64(b.N), "moves/op")
	b.ReportMetric(float64(call.Nanoseconds())/float64(max(moves, 1)), "ns/move")
	b.ReportMetric(float64(dev.spent.Nanoseconds())/float64(max(moves, 1)), "move-ns/move")
}

// timeCompacts runs b.N Compact calls, each on the arena next returns
// (called untimed), with the device settled after each (untimed), and
// returns the calls' time and the moves they made.
func timeCompacts(b *testing.B, dev device.Device, next func() *arena.Arena) (call time.Duration, moves int) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		a := next()
		b.StartTimer()
		t0 := time.Now()
		ms, err := a.Compact()
		call += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		moves += len(ms)
		b.StopTimer()
		if err := settle(dev); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	return call, moves
}

// moveTimer is a device whose Move calls are timed.
type moveTimer struct {
	device.Device
	spent time.Duration
}

func (d *moveTimer) Move(buf device.Buffer, moves []device.Move) error {
	t0 := time.Now()
	err := d.Device.Move(buf, moves)
	d.spent += time.Since(t0)
	return err
}

func bigLimits() device.Limits {
	lim := device.DefaultLimits()
	lim.MaxBufferSize = 1 << 30
	return lim
}

// nullMover is a device whose buffers hold no memory and whose Move and
// CopyBuffer check nothing and do nothing: it counts moves, so a benchmark
// can time the arena's walk alone.
type nullMover struct {
	*host.Device
	moves int
}

func (d *nullMover) CreateBuffer(desc device.BufferDesc) (device.Buffer, error) {
	return nullBuffer{desc}, nil
}

func (d *nullMover) CopyBuffer(device.Buffer, uint64, device.Buffer, uint64, uint64) error {
	return nil
}

func (d *nullMover) Move(_ device.Buffer, moves []device.Move) error {
	d.moves += len(moves)
	return nil
}

type nullBuffer struct{ desc device.BufferDesc }

func (b nullBuffer) Desc() device.BufferDesc { return b.desc }
func (b nullBuffer) Size() uint64            { return b.desc.Size }
func (b nullBuffer) Release()                {}

// BenchmarkSweepThroughput measures a full sweep of a fragmented 512 MiB
// arena on a device (host, or webgpu with GPUMEM_BENCH_DEVICE=webgpu): the
// bytes a sweep moves per second, read plus written, from the Compact call to
// the device finishing it, against one buffer-to-buffer copy of as many
// bytes on the same device in the same run (copy-GB/s) and their ratio.
// call-ms and wait-ms split a sweep's time between the Compact call and the
// wait for the device. A first sweep runs untimed, so the device's one-time
// setup of moves does not count.
//
// Where the device has a GPU timer (webgpu on an adapter with timestamps),
// the arena times its batch (Options.TimeMoves) and the wait is broken
// down: submit-ms is the CPU time of the Fence call that submits the
// batch; kernel-ms the batch's GPU time between its stamps (its kernels
// and table upload); idle-ms the rest of the wait (wait-ms - submit-ms -
// kernel-ms): submit to first kernel plus last kernel to the CPU's return
// from Wait, where no stamp sees. rtt-ms is that same latency for an
// empty submission (two stamps, Fence, Wait), the floor any submit pays.
// kern-GB/s is the bytes over kernel-ms, and sweep/kern the end to end
// throughput over it: the share of the kernels' speed a compaction gets.
func BenchmarkSweepThroughput(b *testing.B) {
	dev := benchDevice(b)
	const total = 512 << 20
	r := rand.New(rand.NewPCG(7, 8))
	var a *arena.Arena
	tm, timed := device.TimerOf(dev)
	fragment := func() {
		a = fragmentedTimed(b, dev, a, r, total, timed)
		touch(b, dev, a.Buffer())
	}
	// One sweep untimed first: the device's first move compiles its
	// kernels and makes its scratch buffer, once per device.
	fragment()
	if _, err := a.Compact(); err != nil {
		b.Fatal(err)
	}
	if err := settle(dev); err != nil {
		b.Fatal(err)
	}
	var moved uint64
	var elapsed, call, submit, kernel time.Duration
	moves := 0
	for i := 0; i < b.N; i++ {
		fragment()
		before := a.Stats().BytesMoved
		t0 := time.Now()
		ms, err := a.Compact()
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		call += t1.Sub(t0)
		moves += len(ms)
		if _, err := dev.Fence(); err != nil {
			b.Fatal(err)
		}
		submit += time.Since(t1)
		if err := dev.Wait(); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(t0)
		moved += a.Stats().BytesMoved - before
		if timed {
			k, ok, err := a.MoveTime()
			if err != nil || !ok {
				b.Fatalf("no GPU time for the batch after Wait: %v", err)
			}
			kernel += k
		}
	}
	a.Release()
	var rtt time.Duration
	if timed {
		// An empty submission's round trip, as the batch's is timed.
		const trips = 20
		for range trips {
			if _, err := tm.Stamp(); err != nil {
				b.Fatal(err)
			}
			if _, err := tm.Stamp(); err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			if err := settle(dev); err != nil {
				b.Fatal(err)
			}
			rtt += time.Since(t0)
		}
		rtt /= trips
	}
	sweep := 2 * float64(moved) / elapsed.Seconds() / 1e9
	// The baseline: one copy of the mean bytes moved, between two buffers.
	n := (moved / uint64(b.N)) &^ 3
	src, err := dev.CreateBuffer(device.BufferDesc{Size: n, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Release()
	dst, err := dev.CreateBuffer(device.BufferDesc{Size: n, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Release()
	touch(b, dev, src)
	touch(b, dev, dst)
	var copyTime time.Duration
	for range 5 {
		t0 := time.Now()
		if err := dev.CopyBuffer(src, 0, dst, 0, n); err != nil {
			b.Fatal(err)
		}
		if err := settle(dev); err != nil {
			b.Fatal(err)
		}
		copyTime += time.Since(t0)
	}
	raw := 2 * float64(5*n) / copyTime.Seconds() / 1e9
	b.ReportMetric(float64(moved)/float64(b.N)/(1<<20), "MiB-moved/op")
	b.ReportMetric(float64(moves)/float64(b.N), "moves/op")
	// Where a sweep's time goes: the Compact call (planning, recording and
	// submitting the moves) and the wait for the device after it.
	b.ReportMetric(call.Seconds()*1e3/float64(b.N), "call-ms/op")
	b.ReportMetric((elapsed-call).Seconds()*1e3/float64(b.N), "wait-ms/op")
	if timed {
		per := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(b.N) }
		kern := 2 * float64(moved) / kernel.Seconds() / 1e9
		b.ReportMetric(per(submit), "submit-ms/op")
		b.ReportMetric(per(kernel), "kernel-ms/op")
		b.ReportMetric(per(elapsed-call-submit-kernel), "idle-ms/op")
		b.ReportMetric(rtt.Seconds()*1e3, "rtt-ms")
		b.ReportMetric(kern, "kern-GB/s")
		b.ReportMetric(sweep/kern, "sweep/kern")
	}
	b.ReportMetric(sweep, "sweep-GB/s")
	b.ReportMetric(raw, "copy-GB/s")
	b.ReportMetric(sweep/raw, "sweep/copy")
}

// touch writes every byte of buf, untimed, so that neither side of a
// measurement pays a backend's first use of the memory (wgpu clears a
// buffer lazily, the first time a submission uses it).
func touch(b *testing.B, dev device.Device, buf device.Buffer) {
	zeros := make([]byte, 16<<20)
	for off := uint64(0); off < buf.Size(); off += uint64(len(zeros)) {
		if err := dev.WriteBuffer(buf, off, zeros[:min(uint64(len(zeros)), buf.Size()-off)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := settle(dev); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAllocateFree measures one Free plus one Allocate on an arena with
// n live allocations of mixed sizes, freed oldest first (offset's
// BenchmarkAllocateFree through the arena: handles, slots, occupancy). The
// arena has room for all of them, so nothing grows or moves: the O(1)
// path's cost, with 0 allocs/op.
func BenchmarkAllocateFree(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprintf("live=%d", n), func(b *testing.B) {
			const maxSize = 256
			r := rand.New(rand.NewPCG(1, uint64(n)))
			sizes := make([]uint32, 4096)
			for i := range sizes {
				sizes[i] = 1 + r.Uint32N(maxSize)
			}
			lim := device.DefaultLimits()
			lim.MaxBufferSize = 1 << 32
			dev := testdevice.Host(b, host.Options{Limits: lim})
			// Room for n allocations at 75% occupancy.
			a, err := arena.New(dev, arena.Options{InitialElems: uint32(n) * maxSize / 2 * 4 / 3, MaxAllocs: uint32(2*n + 16)})
			if err != nil {
				b.Fatal(err)
			}
			defer a.Release()
			live := make([]arena.Handle, n)
			for i := range live {
				if live[i], err = a.Allocate(sizes[i%len(sizes)]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				slot := i % n
				if err := a.Free(live[slot]); err != nil {
					b.Fatal(err)
				}
				h, err := a.Allocate(sizes[i%len(sizes)])
				if err != nil {
					b.Fatal(err)
				}
				live[slot] = h
			}
			if st := a.Stats(); st.Growths != 0 || st.Moves != 0 {
				b.Fatalf("the arena grew or moved: %+v", st)
			}
		})
	}
}

// settle ends the benchmark's frame and waits for the GPU, so that what
// it released (arenas, grown-out buffers) is freed: a device frees
// released memory once a fence marked after the release completes.
func settle(dev device.Device) error {
	if _, err := dev.Fence(); err != nil {
		return err
	}
	return dev.Wait()
}

// timedBelt is a staging belt that adds up the time its callers' fills
// take: Place's gather of a run into the mapped chunk.
type timedBelt struct {
	*staging.Belt
	fill time.Duration
}

func (t *timedBelt) UploadFunc(dst device.Buffer, off, n uint64, fill func([]byte)) error {
	return t.Belt.UploadFunc(dst, off, n, func(b []byte) {
		t0 := time.Now()
		fill(b)
		t.fill += time.Since(t0)
	})
}

// BenchmarkPlaceWorkers places 10,000 requests of 2 to 8 KB (about
// 50 MB) into an empty arena through a staging belt, waits for the
// device, and frees them, with Options.Workers 1 and 4 alternated on
// each backend; the requests' data lies in 1 MiB of memory the caller
// has just written ("hot", as data made in the frame) or across 256 MiB
// ("cold", as data loaded earlier). GB/s-gather is the bytes over the
// time of the gather of the runs into the belt's mapped chunks alone,
// what Workers splits.
func BenchmarkPlaceWorkers(b *testing.B) {
	for _, src := range []struct {
		name string
		size int
	}{{"hot", 1 << 20}, {"cold", 256 << 20}} {
		pool := make([]byte, src.size)
		for i := range pool {
			pool[i] = byte(i * 13)
		}
		reqs := make([]arena.Request, 10_000)
		var total int64
		for i := range reqs {
			n := 500 + (i*37)%1500
			at := (i * 26_041) % (len(pool) - n*4) &^ 3
			reqs[i] = arena.Request{Elems: uint32(n), Data: pool[at : at+n*4]}
			total += int64(n * 4)
		}
		for _, be := range testdevice.Backends() {
			dev := be.Open(b)
			for _, w := range []int{1, 4, 1, 4} {
				b.Run(fmt.Sprintf("%s/%s/workers-%d", be.Name, src.name, w), func(b *testing.B) {
					placeWorkers(b, dev, reqs, total, w)
				})
			}
		}
	}
}

func placeWorkers(b *testing.B, dev device.Device, reqs []arena.Request, total int64, workers int) {
	a, err := arena.New(dev, arena.Options{ElemSize: 4, InitialElems: 16 << 20, Workers: workers})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Release()
	belt, err := staging.New(dev, staging.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer belt.Release()
	up := &timedBelt{Belt: belt}
	var ps []arena.Placement
	b.SetBytes(total)
	for b.Loop() {
		if ps, _, err = a.Place(ps[:0], reqs, up); err != nil {
			b.Fatal(err)
		}
		fence, err := dev.Fence()
		if err == nil {
			err = belt.EndFrame(fence)
		}
		if err == nil {
			err = dev.Wait()
		}
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range ps {
			if err := a.Free(p.Handle); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(total)*float64(b.N)/up.fill.Seconds()/1e9, "GB/s-gather")
}
