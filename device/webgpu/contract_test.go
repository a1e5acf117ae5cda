//go:build cgo

package webgpu_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/mesh"
	"github.com/gpumem/gpumem/meshlet"
	"github.com/gpumem/gpumem/staging"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// The sharing contract, played by a renderer that owns its device: each
// frame it keeps the buffers and textures it saw before the managers'
// update (as a renderer's bind groups and recorded passes do), lets the
// managers churn (arena growth, Sweep, Compact, Shrink; mesh removals of
// meshes with buffers of their own, slab growth and compaction; bindless
// pages released by Shrink and emptied by Compact), calls gm.Submit, then
// submits its own passes over the old objects (copies out of every one of
// them and a draw from every old vertex buffer) and over the current ones,
// and ends the frame with gm.Fence. wgpu-native aborts the process on a
// submission that names a destroyed object, so a frame that uses one
// fails the test. Every current range must read back its bytes, and so
// must every old range whose data lives on at the same place.

const (
	loopTexSize = 64 // bindless textures: 64x64 RGBA8, 256-byte rows
	loopStride  = 16 // mesh vertices: a vec4f
	loopElem    = 16 // arena element size
)

// loopRange is a range of a raw buffer or a layer of a raw texture the
// renderer reads, and what it must hold.
type loopRange struct {
	buf   *wgpu.Buffer
	tex   *wgpu.Texture
	off   uint64 // bytes into buf; layer of tex
	want  []byte
	check bool // the bytes must be there when read
	// patched: the range holds addresses patched on the GPU when the data
	// they name moves (meshlet rows).
	patched bool
	now     bool // seen after the update
	key     string
}

// loopRenderer is the renderer's side: its own read-back buffer, a draw
// pipeline and a small target.
type loopRenderer struct {
	raw      *wgpu.Device
	queue    *wgpu.Queue
	pipeline *wgpu.RenderPipeline
	view     *wgpu.TextureView
	readback *wgpu.Buffer
	size     uint64
}

const loopShader = `
@vertex fn vs(@location(0) p: vec4f) -> @builtin(position) vec4f {
	return vec4f(fract(p.xy) * 2.0 - 1.0, 0.5, 1.0);
}
@fragment fn fs() -> @location(0) vec4f { return vec4f(1.0); }
`

