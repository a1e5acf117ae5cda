//go:build cgo && !js

package multidraw_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/draw"
	"github.com/gpumem/gpumem/draw/multidraw"
	_ "github.com/gpumem/gpumem/internal/testdevice" // a private XDG_RUNTIME_DIR
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// The world the tests and benchmarks draw: n meshes, each a fan of 3 to
// 22 triangles inside its own tile of a square grid, so no two overlap
// and the image does not depend on the order of the draws. Every mesh has
// its own object (offset, scale, colour) in a storage array that the
// vertex stage reads through the instance index: the draw's first
// instance.

const (
	worldStride = 8 // float32x2 positions
	objectBytes = 32
)

const worldWGSL = `
struct Object {
	offset: vec2f,
	scale: f32,
	pad: f32,
	color: vec4f,
}

@group(0) @binding(0) var<storage, read> objects: array<Object>;

struct VOut {
	@builtin(position) pos: vec4f,
	@location(0) color: vec4f,
}

@vertex fn vs(@location(0) p: vec2f, @builtin(instance_index) i: u32) -> VOut {
	let o = objects[i];
	return VOut(vec4f(o.offset + o.scale * p, 0.0, 1.0), o.color);
}

@fragment fn fs(v: VOut) -> @location(0) vec4f {
	return v.color;
}
`

// gpu is a device of the test's own with the features the draws need
// where the adapter has them (indirect first instance, multi-draw
// indirect count, timestamps), as a renderer creates it.
type gpu struct {
	inst *wgpu.Instance
	ad   *wgpu.Adapter
	wd   *wgpu.Device
	dev  *webgpu.Device
}

// indirectValidation keeps wgpu-native's default instance flags, which
// validate every indirect draw's arguments at submit; false makes the
// instance with no flags. The benchmark measures either; the tests keep
// the default.
var indirectValidation = flag.Bool("indirect-validation", true, "create the WebGPU instance with wgpu-native's default flags (validating indirect draws); false: no flags")

// openGPU opens the device, without the features in drop (to force a
// fallback).
func openGPU(tb testing.TB, drop ...wgpu.FeatureName) *gpu {
	tb.Helper()
	g := &gpu{}
	if *indirectValidation {
		g.inst = wgpu.CreateInstance(nil)
	} else {
		g.inst = wgpu.CreateInstance(&wgpu.InstanceDescriptor{})
	}
	ad, err := g.inst.RequestAdapter(&wgpu.RequestAdapterOptions{PowerPreference: wgpu.PowerPreferenceHighPerformance})
	if err != nil || ad == nil {
		g.inst.Release()
		if os.Getenv("CI") == "true" {
			tb.Fatalf("CI must run the webgpu tests: %v", err)
		}
		tb.Skipf("no WebGPU adapter (on Debian without a GPU: apt-get install mesa-vulkan-drivers): %v", err)
	}
	g.ad = ad
	var features []wgpu.FeatureName
	for _, f := range []wgpu.FeatureName{wgpu.FeatureNameIndirectFirstInstance, wgpu.NativeFeatureMultiDrawIndirectCount, wgpu.FeatureNameTimestampQuery, wgpu.NativeFeatureTimestampQueryInsideEncoders} {
		if ad.HasFeature(f) && !slices.Contains(drop, f) {
			features = append(features, f)
		}
	}
	if g.wd, err = ad.RequestDevice(&wgpu.DeviceDescriptor{RequiredFeatures: features}); err != nil {
		tb.Fatal(err)
	}
	if g.dev, err = webgpu.Wrap(g.wd); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		g.dev.Release()
		g.wd.Release()
		g.ad.Release()
		g.inst.Release()
	})
	return g
}

