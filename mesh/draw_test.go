package mesh_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// The draw test renders one scene twice to an offscreen texture: once from
// buffers of each mesh's own (plain wgpu buffers, the reference), once from
// the allocator's slabs with base vertex and first index from Slices,
// after frames of adds, removals, modifications, growths and sweeps. The
// images must match pixel for pixel.
//
// The scene: a 32x32 grid of 8x8-pixel tiles on a 256x256 target, one mesh
// per tile, drawn in tile order. A mesh is a few triangles inside its
// tile, all of one flat color that its vertex data carries (a seed in the
// position's z, a constant uv or a constant color), so a range read from
// the wrong place shows as a wrong color or a wrong shape. Positions are
// multiples of 1/256 and seeds multiples of 1/1024, exact in half floats.
const (
	drawSize  = 256
	drawTiles = 32
	tileUnits = 2 * drawSize / drawTiles // tile size in 1/256 clip units
)

// Vertex layouts of the scene. Stride 6 (three half floats) is not a
// multiple of 4, which WebGPU vertex buffers need, so that pipeline pulls
// its vertices from the buffer bound as storage, by vertex_index (which
// includes the base vertex): the slot math is exercised all the same.
var drawStrides = []uint32{12, 20, 24, 6}

const drawShader = `
struct VOut {
	@builtin(position) pos: vec4f,
	@location(0) @interpolate(flat) color: vec4f,
}

fn seedColor(z: f32) -> vec4f {
	return vec4f(z, fract(z * 7.0), fract(z * 13.0), 1.0);
}

@vertex fn vs_pos(@location(0) p: vec3f) -> VOut {
	return VOut(vec4f(p.xy, 0.0, 1.0), seedColor(p.z));
}

@vertex fn vs_uv(@location(0) p: vec3f, @location(1) uv: vec2f) -> VOut {
	return VOut(vec4f(p.xy, 0.0, 1.0), vec4f(uv, p.z, 1.0));
}

@vertex fn vs_color(@location(0) p: vec3f, @location(1) c: vec3f) -> VOut {
	return VOut(vec4f(p.xy, 0.0, 1.0), vec4f(c, 1.0));
}

@group(0) @binding(0) var<storage, read> halves: array<u32>;

fn half(i: u32) -> f32 {
	let v = unpack2x16float(halves[i / 2u]);
	return select(v.x, v.y, (i & 1u) == 1u);
}

@vertex fn vs_half(@builtin(vertex_index) vi: u32) -> VOut {
	let b = vi * 3u;
	return VOut(vec4f(half(b), half(b + 1u), 0.0, 1.0), seedColor(half(b + 2u)));
}

@fragment fn fs(in: VOut) -> @location(0) vec4f {
	return in.color;
}

// The same color, as RGBA8 would store it, coded in a Depth32Float depth:
// 24 bits, exact in a float32. See renderer.depth.
@fragment fn fs_depth(in: VOut) -> @builtin(frag_depth) f32 {
	let c = vec3u(round(clamp(in.color.rgb, vec3f(0.0), vec3f(1.0)) * 255.0));
	return f32((c.r << 16u) | (c.g << 8u) | c.b) / 16777216.0;
}
`

// sceneMesh is one mesh of the scene.
type sceneMesh struct {
	tile int
	m    mesh.Mesh
}

