package mesh_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/mesh"
)

// benchMeshes returns n meshes like a streamed scene's: 16 to 512
// vertices of 12, 20, 24 or 32 bytes, about 1.5 indices a vertex, uint16
// indices mostly. Their bytes are shared: the benchmarks measure the
// allocator and the copies, not the generator.
func benchMeshes(n int, seed uint64) []mesh.Mesh {
	r := rand.New(rand.NewPCG(seed, 99))
	pool := make([]byte, 512*32*2)
	for i := range pool {
		pool[i] = byte(r.Uint32())
	}
	strides := []uint32{12, 20, 24, 32}
	ms := make([]mesh.Mesh, n)
	for i := range ms {
		stride := strides[r.IntN(len(strides))]
		nv := 16 + r.IntN(512-16)
		f := mesh.Uint16
		if r.IntN(8) == 0 {
			f = mesh.Uint32
		}
		ni := 3 * (nv / 2)
		ms[i] = mesh.Mesh{VertexStride: stride, Vertices: pool[:nv*int(stride)], IndexFormat: f, Indices: pool[:ni*int(f)]}
	}
	return ms
}

func benchDevice(b *testing.B) *host.Device {
	b.Helper()
	d, err := host.New(host.Options{Limits: device.Limits{MaxBufferSize: 1 << 30}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(d.Release)
	return d
}

// ownBaseline returns what a buffer per array would hold for ms: buffers
// and bytes (each padded to 4).
func ownBaseline(ms []mesh.Mesh) (bufs int, bytes uint64) {
	for _, m := range ms {
		for _, d := range [][]byte{m.Vertices, m.Indices} {
			if len(d) > 0 {
				bufs++
				bytes += uint64(len(d)+3) &^ 3
			}
		}
	}
	return bufs, bytes
}

// reportRatios reports st against a buffer per array of ms, in the same
// run: how many times fewer buffers, and the bytes held relative to it.
func reportRatios(b *testing.B, st mesh.Stats, ms []mesh.Mesh) {
	bufs, bytes := ownBaseline(ms)
	b.ReportMetric(float64(bufs)/float64(st.Buffers()), "x-fewer-buffers")
	b.ReportMetric(float64(st.SlabBytes+st.OwnBytes)/float64(bytes), "bytes-vs-own")
}

func meshBytes(ms []mesh.Mesh) (n int64) {
	for _, m := range ms {
		n += int64(len(m.Vertices) + len(m.Indices))
	}
	return n
}

// ownBuffers is the simple alternative: every array in a buffer of its own.
type ownBuffers struct {
	dev   device.Device
	bufs  map[int][2]device.Buffer
	bytes uint64
}

func (o *ownBuffers) add(b *testing.B, id int, m mesh.Mesh) {
	var pair [2]device.Buffer
	for k, data := range [][]byte{m.Vertices, m.Indices} {
		usage := device.Vertex
		if k == 1 {
			usage = device.Index
		}
		buf, err := o.dev.CreateBuffer(device.BufferDesc{Size: uint64(len(data)+3) &^ 3, Usage: usage | device.CopyDst})
		if err != nil {
			b.Fatal(err)
		}
		n := len(data) &^ 3
		if err := o.dev.WriteBuffer(buf, 0, data[:n]); err != nil {
			b.Fatal(err)
		}
		if n < len(data) {
			var tail [4]byte
			copy(tail[:], data[n:])
			if err := o.dev.WriteBuffer(buf, uint64(n), tail[:]); err != nil {
				b.Fatal(err)
			}
		}
		pair[k] = buf
		o.bytes += buf.Size()
	}
	o.bufs[id] = pair
}

func (o *ownBuffers) remove(id int) {
	for _, buf := range o.bufs[id] {
		o.bytes -= buf.Size()
		buf.Release()
	}
	delete(o.bufs, id)
}

// BenchmarkStage10k stages 10,000 meshes and uploads them in one Flush, on
// a fresh allocator each op; own-buffers does the same work as a buffer
// per array. Metrics: buffers and bytes held after the frame, slack (slab
// bytes no array holds), and growths.
func BenchmarkStage10k(b *testing.B) {
	const n = 10_000
	ms := benchMeshes(n, 1)
	b.Run("slabs", func(b *testing.B) {
		dev := benchDevice(b)
		b.SetBytes(meshBytes(ms))
		b.ReportAllocs()
		var st mesh.Stats
		for b.Loop() {
			a, err := mesh.New(dev, mesh.Options{})
			if err != nil {
				b.Fatal(err)
			}
			for _, m := range ms {
				if _, err := a.Add(m); err != nil {
					b.Fatal(err)
				}
			}
			if err := a.Flush(); err != nil {
				b.Fatal(err)
			}
			st = a.Stats()
			a.Release()
			if err := dev.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/mesh")
		b.ReportMetric(float64(st.Buffers()), "buffers")
		b.ReportMetric(float64(st.SlabBytes+st.OwnBytes), "bytes")
		b.ReportMetric(float64(st.SlackBytes()), "slack-bytes")
		b.ReportMetric(float64(st.Growths), "growths")
		reportRatios(b, st, ms)
	})
	// warm: the frame replaces all 10,000 meshes of an allocator whose
	// slabs exist already: bookkeeping and uploads, no buffer created (on
	// the host backend a new slab's cost is the Go runtime zeroing it).
	b.Run("slabs-warm", func(b *testing.B) {
		dev := benchDevice(b)
		a, err := mesh.New(dev, mesh.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer a.Release()
		hs := make([]mesh.Handle, n)
		for i, m := range ms {
			hs[i], _ = a.Add(m)
		}
		if err := a.Flush(); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(meshBytes(ms))
		b.ReportAllocs()
		for b.Loop() {
			replaceAll(b, a, hs, ms)
		}
		st := a.Stats()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/mesh")
		b.ReportMetric(float64(st.Buffers()), "buffers")
		b.ReportMetric(float64(st.SlabBytes+st.OwnBytes), "bytes")
		b.ReportMetric(float64(st.SlackBytes()), "slack-bytes")
	})
	b.Run("own-buffers", func(b *testing.B) {
		dev := benchDevice(b)
		b.SetBytes(meshBytes(ms))
		b.ReportAllocs()
		var bufs int
		var bytes uint64
		for b.Loop() {
			o := &ownBuffers{dev: dev, bufs: make(map[int][2]device.Buffer, n)}
			for id, m := range ms {
				o.add(b, id, m)
			}
			bufs, bytes = 2*len(o.bufs), o.bytes
			for id := range n {
				o.remove(id)
			}
			if err := dev.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/mesh")
		b.ReportMetric(float64(bufs), "buffers")
		b.ReportMetric(float64(bytes), "bytes")
		b.ReportMetric(0, "slack-bytes")
	})
}

// BenchmarkSteadyFrame: 10,000 resident meshes, and each op one frame in
// which 1% of them (100) are replaced by new meshes of other sizes, then
// Flush, a default-budget Sweep and Moved. own-buffers replaces the same
// meshes' buffers. Metrics after the last frame: buffers and bytes held,
// slack; per frame: moves and growths.
func BenchmarkSteadyFrame(b *testing.B) {
	const n, churn = 10_000, 100
	ms := benchMeshes(n, 2)
	fresh := benchMeshes(4*n, 3) // replacements, used in turn
	b.Run("slabs", func(b *testing.B) {
		dev := benchDevice(b)
		a, err := mesh.New(dev, mesh.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer a.Release()
		hs := make([]mesh.Handle, n)
		for i, m := range ms {
			if hs[i], err = a.Add(m); err != nil {
				b.Fatal(err)
			}
		}
		if err := a.Flush(); err != nil {
			b.Fatal(err)
		}
		live := append([]mesh.Mesh(nil), ms...) // what each handle holds now
		r := rand.New(rand.NewPCG(5, 5))
		next := 0
		start := a.Stats()
		var uploaded int64
		b.ReportAllocs()
		for b.Loop() {
			for range churn {
				i := r.IntN(n)
				if err := a.Remove(hs[i]); err != nil {
					b.Fatal(err)
				}
				m := fresh[next%len(fresh)]
				next++
				live[i] = m
				uploaded += int64(len(m.Vertices) + len(m.Indices))
				if hs[i], err = a.Add(m); err != nil {
					b.Fatal(err)
				}
			}
			if err := a.Flush(); err != nil {
				b.Fatal(err)
			}
			if err := a.Sweep(arena.SweepLimits{}); err != nil {
				b.Fatal(err)
			}
			a.Changes(nil)
		}
		st := a.Stats()
		frames := float64(b.N)
		b.ReportMetric(float64(st.Buffers()), "buffers")
		b.ReportMetric(float64(st.SlabBytes+st.OwnBytes), "bytes")
		b.ReportMetric(float64(st.SlackBytes()), "slack-bytes")
		b.ReportMetric(float64(st.Moves-start.Moves)/frames, "moves/frame")
		b.ReportMetric(float64(st.BytesMoved-start.BytesMoved)/frames, "moved-bytes/frame")
		b.ReportMetric(float64(st.Growths-start.Growths)/frames, "growths/frame")
		b.ReportMetric(float64(uploaded)/frames, "uploaded-bytes/frame")
		reportRatios(b, st, live)
	})
	b.Run("own-buffers", func(b *testing.B) {
		dev := benchDevice(b)
		o := &ownBuffers{dev: dev, bufs: make(map[int][2]device.Buffer, n)}
		for id, m := range ms {
			o.add(b, id, m)
		}
		r := rand.New(rand.NewPCG(5, 5))
		next := 0
		b.ReportAllocs()
		for b.Loop() {
			for range churn {
				i := r.IntN(n)
				o.remove(i)
				o.add(b, i, fresh[next%len(fresh)])
				next++
			}
			if err := dev.Submit(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(2*len(o.bufs)), "buffers")
		b.ReportMetric(float64(o.bytes), "bytes")
		b.ReportMetric(0, "slack-bytes")
	})
}

// replaceAll removes every mesh of hs, adds ms in their place (hs gets the
// new handles) and flushes: one frame that replaces all of an allocator's
// meshes.
func replaceAll(b *testing.B, a *mesh.Allocator, hs []mesh.Handle, ms []mesh.Mesh) {
	b.Helper()
	restage(b, a, hs, ms)
	if err := a.Flush(); err != nil {
		b.Fatal(err)
	}
}

// restage removes every mesh of hs and adds ms in their place, staged
// for the next Flush.
func restage(b *testing.B, a *mesh.Allocator, hs []mesh.Handle, ms []mesh.Mesh) {
	b.Helper()
	for i, m := range ms {
		if err := a.Remove(hs[i]); err != nil {
			b.Fatal(err)
		}
		var err error
		if hs[i], err = a.Add(m); err != nil {
			b.Fatal(err)
		}
	}
}