// world is n meshes in gpumem's slabs, their table and a list, the
// objects, and a target to draw into.
type world struct {
	g             *gpu
	n, side       int
	width, height uint32
	meshes        *mesh.Allocator
	tab           *draw.Table
	list          *draw.List
	filled        string // what list holds (fillOf); "" when unknown
	flips         int    // fills, for a flip way's order
	cs            []memory.Change

	ids     []draw.ID          // by object; zero where the tile is empty
	spheres []multidraw.Sphere // by object: its tile's circle
	bounds  device.Buffer      // spheres, for PrepareCulled
	frustum multidraw.Frustum  // what the culled ways keep
	hs      []mesh.Handle
	data    []mesh.Mesh // by object
	gen     int         // meshes made so far: picks the next one's shape
	drawer  map[multidraw.Mode]*multidraw.Drawer

	pipeline       *wgpu.RenderPipeline
	objects        *wgpu.Buffer
	group          *wgpu.BindGroup
	target         *wgpu.Texture
	view           *wgpu.TextureView
	own            []ownMesh // way a: buffers of each mesh's own
	queue          *wgpu.Queue
	timer          device.Timer
	timed          bool // frames take timestamps (BenchmarkDraw turns it off while it measures)
	cpu, gpuTime   time.Duration
	frames, gpuFrm int
	// phases splits cpu: filling the list, Prepare, recording the
	// render pass, finishing the encoder, submitting.
	phases [5]time.Duration
}

type ownMesh struct {
	v, i *wgpu.Buffer
	n    uint32
}

// newWorld returns a world of n meshes drawn into width x height pixels,
// its slabs holding at most perSlab meshes (0: the default).
func newWorld(tb testing.TB, g *gpu, n int, width, height, perSlab uint32) *world {
	tb.Helper()
	w := &world{g: g, n: n, width: width, height: height, drawer: map[multidraw.Mode]*multidraw.Drawer{}}
	for w.side*w.side < n {
		w.side++
	}
	tb.Cleanup(w.release)
	var err error
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	w.meshes, err = mesh.New(g.dev, mesh.Options{Label: "world", MaxMeshesPerSlab: perSlab})
	must(err)
	w.tab, err = draw.NewTable(g.dev, w.meshes, "world")
	must(err)
	w.list, err = draw.NewList(w.tab, n)
	must(err)
	w.ids, w.hs, w.data = make([]draw.ID, n), make([]mesh.Handle, n), make([]mesh.Mesh, n)
	for k := range n {
		must(w.add(k))
	}
	must(w.flush())

	mod, err := g.wd.TryCreateShaderModule(&wgpu.ShaderModuleDescriptor{WGSLSource: &wgpu.ShaderSourceWGSL{Code: worldWGSL}})
	must(err)
	defer mod.Release()
	w.pipeline, err = g.wd.TryCreateRenderPipeline(&wgpu.RenderPipelineDescriptor{
		Vertex: wgpu.VertexState{Module: mod, EntryPoint: "vs", Buffers: []wgpu.VertexBufferLayout{{
			ArrayStride: worldStride, StepMode: wgpu.VertexStepModeVertex,
			Attributes: []wgpu.VertexAttribute{{Format: wgpu.VertexFormatFloat32x2, ShaderLocation: 0}},
		}}},
		Primitive:   wgpu.PrimitiveState{Topology: wgpu.PrimitiveTopologyTriangleList, FrontFace: wgpu.FrontFaceCCW, CullMode: wgpu.CullModeNone},
		Multisample: wgpu.MultisampleState{Count: 1, Mask: 0xFFFFFFFF},
		Fragment: &wgpu.FragmentState{Module: mod, EntryPoint: "fs", Targets: []wgpu.ColorTargetState{{
			Format: wgpu.TextureFormatRGBA8Unorm, Blend: &wgpu.BlendStateReplace, WriteMask: wgpu.ColorWriteMaskAll,
		}}},
	})
	must(err)
	var objs []byte
	for k := range n {
		x, y := k%w.side, k/w.side
		s := float32(1) / float32(w.side)
		c := [4]float32{float32(k%7) / 6, float32(k%11) / 10, float32(k%13) / 12, 1}
		for _, f := range []float32{-1 + s*(2*float32(x)+1), -1 + s*(2*float32(y)+1), 0.9 * s, 0, c[0], c[1], c[2], c[3]} {
			objs = binary.LittleEndian.AppendUint32(objs, math.Float32bits(f))
		}
	}
	var sph []byte
	for k := range n {
		x, y := k%w.side, k/w.side
		s := float32(1) / float32(w.side)
		w.spheres = append(w.spheres, multidraw.Sphere{X: -1 + s*(2*float32(x)+1), Y: -1 + s*(2*float32(y)+1), Radius: 0.9 * s})
		sph = w.spheres[k].Append(sph)
	}
	w.bounds, err = g.dev.CreateBuffer(device.BufferDesc{Label: "world bounds", Size: uint64(len(sph)), Usage: device.Storage | device.CopyDst})
	must(err)
	must(g.dev.WriteBuffer(w.bounds, 0, sph))
	w.frustum = w.half()
	w.objects, err = g.wd.TryCreateBufferInit(&wgpu.BufferInitDescriptor{Contents: objs, Usage: wgpu.BufferUsageStorage})
	must(err)
	layout := w.pipeline.GetBindGroupLayout(0)
	defer layout.Release()
	w.group, err = g.wd.TryCreateBindGroup(&wgpu.BindGroupDescriptor{Layout: layout, Entries: []wgpu.BindGroupEntry{{Binding: 0, Buffer: w.objects, Size: wgpu.WholeSize}}})
	must(err)
	w.target, err = g.wd.TryCreateTexture(&wgpu.TextureDescriptor{
		Size:          wgpu.Extent3D{Width: width, Height: height, DepthOrArrayLayers: 1},
		MipLevelCount: 1, SampleCount: 1, Dimension: wgpu.TextureDimension2D,
		Format: wgpu.TextureFormatRGBA8Unorm, Usage: wgpu.TextureUsageRenderAttachment | wgpu.TextureUsageCopySrc,
	})
	must(err)
	w.view, err = w.target.TryCreateView(nil)
	must(err)
	w.queue = g.wd.GetQueue()
	w.timer, w.timed = device.TimerOf(g.dev)
	return w
}

