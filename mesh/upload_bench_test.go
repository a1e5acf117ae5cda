package mesh_test

import (
	"testing"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
	"github.com/gpumem/gpumem/staging"
)

// BenchmarkFlushUpload measures a Flush that uploads 10,000 meshes (about
// 67 MB) into an allocator whose slabs exist, end to end: Remove and Add
// every mesh, Flush, and Wait for the device; "queue" uploads with queue
// writes, "belt" through a staging belt (Options.Belt, 8 MiB chunks, the
// frame ended on the belt), "belt-serial" too with every run gathered on
// the caller's goroutine (Options.Workers 1). On each backend, the same
// run also writes as many bytes to one buffer in queue writes of 256 KiB,
// and waits: the device's upload speed, the baseline. It writes them
// twice: from one 256 KiB slice, warm in the cache ("queue-writes"), and
// from the meshes' bytes laid end to end, each read once a frame as a
// Flush reads them ("queue-writes-cold"). Metrics: GB/s of array bytes
// for the Flush and the baselines, and the ratio of their times; and the
// same for the Flush and the wait alone (-flush-only), without the Remove
// and Add calls before it; on the belt, also the submits it made, and
// their time (staging.Stats), against ms-flush-only/op.
func BenchmarkFlushUpload(b *testing.B) {
	const n = 10_000
	ms := benchMeshes(n, 1)
	total := meshBytes(ms)
	for _, be := range testdevice.Backends() {
		for _, path := range []string{"queue", "belt", "belt-serial"} {
			b.Run(be.Name+"/"+path, func(b *testing.B) {
				dev := be.Open(b)
				a, hs, endFrame, belt := uploadFrame(b, dev, path, ms)
				base, err := dev.CreateBuffer(device.BufferDesc{Label: "baseline", Size: uint64(total+3) &^ 3, Usage: device.CopyDst})
				if err != nil {
					b.Fatal(err)
				}
				defer base.Release()
				chunk := make([]byte, 256<<10)
				cold := make([]byte, 0, base.Size())
				for _, m := range ms {
					cold = append(append(cold, m.Vertices...), m.Indices...)
				}
				cold = cold[:base.Size()]
				var flush, flushOnly, queue, queueCold time.Duration
				var before staging.Stats
				if belt != nil {
					before = belt.Stats()
				}
				b.SetBytes(total)
				b.ResetTimer()
				for range b.N {
					t0 := time.Now()
					restage(b, a, hs, ms)
					tf := time.Now()
					if err := a.Flush(); err != nil {
						b.Fatal(err)
					}
					endFrame()
					t1 := time.Now()
					for off := uint64(0); off < base.Size(); off += uint64(len(chunk)) {
						w := chunk[:min(uint64(len(chunk)), base.Size()-off)]
						if err := dev.WriteBuffer(base, off, w); err != nil {
							b.Fatal(err)
						}
					}
					if err := dev.Wait(); err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					for off := uint64(0); off < base.Size(); off += uint64(len(chunk)) {
						if err := dev.WriteBuffer(base, off, cold[off:min(off+uint64(len(chunk)), base.Size())]); err != nil {
							b.Fatal(err)
						}
					}
					if err := dev.Wait(); err != nil {
						b.Fatal(err)
					}
					flush += t1.Sub(t0)
					flushOnly += t1.Sub(tf)
					queue += t2.Sub(t1)
					queueCold += time.Since(t2)
				}
				gb := float64(total) * float64(b.N) / 1e9
				b.ReportMetric(gb/flush.Seconds(), "GB/s-flush")
				b.ReportMetric(gb/queue.Seconds(), "GB/s-queue-writes")
				b.ReportMetric(flush.Seconds()/queue.Seconds(), "x-queue-time")
				b.ReportMetric(gb/flushOnly.Seconds(), "GB/s-flush-only")
				b.ReportMetric(flushOnly.Seconds()/queue.Seconds(), "x-queue-time-flush-only")
				b.ReportMetric(gb/queueCold.Seconds(), "GB/s-queue-writes-cold")
				b.ReportMetric(flushOnly.Seconds()/queueCold.Seconds(), "x-queue-cold-time-flush-only")
				if belt != nil {
					st := belt.Stats()
					b.ReportMetric(float64(st.Submits-before.Submits)/float64(b.N), "belt-submits/op")
					b.ReportMetric((st.SubmitTime-before.SubmitTime).Seconds()*1e3/float64(b.N), "ms-belt-submits/op")
					b.ReportMetric(flushOnly.Seconds()*1e3/float64(b.N), "ms-flush-only/op")
				}
			})
		}
	}
}