func newLoopRenderer(t *testing.T, raw *wgpu.Device) *loopRenderer {
	t.Helper()
	r := &loopRenderer{raw: raw, queue: raw.GetQueue(), size: 8 << 20}
	t.Cleanup(r.queue.Release)
	mod, err := raw.TryCreateShaderModule(&wgpu.ShaderModuleDescriptor{Label: "loop", WGSLSource: &wgpu.ShaderSourceWGSL{Code: loopShader}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mod.Release)
	r.pipeline, err = raw.TryCreateRenderPipeline(&wgpu.RenderPipelineDescriptor{
		Vertex: wgpu.VertexState{Module: mod, EntryPoint: "vs", Buffers: []wgpu.VertexBufferLayout{{
			ArrayStride: loopStride, StepMode: wgpu.VertexStepModeVertex,
			Attributes: []wgpu.VertexAttribute{{Format: wgpu.VertexFormatFloat32x4}},
		}}},
		Primitive:   wgpu.PrimitiveState{Topology: wgpu.PrimitiveTopologyPointList},
		Multisample: wgpu.MultisampleState{Count: 1, Mask: 0xFFFFFFFF},
		Fragment: &wgpu.FragmentState{Module: mod, EntryPoint: "fs", Targets: []wgpu.ColorTargetState{{
			Format: wgpu.TextureFormatRGBA8Unorm, WriteMask: wgpu.ColorWriteMaskAll,
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.pipeline.Release)
	target, err := raw.TryCreateTexture(&wgpu.TextureDescriptor{
		Size: wgpu.Extent3D{Width: 8, Height: 8, DepthOrArrayLayers: 1}, MipLevelCount: 1, SampleCount: 1,
		Dimension: wgpu.TextureDimension2D, Format: wgpu.TextureFormatRGBA8Unorm, Usage: wgpu.TextureUsageRenderAttachment,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(target.Release)
	if r.view, err = target.TryCreateView(nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.view.Release)
	r.readback, err = raw.TryCreateBuffer(&wgpu.BufferDescriptor{Label: "renderer readback", Size: r.size, Usage: wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.readback.Release)
	return r
}

// frame records the renderer's passes, a draw from each vertex buffer in
// draws and a copy of every range, submits them after gm.Submit, marks
// the frame's fence and checks what the ranges read.
//
// ended runs right after the fence, before the renderer waits for its
// read-back, so that gpumem has not seen the frame complete when the next
// update starts (as with frames in flight).
func (r *loopRenderer) frame(t *testing.T, gm *webgpu.Device, draws []loopRange, ranges []loopRange, ended func(fence uint64)) {
	t.Helper()
	enc, err := r.raw.TryCreateCommandEncoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Release()
	pass := enc.BeginRenderPass(&wgpu.RenderPassDescriptor{ColorAttachments: []wgpu.RenderPassColorAttachment{{
		View: r.view, LoadOp: wgpu.LoadOpClear, StoreOp: wgpu.StoreOpStore,
	}}})
	pass.SetPipeline(r.pipeline)
	for _, d := range draws {
		pass.SetVertexBuffer(0, d.buf, d.off, uint64(len(d.want)))
		pass.Draw(uint32(len(d.want)/loopStride), 1, 0, 0)
	}
	if err := pass.TryEnd(); err != nil {
		t.Fatal(err)
	}
	pass.Release()
	at := make([]uint64, len(ranges))
	var pos uint64
	for i, rg := range ranges {
		n := uint64(len(rg.want))
		if pos+n > r.size {
			t.Fatalf("frame reads %d bytes, more than the read-back's %d", pos+n, r.size)
		}
		at[i] = pos
		if rg.tex != nil {
			err = enc.TryCopyTextureToBuffer(
				&wgpu.TexelCopyTextureInfo{Texture: rg.tex, Origin: wgpu.Origin3D{Z: uint32(rg.off)}},
				&wgpu.TexelCopyBufferInfo{Buffer: r.readback, Layout: wgpu.TexelCopyBufferLayout{Offset: pos, BytesPerRow: loopTexSize * 4, RowsPerImage: loopTexSize}},
				&wgpu.Extent3D{Width: loopTexSize, Height: loopTexSize, DepthOrArrayLayers: 1})
		} else {
			err = enc.TryCopyBufferToBuffer(rg.buf, rg.off, r.readback, pos, n)
		}
		if err != nil {
			t.Fatal(err)
		}
		pos = (pos + n + 255) &^ 255
	}
	cb, err := enc.TryFinish(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Release()
	if err := gm.Submit(); err != nil {
		t.Fatal(err)
	}
	r.queue.Submit(cb)
	fence, err := gm.Fence()
	if err != nil {
		t.Fatal(err)
	}
	ended(fence)
	if pos == 0 {
		return
	}
	status := wgpu.MapAsyncStatus(0)
	if err := r.readback.TryMapAsync(wgpu.MapModeRead, 0, pos, func(s wgpu.MapAsyncStatus) { status = s }); err != nil {
		t.Fatal(err)
	}
	r.raw.Poll(true, nil)
	if status != wgpu.MapAsyncStatusSuccess {
		t.Fatalf("map read-back: status %v", status)
	}
	got := r.readback.GetMappedRange(0, uint(pos))
	for i, rg := range ranges {
		if rg.check && !bytes.Equal(got[at[i]:at[i]+uint64(len(rg.want))], rg.want) {
			r.readback.Unmap()
			t.Fatalf("%s (%s) reads other bytes than it holds", rg.key, map[bool]string{true: "as seen now", false: "as seen before the update"}[rg.now])
		}
	}
	r.readback.Unmap()
}

// loopBytes is n bytes of the object tag: vec4f vertices whose values
// are finite, distinct per tag.
func loopBytes(tag uint64, n int) []byte {
	b := make([]byte, n)
	for i := 0; i+4 <= n; i += 4 {
		v := float32(tag%4096)/4096 + float32(i/4)/(1<<20)
		binary.LittleEndian.PutUint32(b[i:], math.Float32bits(v))
	}
	return b
}

func TestRendererInTheLoop(t *testing.T) {
	frames := 150
	if testing.Short() {
		frames = 30
	}
	if testdevice.IsLong() {
		frames = 1000
	}
	raw := testdevice.Raw(t)
	gm, err := webgpu.Wrap(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer gm.Release()
	r := newLoopRenderer(t, raw)
	rng := rand.New(rand.NewPCG(26, 1))

	ar, err := arena.New(gm, arena.Options{Label: "loop arena", ElemSize: loopElem, Usage: device.Vertex, InitialElems: 256,
		MinElems: 256, MaxAllocs: 1024, ShrinkBelow: 0.5, ShrinkAfter: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer ar.Release()
	// A belt of one small chunk waits for the GPU in the middle of a
	// Flush, after the Flush may have released a buffer: no fence of its
	// own may end the renderer's frame there.
	belt, err := staging.New(gm, staging.Options{ChunkBytes: 1024, MaxChunks: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer belt.Release()
	ms, err := mesh.New(gm, mesh.Options{Label: "loop mesh", MinSlabBytes: 4096, LargeThresholdBytes: 2048, ShrinkBelow: 0.5, ShrinkAfter: 3, Belt: belt})
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Release()
	reg, err := bindless.New[int](gm, bindless.Options{Label: "loop textures", LayersPerPage: 4, MaxPages: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Release()
	key := bindless.Key{Format: device.RGBA8Unorm, Width: loopTexSize, Height: loopTexSize}
	// Meshlet batches: moves patch their rows' address words on the GPU
	// (Patch, whose tables are gpumem's internal buffers).
	ml, err := meshlet.New(gm, meshlet.Options{Label: "loop meshlets", RowWords: 4,
		Data: arena.Options{InitialElems: 256}, Rows: arena.Options{InitialElems: 64}, ShrinkBelow: 0.5, ShrinkAfter: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer ml.Release()

	type allocation struct {
		h    arena.Handle
		data []byte
	}
	type meshData struct {
		h    mesh.Handle
		data []byte
	}
	type batch struct {
		h    meshlet.BatchHandle
		data []byte
		rows [][4]uint32 // as added: address words relative to the data
	}
	var (
		allocs   []allocation
		meshes   []meshData
		batches  []batch
		textures = map[int][]byte{}
		nextTag  uint64
	)
	rawBuf := func(b device.Buffer) *wgpu.Buffer {
		wb, err := gm.RawBuffer(b)
		if err != nil {
			t.Fatal(err)
		}
		return wb
	}
	// seen lists what the renderer sees now: every live range with the
	// raw object and place it reads it from, keyed by what it is.
	seen := func() (ranges, draws []loopRange) {
		for _, a := range allocs {
			off, err := ar.Offset(a.h)
			if err != nil {
				t.Fatal(err)
			}
			ranges = append(ranges, loopRange{buf: rawBuf(ar.Buffer()), off: uint64(off) * loopElem, want: a.data, key: fmt.Sprintf("arena %v", a.h)})
		}
		for _, m := range meshes {
			if !ms.Resident(m.h) {
				continue
			}
			v, _, err := ms.Slices(m.h)
			if err != nil {
				t.Fatal(err)
			}
			rg := loopRange{buf: rawBuf(v.Buffer), off: uint64(v.StartElem) * loopStride, want: m.data, key: fmt.Sprintf("mesh %v", m.h)}
			ranges = append(ranges, rg)
			draws = append(draws, rg)
		}
		for _, b := range batches {
			p, err := ml.Lookup(b.h)
			if err != nil {
				t.Fatal(err)
			}
			data, rowsBuf := ml.Buffers()
			ranges = append(ranges, loopRange{buf: rawBuf(data), off: uint64(p.DataOffset) * 4, want: b.data, key: fmt.Sprintf("meshlet data %v", b.h)})
			// Rows as placed: address words absolute.
			rows := make([]byte, 0, 16*len(b.rows))
			for _, r := range b.rows {
				r[0] += p.DataOffset
				for _, w := range r {
					rows = binary.LittleEndian.AppendUint32(rows, w)
				}
			}
			ranges = append(ranges, loopRange{buf: rawBuf(rowsBuf), off: uint64(p.RowOffset) * 16, want: rows, key: fmt.Sprintf("meshlet rows %v", b.h), patched: true})
		}
		for id, px := range textures {
			h, _ := reg.Handle(id)
			tex, layer, ok := reg.Locate(h)
			if !ok {
				t.Fatalf("texture %d: no layer", id)
			}
			wt, err := gm.RawTexture(tex)
			if err != nil {
				t.Fatal(err)
			}
			ranges = append(ranges, loopRange{tex: wt, off: uint64(layer), want: px, key: fmt.Sprintf("texture %d", id)})
		}
		return ranges, draws
	}

	stats := map[string]int{}
	for f := range frames {
		before, draws := seen()
		// First the calls that move data or give memory back, one a frame,
		// then a poll of the fences, as ring and the belt make in the
		// middle of an update: with the renderer's last frame not yet
		// seen complete, it finds the queue idle while the moves (and
		// meshlet's patches, whose tables are gpumem's own buffers) are
		// recorded, not submitted, and must destroy none of what they
		// name.
		switch f % 7 {
		case 0:
			_, err = ar.Sweep(arena.SweepLimits{})
			stats["arena sweeps"]++
		case 1:
			_, err = ar.Compact()
			stats["arena compactions"]++
		case 2:
			_, err = ar.Shrink()
			stats["arena shrinks"]++
		case 3:
			if err = ms.Compact(); err == nil {
				_, err = ms.Shrink()
			}
			stats["mesh compactions"]++
		case 4:
			_, err = reg.Shrink()
			stats["bindless shrinks"]++
		case 5:
			_, _, err = reg.Compact()
			stats["bindless compactions"]++
		case 6:
			if err = ml.Compact(); err == nil {
				_, err = ml.Shrink()
			}
			stats["meshlet compactions"]++
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gm.Completed(); err != nil {
			t.Fatal(err)
		}
		// The managers' update: churn, then each frame one of the calls
		// that move data or give memory back.
		for range 1 + rng.IntN(6) {
			switch op := rng.IntN(12); {
			case op < 3 || len(allocs) == 0:
				nextTag++
				n := 1 + rng.IntN(48)
				if rng.IntN(8) == 0 {
					n = 200 + rng.IntN(400) // grows the arena
				}
				h, err := ar.Allocate(uint32(n))
				if err != nil {
					t.Fatal(err)
				}
				a := allocation{h: h, data: loopBytes(nextTag, n*loopElem)}
				if err := ar.Write(h, 0, a.data); err != nil {
					t.Fatal(err)
				}
				allocs = append(allocs, a)
			case op < 5:
				i := rng.IntN(len(allocs))
				if err := ar.Free(allocs[i].h); err != nil {
					t.Fatal(err)
				}
				allocs = slices.Delete(allocs, i, i+1)
			case op < 7 || len(meshes) == 0:
				nextTag++
				nv := 4 + rng.IntN(60)
				if rng.IntN(3) == 0 {
					nv = 200 + rng.IntN(200) // a buffer of its own
				}
				m := meshData{data: loopBytes(nextTag, nv*loopStride)}
				if m.h, err = ms.Add(mesh.Mesh{VertexStride: loopStride, Vertices: m.data}); err != nil {
					t.Fatal(err)
				}
				meshes = append(meshes, m)
			case op < 8:
				i := rng.IntN(len(meshes))
				if err := ms.Remove(meshes[i].h); err != nil {
					t.Fatal(err)
				}
				meshes = slices.Delete(meshes, i, i+1)
			case op < 10 && len(batches) < 24:
				nextTag++
				words := 8 + rng.IntN(120)
				b := batch{data: loopBytes(nextTag, 4*words)}
				data := make([]uint32, words)
				for i := range data {
					data[i] = binary.LittleEndian.Uint32(b.data[4*i:])
				}
				var rows []uint32
				for i := range 1 + rng.IntN(4) {
					r := [4]uint32{uint32(i * words / 4), uint32(nextTag), uint32(i), 7}
					b.rows = append(b.rows, r)
					rows = append(rows, r[:]...)
				}
				if b.h, err = ml.Add(data, rows); err != nil {
					t.Fatal(err)
				}
				batches = append(batches, b)
			case op < 10 || op == 10 && len(batches) > 0:
				i := rng.IntN(len(batches))
				if err := ml.Remove(batches[i].h); err != nil {
					t.Fatal(err)
				}
				batches = slices.Delete(batches, i, i+1)
			case op < 11 && len(textures) < 20:
				nextTag++
				id := int(nextTag)
				px := loopBytes(nextTag, loopTexSize*loopTexSize*4)
				if _, err := reg.Register(id, key, px); err != nil {
					t.Fatal(err)
				}
				textures[id] = px
			default:
				for id := range textures {
					if rng.IntN(3) == 0 {
						if err := reg.Unregister(id); err != nil {
							t.Fatal(err)
						}
						delete(textures, id)
					}
				}
			}
		}
		if _, err := gm.Completed(); err != nil {
			t.Fatal(err)
		}
		if err := ms.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := ms.Sweep(arena.SweepLimits{}); err != nil {
			t.Fatal(err)
		}

		// The renderer: its old view of every object, checked where the
		// data still lives at the same place, and the current one, all
		// checked.
		after, _ := seen()
		now := map[string]loopRange{}
		for _, rg := range after {
			rg.check = true
			now[rg.key] = rg
		}
		for i, rg := range before {
			cur, live := now[rg.key]
			// A page's layers are not copied when another page takes the
			// texture; a buffer's bytes are, growth or shrink.
			before[i].check = live && cur.off == rg.off && cur.tex == rg.tex
			if rg.patched {
				// Address words the update patched in place read as
				// patched; an old buffer holds them as they were when it
				// was replaced, perhaps half patched.
				before[i].want = cur.want
				before[i].check = before[i].check && cur.buf == rg.buf
			}
			if live && (cur.buf != rg.buf || cur.tex != rg.tex) {
				stats["old objects read"]++
			}
		}
		for _, rg := range after {
			rg.check, rg.now = true, true
			before = append(before, rg)
		}
		r.frame(t, gm, draws, before, func(fence uint64) {
			if err := belt.EndFrame(fence); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Logf("belt %+v", belt.Stats())
	if belt.Stats().Waits == 0 {
		t.Error("the belt never waited in a Flush")
	}
	if s := ar.Stats(); s.Growths == 0 {
		t.Errorf("the arena never grew: %+v", s)
	}
	for _, k := range []string{"old objects read"} {
		if stats[k] == 0 {
			t.Errorf("no frame exercised %s", k)
		}
	}
	t.Logf("%d frames: %v; arena %+v; mesh %+v; bindless %+v", frames, stats, ar.Stats(), ms.Stats(), reg.Stats())
}