// meshFor returns the gen'th mesh the world makes: a fan of 3 to 22
// triangles, one in three a star, inside the unit circle.
func meshFor(gen int) mesh.Mesh {
	n := 3 + (gen*7)%20
	m := mesh.Mesh{VertexStride: worldStride, IndexFormat: mesh.Uint16}
	m.Vertices = binary.LittleEndian.AppendUint64(m.Vertices, 0)
	for k := range n {
		a := 2*math.Pi*float64(k)/float64(n) + float64(gen%5)
		r := 1.0
		if gen%3 == 0 && k%2 == 1 {
			r = 0.5
		}
		m.Vertices = binary.LittleEndian.AppendUint32(m.Vertices, math.Float32bits(float32(r*math.Cos(a))))
		m.Vertices = binary.LittleEndian.AppendUint32(m.Vertices, math.Float32bits(float32(r*math.Sin(a))))
		for _, i := range []int{0, 1 + k, 1 + (k+1)%n} {
			m.Indices = binary.LittleEndian.AppendUint16(m.Indices, uint16(i))
		}
	}
	return m
}

// fillOf names what a way's list holds: every mesh, or the visible ones.
func fillOf(wy way) string {
	if wy.only {
		return "visible"
	}
	return "all"
}

// fill fills the list with the draws of wy: every mesh, or with only
// set, the visible ones, each of one instance with its tile as object,
// in the tiles' order (for a flip way every other fill in the opposite).
func (w *world) fill(wy way) error {
	w.list.Reset()
	w.filled = ""
	w.flips++
	rev := wy.flip && w.flips%2 == 0
	for i := range w.ids {
		k := i
		if rev {
			k = len(w.ids) - 1 - i
		}
		id := w.ids[k]
		if id == (draw.ID{}) {
			continue
		}
		if wy.only {
			if vis, _ := w.visible(k); !vis {
				continue
			}
		}
		if err := w.list.Add(id, 1, uint32(k)); err != nil {
			return err
		}
	}
	w.filled = fillOf(wy)
	return nil
}