// genMesh makes a mesh for tile: nv vertices inside the tile, triangles
// over them (indexed unless the index format is 0).
func genMesh(r *rand.Rand, tile int, stride uint32, format mesh.IndexFormat, nv int) mesh.Mesh {
	tx, ty := tile%drawTiles, tile/drawTiles
	seed := float32(1+r.IntN(1023)) / 1024
	c := [3]float32{float32(r.IntN(256)) / 255, float32(r.IntN(256)) / 255, float32(r.IntN(256)) / 255}
	m := mesh.Mesh{VertexStride: stride}
	for range nv {
		x := float32(-drawSize+tx*tileUnits+1+r.IntN(tileUnits-2)) / drawSize
		y := float32(-drawSize+ty*tileUnits+1+r.IntN(tileUnits-2)) / drawSize
		switch stride {
		case 6:
			for _, f := range []float32{x, y, seed} {
				m.Vertices = binary.LittleEndian.AppendUint16(m.Vertices, toHalf(f))
			}
		default:
			for _, f := range []float32{x, y, seed} {
				m.Vertices = binary.LittleEndian.AppendUint32(m.Vertices, math.Float32bits(f))
			}
			extra := map[uint32][]float32{20: c[:2], 24: c[:]}[stride]
			for _, f := range extra {
				m.Vertices = binary.LittleEndian.AppendUint32(m.Vertices, math.Float32bits(f))
			}
		}
	}
	if format != 0 {
		m.IndexFormat = format
		for range 3 * (1 + r.IntN(2*nv)) {
			i := r.IntN(nv)
			if format == mesh.Uint16 {
				m.Indices = binary.LittleEndian.AppendUint16(m.Indices, uint16(i))
			} else {
				m.Indices = binary.LittleEndian.AppendUint32(m.Indices, uint32(i))
			}
		}
	}
	return m
}

// toHalf converts f, a normal number exact in half precision (or 0).
func toHalf(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff == 0 {
		return uint16(b >> 16)
	}
	exp := int(b>>23&0xff) - 127 + 15
	return uint16(b>>16&0x8000) | uint16(exp)<<10 | uint16(b>>13&0x3ff)
}

// randSceneMesh picks a layout, an index format and a size for tile.
func randSceneMesh(r *rand.Rand, tile int) mesh.Mesh {
	stride := drawStrides[r.IntN(len(drawStrides))]
	var format mesh.IndexFormat
	switch r.IntN(10) {
	case 0:
		format = 0 // non-indexed
	case 1, 2, 3, 4:
		format = mesh.Uint16
	default:
		format = mesh.Uint32
	}
	nv := 3 + r.IntN(10)
	if r.IntN(25) == 0 {
		nv = 70 + r.IntN(20) // above the test's large threshold: a buffer of its own
	}
	if format == 0 {
		nv -= nv % 3
	}
	return genMesh(r, tile, stride, format, nv)
}

// drawCall is one mesh's draw, from whichever buffers.
type drawCall struct {
	stride              uint32
	vbuf, ibuf          *wgpu.Buffer
	format              mesh.IndexFormat // 0: non-indexed
	count               uint32           // indices, or vertices
	firstIndex, baseVtx uint32
}

// renderer holds the pipelines and the target of the draw test.
type renderer struct {
	dev       *webgpu.Device
	wd        *wgpu.Device
	queue     *wgpu.Queue
	pipelines map[uint32]*wgpu.RenderPipeline
	groups    map[*wgpu.Buffer]*wgpu.BindGroup
	target    *wgpu.Texture
	view      *wgpu.TextureView
	readback  *wgpu.Buffer
	// depth: the device refused a color target, so the scene renders to a
	// Depth32Float texture whose depth codes each pixel's RGB, read back
	// and unpacked to the same RGBA8 bytes (see newRenderer).
	depth bool
}