// sinkDevice is a host device whose writes and copies take no bytes: a
// write or a copy is checked by nothing and lands nowhere, and a fill
// writes into one reused scratch slice, as a GPU backend's fill writes
// into a mapped chunk. On it a Flush costs what the allocator itself
// costs the CPU (placement, bookkeeping, the gather into the belt), which
// is what bounds an upload on a GPU whose copies run beside the CPU.
type sinkDevice struct {
	device.Device
	scratch []byte
}

func (d *sinkDevice) WriteBuffer(device.Buffer, uint64, []byte) error { return nil }

func (d *sinkDevice) CopyBuffer(device.Buffer, uint64, device.Buffer, uint64, uint64) error {
	return nil
}

func (d *sinkDevice) FillBuffer(_ device.Buffer, _, size uint64, fill func([]byte)) error {
	if uint64(cap(d.scratch)) < size {
		d.scratch = make([]byte, size)
	}
	fill(d.scratch[:size])
	return nil
}

// BenchmarkFlushCPU is BenchmarkFlushUpload's frame (remove and add
// 10,000 meshes, Flush) on a device that moves no bytes but the belt's
// gather (sinkDevice): the CPU cost per mesh of Remove, Add and Flush,
// reported apart (ns/mesh of each, and of the whole frame), and the GB/s
// that cost alone would allow.
func BenchmarkFlushCPU(b *testing.B) {
	const n = 10_000
	ms := benchMeshes(n, 1)
	total := meshBytes(ms)
	for _, path := range []string{"queue", "belt", "belt-serial"} {
		b.Run(path, func(b *testing.B) {
			dev := &sinkDevice{Device: benchDevice(b)}
			a, hs, endFrame, _ := uploadFrame(b, dev, path, ms)
			var err error
			var remove, add, flush time.Duration
			b.SetBytes(total)
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				for _, h := range hs {
					if err := a.Remove(h); err != nil {
						b.Fatal(err)
					}
				}
				t1 := time.Now()
				for i, m := range ms {
					if hs[i], err = a.Add(m); err != nil {
						b.Fatal(err)
					}
				}
				t2 := time.Now()
				if err := a.Flush(); err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				endFrame()
				remove += t1.Sub(t0)
				add += t2.Sub(t1)
				flush += t3.Sub(t2)
			}
			per := float64(b.N) * n
			b.ReportMetric(float64(remove.Nanoseconds())/per, "ns/remove")
			b.ReportMetric(float64(add.Nanoseconds())/per, "ns/add")
			b.ReportMetric(float64(flush.Nanoseconds())/per, "ns/flush-mesh")
			b.ReportMetric(float64((remove+add+flush).Nanoseconds())/per, "ns/mesh")
			b.ReportMetric(float64(total)*float64(b.N)/1e9/(remove+add+flush).Seconds(), "GB/s-cpu")
		})
	}
}

// uploadFrame sets up the frame both upload benchmarks run: an allocator
// on dev ("queue": uploads by queue writes; "belt": through a staging
// belt, Options.Belt; "belt-serial": a belt and Options.Workers 1)
// holding ms, flushed once. endFrame ends a frame: its
// fence on the belt, and the wait. belt is nil on "queue".
func uploadFrame(b *testing.B, dev device.Device, path string, ms []mesh.Mesh) (a *mesh.Allocator, hs []mesh.Handle, endFrame func(), belt *staging.Belt) {
	var opts mesh.Options
	if path != "queue" {
		var err error
		if belt, err = staging.New(dev, staging.Options{}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(belt.Release)
		opts.Belt = belt
	}
	if path == "belt-serial" {
		opts.Workers = 1
	}
	a, err := mesh.New(dev, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.Release)
	hs = make([]mesh.Handle, len(ms))
	for i, m := range ms {
		hs[i], _ = a.Add(m)
	}
	endFrame = func() {
		if belt != nil {
			fence, err := dev.Fence()
			if err != nil {
				b.Fatal(err)
			}
			if err := belt.EndFrame(fence); err != nil {
				b.Fatal(err)
			}
		}
		if err := dev.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	if err := a.Flush(); err != nil {
		b.Fatal(err)
	}
	endFrame()
	return a, hs, endFrame, belt
}