// add stages a new mesh for tile k.
func (w *world) add(k int) error {
	w.filled = ""
	w.data[k] = meshFor(w.gen)
	w.gen++
	h, err := w.meshes.Add(w.data[k])
	w.hs[k] = h
	return err
}

// remove gives tile k's mesh back.
func (w *world) remove(k int) error {
	w.filled = ""
	err := errors.Join(w.tab.Remove(w.ids[k]), w.meshes.Remove(w.hs[k]))
	w.ids[k], w.hs[k], w.data[k] = draw.ID{}, mesh.Handle{}, mesh.Mesh{}
	return err
}

// flush places the staged meshes, tracks the new ones and applies the
// changes to the table.
func (w *world) flush() error {
	if err := w.meshes.Flush(); err != nil {
		return err
	}
	for k, h := range w.hs {
		if h != (mesh.Handle{}) && w.ids[k] == (draw.ID{}) {
			id, err := w.tab.Track(h, mesh.Uint16)
			if err != nil {
				return err
			}
			w.ids[k] = id
		}
	}
	return w.apply()
}

func (w *world) apply() error {
	w.cs = w.meshes.Changes(w.cs[:0])
	return w.tab.Apply(w.cs)
}

// churn removes every third mesh and some more, adds new ones in their
// tiles, and sweeps, compacts and shrinks the slabs, applying the
// changes after each step.
func (w *world) churn(seed int) error {
	for k := seed % 3; k < w.n; k += 3 {
		if err := w.remove(k); err != nil {
			return err
		}
	}
	if err := w.meshes.Sweep(arena.SweepLimits{Moves: 64}); err != nil {
		return err
	}
	if err := w.apply(); err != nil {
		return err
	}
	for k := seed % 3; k < w.n; k += 6 {
		if err := w.add(k); err != nil {
			return err
		}
	}
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.meshes.Compact(); err != nil {
		return err
	}
	if err := w.apply(); err != nil {
		return err
	}
	for k := seed%3 + 3; k < w.n; k += 6 {
		if err := w.add(k); err != nil {
			return err
		}
	}
	if err := w.flush(); err != nil {
		return err
	}
	if _, err := w.meshes.Shrink(); err != nil {
		return err
	}
	return w.apply()
}

// Ways of drawing: a is a buffer pair of its own per mesh, set with the
// pipeline and bind group per draw, as a renderer without gpumem does;
// b, c and indirect are the Drawer's modes Direct, MultiDraw and
// Indirect over the slabs, c-count c's list in MultiDrawCount mode, c-kept
// c-count with the list kept across frames; d culls c's list on the GPU
// against the world's frustum and draws with MultiDrawIndexedIndirectCount
// (d-kept with the list kept across frames), d-zero and d-indirect are its
// fallbacks (culled draws of no instances, drawn by MultiDraw and
// Indirect); d-ref is c drawing the draws the frustum keeps, culled on the
// CPU. Each way's image must equal its ref's.
var ways = []way{
	{name: "a", own: true},
	{name: "b", mode: multidraw.Direct, ref: "a"},
	{name: "c", mode: multidraw.MultiDraw, ref: "a"},
	{name: "c-count", mode: multidraw.MultiDrawCount, ref: "a"},
	{name: "c-kept", mode: multidraw.MultiDrawCount, kept: true, ref: "a"},
	{name: "c-flip", mode: multidraw.MultiDrawCount, flip: true, ref: "a"},
	{name: "indirect", mode: multidraw.Indirect, ref: "a"},
	{name: "d-ref", mode: multidraw.MultiDraw, only: true},
	{name: "d", mode: multidraw.MultiDrawCount, cull: true, ref: "d-ref"},
	{name: "d-kept", mode: multidraw.MultiDrawCount, cull: true, kept: true, ref: "d-ref"},
	{name: "d-zero", mode: multidraw.MultiDraw, cull: true, ref: "d-ref"},
	{name: "d-indirect", mode: multidraw.Indirect, cull: true, ref: "d-ref"},
}