func newRenderer(t *testing.T, dev *webgpu.Device) *renderer {
	t.Helper()
	wd, queue := dev.Raw()
	rd := &renderer{dev: dev, wd: wd, queue: queue, pipelines: map[uint32]*wgpu.RenderPipeline{}, groups: map[*wgpu.Buffer]*wgpu.BindGroup{}}
	mod, err := wd.TryCreateShaderModule(&wgpu.ShaderModuleDescriptor{Label: "mesh draw test", WGSLSource: &wgpu.ShaderSourceWGSL{Code: drawShader}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mod.Release)
	f32 := func(n int) []wgpu.VertexAttribute {
		formats := map[int]wgpu.VertexFormat{2: wgpu.VertexFormatFloat32x2, 3: wgpu.VertexFormatFloat32x3}
		return []wgpu.VertexAttribute{{Format: wgpu.VertexFormatFloat32x3, Offset: 0, ShaderLocation: 0}, {Format: formats[n], Offset: 12, ShaderLocation: 1}}
	}
	type stage struct {
		stride uint32
		entry  string
		attrs  []wgpu.VertexAttribute
	}
	stages := []stage{
		{12, "vs_pos", []wgpu.VertexAttribute{{Format: wgpu.VertexFormatFloat32x3, Offset: 0, ShaderLocation: 0}}},
		{20, "vs_uv", f32(2)},
		{24, "vs_color", f32(3)},
		{6, "vs_half", nil},
	}
	pipeline := func(c stage) (*wgpu.RenderPipeline, error) {
		vs := wgpu.VertexState{Module: mod, EntryPoint: c.entry}
		if c.attrs != nil {
			vs.Buffers = []wgpu.VertexBufferLayout{{ArrayStride: uint64(c.stride), StepMode: wgpu.VertexStepModeVertex, Attributes: c.attrs}}
		}
		desc := wgpu.RenderPipelineDescriptor{
			Label:       fmt.Sprintf("stride %d", c.stride),
			Vertex:      vs,
			Primitive:   wgpu.PrimitiveState{Topology: wgpu.PrimitiveTopologyTriangleList, FrontFace: wgpu.FrontFaceCCW, CullMode: wgpu.CullModeNone},
			Multisample: wgpu.MultisampleState{Count: 1, Mask: 0xFFFFFFFF},
			Fragment: &wgpu.FragmentState{Module: mod, EntryPoint: "fs", Targets: []wgpu.ColorTargetState{{
				Format: wgpu.TextureFormatRGBA8Unorm, Blend: &wgpu.BlendStateReplace, WriteMask: wgpu.ColorWriteMaskAll,
			}}},
		}
		if rd.depth {
			always := wgpu.StencilFaceState{Compare: wgpu.CompareFunctionAlways, FailOp: wgpu.StencilOperationKeep, DepthFailOp: wgpu.StencilOperationKeep, PassOp: wgpu.StencilOperationKeep}
			desc.Fragment = &wgpu.FragmentState{Module: mod, EntryPoint: "fs_depth"}
			desc.DepthStencil = &wgpu.DepthStencilState{Format: wgpu.TextureFormatDepth32Float, DepthWriteEnabled: wgpu.OptionalBoolTrue,
				DepthCompare: wgpu.CompareFunctionAlways, StencilFront: always, StencilBack: always}
		}
		return wd.TryCreateRenderPipeline(&desc)
	}
	// The test renders to an RGBA8 target. A device opened with
	// webgpu.Options.AdapterLimits cannot make color targets (the binding
	// drops maxColorAttachmentBytesPerSample); GPUMEM_MESH_DRAW_DEPTH=1
	// renders to a Depth32Float target instead, whose depth codes the 24
	// bits of RGB, unpacked on read-back to the bytes RGBA8 would hold.
	rd.depth = os.Getenv("GPUMEM_MESH_DRAW_DEPTH") == "1"
	for _, c := range stages {
		p, err := pipeline(c)
		if err != nil {
			t.Fatalf("pipeline for stride %d: %v", c.stride, err)
		}
		t.Cleanup(p.Release)
		rd.pipelines[c.stride] = p
	}
	format, usage := wgpu.TextureFormatRGBA8Unorm, wgpu.TextureUsageRenderAttachment|wgpu.TextureUsageCopySrc
	if rd.depth {
		format = wgpu.TextureFormatDepth32Float
	}
	rd.target, err = wd.TryCreateTexture(&wgpu.TextureDescriptor{
		Size:          wgpu.Extent3D{Width: drawSize, Height: drawSize, DepthOrArrayLayers: 1},
		MipLevelCount: 1, SampleCount: 1, Dimension: wgpu.TextureDimension2D,
		Format: format, Usage: usage,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rd.target.Release)
	if rd.view, err = rd.target.TryCreateView(nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rd.view.Release)
	rd.readback, err = wd.TryCreateBuffer(&wgpu.BufferDescriptor{Label: "readback", Size: drawSize * drawSize * 4, Usage: wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rd.readback.Release)
	t.Cleanup(func() {
		for _, g := range rd.groups {
			g.Release()
		}
	})
	return rd
}

// bindGroup returns the storage binding of buf for the stride-6 pipeline.
func (rd *renderer) bindGroup(t *testing.T, buf *wgpu.Buffer) *wgpu.BindGroup {
	if g, ok := rd.groups[buf]; ok {
		return g
	}
	g, err := rd.wd.TryCreateBindGroup(&wgpu.BindGroupDescriptor{
		Layout:  rd.pipelines[6].GetBindGroupLayout(0),
		Entries: []wgpu.BindGroupEntry{{Binding: 0, Buffer: buf, Offset: 0, Size: wgpu.WholeSize}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rd.groups[buf] = g
	return g
}

// render draws calls in order on a black target and returns its pixels,
// RGBA, rows top to bottom.
func (rd *renderer) render(t *testing.T, calls []drawCall) []byte {
	t.Helper()
	enc, err := rd.wd.TryCreateCommandEncoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Release()
	desc := wgpu.RenderPassDescriptor{ColorAttachments: []wgpu.RenderPassColorAttachment{{
		View: rd.view, LoadOp: wgpu.LoadOpClear, StoreOp: wgpu.StoreOpStore, ClearValue: wgpu.ColorBlack,
	}}}
	src := rd.target.AsImageCopy()
	if rd.depth {
		desc = wgpu.RenderPassDescriptor{DepthStencilAttachment: &wgpu.RenderPassDepthStencilAttachment{
			View: rd.view, DepthLoadOp: wgpu.LoadOpClear, DepthStoreOp: wgpu.StoreOpStore, DepthClearValue: 0,
		}}
		src.Aspect = wgpu.TextureAspectDepthOnly
	}
	pass := enc.BeginRenderPass(&desc)
	for _, c := range calls {
		pass.SetPipeline(rd.pipelines[c.stride])
		if c.stride == 6 {
			pass.SetBindGroup(0, rd.bindGroup(t, c.vbuf), nil)
		} else {
			pass.SetVertexBuffer(0, c.vbuf, 0, wgpu.WholeSize)
		}
		if c.format == 0 {
			pass.Draw(c.count, 1, c.baseVtx, 0)
			continue
		}
		f := wgpu.IndexFormatUint32
		if c.format == mesh.Uint16 {
			f = wgpu.IndexFormatUint16
		}
		pass.SetIndexBuffer(c.ibuf, f, 0, wgpu.WholeSize)
		pass.DrawIndexed(c.count, 1, c.firstIndex, int32(c.baseVtx), 0)
	}
	if err := pass.TryEnd(); err != nil {
		t.Fatal(err)
	}
	extent := wgpu.Extent3D{Width: drawSize, Height: drawSize, DepthOrArrayLayers: 1}
	if err := enc.TryCopyTextureToBuffer(src, &wgpu.TexelCopyBufferInfo{
		Buffer: rd.readback,
		Layout: wgpu.TexelCopyBufferLayout{BytesPerRow: drawSize * 4, RowsPerImage: drawSize},
	}, &extent); err != nil {
		t.Fatal(err)
	}
	cb, err := enc.TryFinish(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Release()
	if err := rd.dev.Submit(); err != nil { // the allocator's uploads and moves first
		t.Fatal(err)
	}
	rd.queue.Submit(cb)
	status := wgpu.MapAsyncStatus(0)
	if err := rd.readback.TryMapAsync(wgpu.MapModeRead, 0, drawSize*drawSize*4, func(s wgpu.MapAsyncStatus) { status = s }); err != nil {
		t.Fatal(err)
	}
	rd.wd.Poll(true, nil)
	if status != wgpu.MapAsyncStatusSuccess {
		t.Fatalf("map readback: status %v", status)
	}
	px := slices.Clone(rd.readback.GetMappedRange(0, drawSize*drawSize*4))
	if err := rd.readback.TryUnmap(); err != nil {
		t.Fatal(err)
	}
	if rd.depth { // unpack each depth's 24 bits to the RGBA8 the color target would hold
		for p := 0; p < len(px); p += 4 {
			code := uint32(math.Float32frombits(binary.LittleEndian.Uint32(px[p:])) * (1 << 24))
			px[p], px[p+1], px[p+2], px[p+3] = byte(code>>16), byte(code>>8), byte(code), 255
		}
	}
	return px
}

// ownBuffer creates a plain wgpu buffer holding data, padded to 4 bytes.
func ownBuffer(t *testing.T, wd *wgpu.Device, data []byte, usage wgpu.BufferUsage) *wgpu.Buffer {
	t.Helper()
	padded := make([]byte, (len(data)+3)&^3)
	copy(padded, data)
	b, err := wd.TryCreateBufferInit(&wgpu.BufferInitDescriptor{Label: "reference mesh", Contents: padded, Usage: usage})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Release)
	return b
}

func TestDrawMatchesOwnBuffers(t *testing.T) {
	dev := testdevice.WebGPU(t, webgpu.Options{})
	a, err := mesh.New(dev, mesh.Options{
		MinSlabBytes:        512, // small slabs, so the frames below grow them
		LargeThresholdBytes: 1536,
		Usage:               device.Storage, // the stride-6 pipeline binds vertex buffers as storage
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()

	r := rand.New(rand.NewPCG(2026, 5))
	scene := map[mesh.Handle]*sceneMesh{}
	freeTiles := r.Perm(drawTiles * drawTiles)
	add := func() {
		tile := freeTiles[len(freeTiles)-1]
		freeTiles = freeTiles[:len(freeTiles)-1]
		m := randSceneMesh(r, tile)
		h, err := a.Add(m)
		if err != nil {
			t.Fatal(err)
		}
		scene[h] = &sceneMesh{tile: tile, m: m}
	}
	handles := func() []mesh.Handle { // in tile order: deterministic
		hs := make([]mesh.Handle, 0, len(scene))
		for h := range scene {
			hs = append(hs, h)
		}
		slices.SortFunc(hs, func(x, y mesh.Handle) int { return scene[x].tile - scene[y].tile })
		return hs
	}

	for range 350 {
		add()
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	moved := map[mesh.Handle]bool{}
	for frame := range 12 {
		hs := handles()
		r.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
		removals := 15
		if frame == 5 {
			removals = 80 // a burst leaves holes enough for the sweeps to close
		}
		for _, h := range hs[:removals] {
			if err := a.Remove(h); err != nil {
				t.Fatal(err)
			}
			freeTiles = append(freeTiles, scene[h].tile)
			delete(scene, h)
		}
		for k, h := range hs[removals : removals+25] {
			sm := scene[h]
			var m mesh.Mesh
			if k%2 == 0 { // same sizes, new contents: rewritten in place
				nv := len(sm.m.Vertices) / int(sm.m.VertexStride)
				m = genMesh(r, sm.tile, sm.m.VertexStride, sm.m.IndexFormat, nv)
				if len(sm.m.Indices) > 0 {
					m.Indices = m.Indices[:0]
					for range len(sm.m.Indices) / int(sm.m.IndexFormat) {
						if sm.m.IndexFormat == mesh.Uint16 {
							m.Indices = binary.LittleEndian.AppendUint16(m.Indices, uint16(r.IntN(nv)))
						} else {
							m.Indices = binary.LittleEndian.AppendUint32(m.Indices, uint32(r.IntN(nv)))
						}
					}
				}
			} else { // new sizes, perhaps a new layout
				m = randSceneMesh(r, sm.tile)
			}
			if err := a.Modify(h, m); err != nil {
				t.Fatal(err)
			}
			sm.m = m
		}
		for range 40 {
			add()
		}
		if err := a.Flush(); err != nil {
			t.Fatalf("frame %d: %v", frame, err)
		}
		if err := a.Sweep(arena.SweepLimits{Moves: 24}); err != nil {
			t.Fatalf("frame %d: sweep: %v", frame, err)
		}
		for _, c := range a.Changes(nil) {
			if c.Kind == memory.Moved {
				moved[mesh.HandleOf(c)] = true
			}
		}
		if err := mesh.Check(a); err != nil {
			t.Fatalf("frame %d: %v", frame, err)
		}
	}
	st := a.Stats()
	t.Logf("%d meshes, %d slabs, %d own buffers, %d growths, %d compactions, %d ranges moved (%d meshes reported), %d slabs released",
		st.Meshes, st.Slabs, st.OwnBuffers, st.Growths, st.Compactions, st.Moves, len(moved), st.SlabsReleased)
	if st.Meshes < 500 || st.Growths == 0 || st.Moves == 0 || len(moved) == 0 || st.OwnBuffers == 0 {
		t.Fatalf("the scene did not exercise what it should: %+v", st)
	}

	// The reference: every mesh in plain buffers of its own.
	wd, _ := dev.Raw()
	var ref, packed []drawCall
	strides := map[uint32]int{}
	formats := map[mesh.IndexFormat]int{}
	for _, h := range handles() {
		m := scene[h].m
		strides[m.VertexStride]++
		formats[m.IndexFormat]++
		c := drawCall{stride: m.VertexStride, format: m.IndexFormat}
		c.vbuf = ownBuffer(t, wd, m.Vertices, wgpu.BufferUsageVertex|wgpu.BufferUsageStorage)
		c.count = uint32(len(m.Vertices)) / m.VertexStride
		if len(m.Indices) > 0 {
			c.ibuf = ownBuffer(t, wd, m.Indices, wgpu.BufferUsageIndex)
			c.count = uint32(len(m.Indices)) / uint32(m.IndexFormat)
		} else {
			c.format = 0
		}
		ref = append(ref, c)

		v, i, err := a.Slices(h)
		if err != nil {
			t.Fatal(err)
		}
		p := c
		if p.vbuf, err = dev.RawBuffer(v.Buffer); err != nil {
			t.Fatal(err)
		}
		p.baseVtx = v.StartElem
		if p.format != 0 {
			if p.ibuf, err = dev.RawBuffer(i.Buffer); err != nil {
				t.Fatal(err)
			}
			p.firstIndex = i.StartElem
			if i.Len() != p.count {
				t.Fatalf("index slice of %d, want %d", i.Len(), p.count)
			}
		}
		packed = append(packed, p)
	}
	t.Logf("layouts drawn: strides %v, index formats %v", strides, formats)

	rd := newRenderer(t, dev)
	want := rd.render(t, ref)
	got := rd.render(t, packed)

	lit, colors := 0, map[[4]byte]bool{}
	for p := 0; p < len(want); p += 4 {
		px := [4]byte(want[p : p+4])
		if px != [4]byte{0, 0, 0, 255} {
			lit++
		}
		colors[px] = true
	}
	if lit < len(want)/4/20 || len(colors) < 200 {
		t.Fatalf("reference image nearly blank: %d lit pixels, %d colors", lit, len(colors))
	}
	if !bytes.Equal(got, want) {
		diff := 0
		for p := 0; p < len(want); p += 4 {
			if !bytes.Equal(got[p:p+4], want[p:p+4]) {
				diff++
			}
		}
		t.Fatalf("slab rendering differs from the reference in %d of %d pixels", diff, drawSize*drawSize)
	}
	// The comparison sees a range off by one element: shift one mesh's
	// base vertex (or first vertex) and the images must differ.
	for k, c := range packed {
		if c.stride != 6 && c.format == 0 && c.baseVtx > 0 {
			packed[k].baseVtx--
			if bytes.Equal(rd.render(t, packed), want) {
				t.Fatalf("a range off by one vertex renders the same image: the test is blind")
			}
			break
		}
	}
	t.Logf("%d meshes drawn, %d of %d pixels lit, %d colors, images identical", len(ref), lit, drawSize*drawSize, len(colors))
}