type way struct {
	name, ref string
	mode      multidraw.Mode
	own       bool // way a
	cull      bool // PrepareCulled against the world's frustum
	only      bool // the list holds only the draws the frustum keeps
	kept      bool // the list is filled only when it changed (add, remove, another way's)
	flip      bool // every other frame the list is filled in the opposite order
}

// allowed reports whether the device draws in the way's mode.
func (wy way) allowed(wd *wgpu.Device) bool { return wy.own || wy.mode <= multidraw.Best(wd) }

// half returns the frustum that keeps the tiles left of the middle
// column, about half the world, and the middle column, whose centres lie
// outside the plane by half a tile: the spheres straddle it. It keeps
// all of clip space else.
func (w *world) half() multidraw.Frustum {
	s := float32(1) / float32(w.side)
	mid := -1 + s*(2*float32(w.side/2)+1)
	return multidraw.Frustum{
		{X: -1, D: mid - s/2}, // x <= mid - s/2
		{X: 1, D: 1},
		{Y: 1, D: 1},
		{Y: -1, D: 1},
		{Z: 1, D: 1},
		{Z: -1, D: 1},
	}
}

// visible reports whether object k's sphere is inside or straddles every
// plane of the world's frustum, and the least margin of its tests (how
// far the sphere is from being culled by a plane, or, negative, from
// being kept): a test wants no margin near zero, where float32 on the
// GPU and float64 here could disagree.
func (w *world) visible(k int) (bool, float64) {
	c := w.spheres[k]
	margin := math.Inf(1)
	for _, p := range w.frustum {
		l := math.Sqrt(float64(p.X)*float64(p.X) + float64(p.Y)*float64(p.Y) + float64(p.Z)*float64(p.Z))
		dist := (float64(p.X)*float64(c.X) + float64(p.Y)*float64(c.Y) + float64(p.Z)*float64(c.Z) + float64(p.D)) / l
		margin = min(margin, dist+float64(c.Radius))
	}
	return margin >= 0, margin
}

// culled returns the fraction of the world's meshes the frustum culls,
// and the least absolute margin of the visibility tests.
func (w *world) culled() (frac, margin float64) {
	n, out := 0, 0
	margin = math.Inf(1)
	for k, id := range w.ids {
		if id == (draw.ID{}) {
			continue
		}
		n++
		vis, m := w.visible(k)
		if !vis {
			out++
		}
		margin = min(margin, math.Abs(m))
	}
	return float64(out) / float64(max(n, 1)), margin
}

// ownBuffers makes way a's buffers from the meshes' data.
func (w *world) ownBuffers() error {
	w.releaseOwn()
	for _, m := range w.data {
		if m.Vertices == nil {
			w.own = append(w.own, ownMesh{})
			continue
		}
		v, err := w.g.wd.TryCreateBufferInit(&wgpu.BufferInitDescriptor{Contents: m.Vertices, Usage: wgpu.BufferUsageVertex})
		if err != nil {
			return err
		}
		idx := append([]byte(nil), m.Indices...)
		for len(idx)%4 != 0 {
			idx = append(idx, 0)
		}
		i, err := w.g.wd.TryCreateBufferInit(&wgpu.BufferInitDescriptor{Contents: idx, Usage: wgpu.BufferUsageIndex})
		if err != nil {
			return err
		}
		w.own = append(w.own, ownMesh{v: v, i: i, n: uint32(len(m.Indices) / 2)})
	}
	return nil
}

// releaseOwn releases way a's buffers and lets wgpu-native free them.
func (w *world) releaseOwn() {
	if len(w.own) == 0 {
		return
	}
	for _, o := range w.own {
		if o.v != nil {
			o.v.Release()
			o.i.Release()
		}
	}
	w.own = w.own[:0]
	w.g.wd.Poll(true, nil)
}

// frame draws the world one way, submits it, and adds its CPU time
// (filling the list, encoding and submitting) and, where the device has
// a timer, its GPU time.
func (w *world) frame(wy way) error {
	own, mode := wy.own, wy.mode
	start := time.Now()
	enc, err := w.g.wd.TryCreateCommandEncoder(nil)
	if err != nil {
		return err
	}
	defer enc.Release()
	var d *multidraw.Drawer
	if !own {
		if d = w.drawer[mode]; d == nil {
			if d, err = multidraw.New(w.g.dev, w.tab, mode); err != nil {
				return err
			}
			w.drawer[mode] = d
		}
		t0 := time.Now()
		if !wy.kept || w.filled != fillOf(wy) {
			if err := w.fill(wy); err != nil {
				return err
			}
		}
		t1 := time.Now()
		w.phases[0] += t1.Sub(t0)
		if wy.cull {
			_, err = d.PrepareCulled(enc, w.list, w.bounds, w.frustum)
		} else {
			_, err = d.Prepare(enc, w.list)
		}
		if err != nil {
			return err
		}
		w.phases[1] += time.Since(t1)
	}
	t2 := time.Now()
	pass := enc.BeginRenderPass(&wgpu.RenderPassDescriptor{ColorAttachments: []wgpu.RenderPassColorAttachment{{
		View: w.view, LoadOp: wgpu.LoadOpClear, StoreOp: wgpu.StoreOpStore, ClearValue: wgpu.Color{A: 1},
	}}})
	if own {
		for k, o := range w.own {
			if o.v == nil {
				continue
			}
			pass.SetPipeline(w.pipeline)
			pass.SetBindGroup(0, w.group, nil)
			pass.SetVertexBuffer(0, o.v, 0, wgpu.WholeSize)
			pass.SetIndexBuffer(o.i, wgpu.IndexFormatUint16, 0, wgpu.WholeSize)
			pass.DrawIndexed(o.n, 1, 0, 0, uint32(k))
		}
	} else {
		pass.SetPipeline(w.pipeline)
		pass.SetBindGroup(0, w.group, nil)
		if _, err := d.Draw(pass); err != nil {
			pass.TryEnd()
			return err
		}
	}
	if err := pass.TryEnd(); err != nil {
		return err
	}
	t3 := time.Now()
	w.phases[2] += t3.Sub(t2)
	cb, err := enc.TryFinish(nil)
	if err != nil {
		return err
	}
	t4 := time.Now()
	w.phases[3] += t4.Sub(t3)
	var span device.Span
	if w.timed {
		if span.Begin, err = w.timer.Stamp(); err != nil {
			return err
		}
	}
	if err := w.g.dev.Submit(); err != nil {
		return err
	}
	w.queue.Submit(cb)
	cb.Release()
	end := time.Now()
	w.phases[4] += end.Sub(t4)
	w.cpu += end.Sub(start)
	w.frames++
	if w.timed {
		if span.End, err = w.timer.Stamp(); err != nil {
			return err
		}
	}
	// Each frame waits for the GPU, outside the time counted, so frames
	// do not queue up.
	if _, err := w.g.dev.Fence(); err != nil {
		return err
	}
	if err := w.g.dev.Wait(); err != nil {
		return err
	}
	if w.timed {
		el, ok, err := device.Elapsed(w.timer, span)
		if err != nil {
			return err
		}
		if ok {
			w.gpuTime += el
			w.gpuFrm++
		}
	}
	return nil
}

// pixels reads the target back.
func (w *world) pixels() ([]byte, error) {
	row := (w.width*4 + 255) &^ 255
	size := uint64(row) * uint64(w.height)
	buf, err := w.g.wd.TryCreateBuffer(&wgpu.BufferDescriptor{Size: size, Usage: wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst})
	if err != nil {
		return nil, err
	}
	defer buf.Release()
	enc, err := w.g.wd.TryCreateCommandEncoder(nil)
	if err != nil {
		return nil, err
	}
	defer enc.Release()
	if err := enc.TryCopyTextureToBuffer(w.target.AsImageCopy(), &wgpu.TexelCopyBufferInfo{
		Buffer: buf, Layout: wgpu.TexelCopyBufferLayout{BytesPerRow: row, RowsPerImage: w.height},
	}, &wgpu.Extent3D{Width: w.width, Height: w.height, DepthOrArrayLayers: 1}); err != nil {
		return nil, err
	}
	cb, err := enc.TryFinish(nil)
	if err != nil {
		return nil, err
	}
	w.queue.Submit(cb)
	cb.Release()
	status := wgpu.MapAsyncStatus(0)
	if err := buf.TryMapAsync(wgpu.MapModeRead, 0, size, func(s wgpu.MapAsyncStatus) { status = s }); err != nil {
		return nil, err
	}
	w.g.wd.Poll(true, nil)
	if status != wgpu.MapAsyncStatusSuccess {
		return nil, fmt.Errorf("map the read-back buffer: status %v", status)
	}
	data := buf.GetMappedRange(0, uint(size))
	px := make([]byte, 0, w.width*w.height*4)
	for y := range w.height {
		px = append(px, data[y*row:y*row+w.width*4]...)
	}
	return px, buf.TryUnmap()
}

// images draws the world every way the device allows and returns the
// images by way. Way a draws in own, a world of the same meshes, or in w
// where own is nil.
func (w *world) images(own *world) (map[string][]byte, error) {
	if own == nil {
		own = w
	}
	if err := own.ownBuffers(); err != nil {
		return nil, err
	}
	defer own.releaseOwn()
	out := map[string][]byte{}
	for _, way := range ways {
		if !way.allowed(w.g.wd) {
			continue
		}
		in := w
		if way.own {
			in = own
		}
		if err := in.frame(way); err != nil {
			return nil, fmt.Errorf("way %s: %w", way.name, err)
		}
		px, err := in.pixels()
		if err != nil {
			return nil, err
		}
		out[way.name] = px
	}
	return out, nil
}

// compare returns an error for each way whose image differs from its
// ref's.
func compare(imgs map[string][]byte) error {
	var errs []error
	for _, way := range ways {
		px, ok := imgs[way.name]
		if !ok || way.ref == "" {
			continue
		}
		if want := imgs[way.ref]; !bytes.Equal(px, want) {
			errs = append(errs, fmt.Errorf("way %s differs from way %s in %d pixels", way.name, way.ref, countDiff(px, want)))
		}
	}
	return errors.Join(errs...)
}

func (w *world) release() {
	for _, d := range w.drawer {
		d.Release()
	}
	w.releaseOwn()
	if w.bounds != nil {
		w.bounds.Release()
	}
	for _, r := range []interface{ Release() }{w.view, w.target, w.group, w.objects, w.pipeline, w.queue} {
		if r != nil && !isNil(r) {
			r.Release()
		}
	}
	w.tab.Release()
	w.meshes.Release()
}

// isNil reports whether r holds a nil pointer.
func isNil(r interface{ Release() }) bool {
	switch v := r.(type) {
	case *wgpu.TextureView:
		return v == nil
	case *wgpu.Texture:
		return v == nil
	case *wgpu.BindGroup:
		return v == nil
	case *wgpu.Buffer:
		return v == nil
	case *wgpu.RenderPipeline:
		return v == nil
	case *wgpu.Queue:
		return v == nil
	}
	return false
}
