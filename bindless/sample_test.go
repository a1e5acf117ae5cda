package bindless_test

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// slots is the number of page bindings the sampling shader declares, as
// a renderer's material bind group would (the registry's MaxPages).
const slots = 8

// sampleWGSL reads one texel per query through the page bindings: page
// h >> 16 selects the binding, layer h & 0xffff the array layer. The texel
// comes back packed as RGBA8.
func sampleWGSL() string {
	var b strings.Builder
	b.WriteString(`
struct Query { h: u32, x: u32, y: u32, pad: u32 };
@group(0) @binding(0) var<storage, read> queries: array<Query>;
@group(0) @binding(1) var<storage, read_write> texels: array<u32>;
`)
	for i := range slots {
		fmt.Fprintf(&b, "@group(0) @binding(%d) var page%d: texture_2d_array<f32>;\n", i+2, i)
	}
	b.WriteString(`
fn fetch(h: u32, xy: vec2<i32>) -> vec4<f32> {
	let layer = i32(h & 0xffffu);
	switch (h >> 16u) {
`)
	for i := range slots {
		fmt.Fprintf(&b, "\t\tcase %du: { return textureLoad(page%d, xy, layer, 0); }\n", i, i)
	}
	b.WriteString(`		default: { return vec4<f32>(0.0); }
	}
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
	let i = gid.x;
	if (i >= arrayLength(&queries)) {
		return;
	}
	let q = queries[i];
	texels[i] = pack4x8unorm(fetch(q.h, vec2<i32>(i32(q.x), i32(q.y))));
}
`)
	return b.String()
}

// sampler runs sampleWGSL on a webgpu device against a registry's pages.
type sampler struct {
	t        *testing.T
	dev      *webgpu.Device
	r        *bindless.Registry[string]
	layout   *wgpu.BindGroupLayout
	pipeline *wgpu.ComputePipeline
	// views are the pages' views, rebuilt when the registry's version
	// differs from version; builds counts the rebuilds.
	views   []*wgpu.TextureView
	version uint64
	builds  int
}

func newSampler(t *testing.T, dev *webgpu.Device, r *bindless.Registry[string]) *sampler {
	raw, _ := dev.Raw()
	entries := []wgpu.BindGroupLayoutEntry{
		{Binding: 0, Visibility: wgpu.ShaderStageCompute, Buffer: wgpu.BufferBindingLayout{Type: wgpu.BufferBindingTypeReadOnlyStorage}},
		{Binding: 1, Visibility: wgpu.ShaderStageCompute, Buffer: wgpu.BufferBindingLayout{Type: wgpu.BufferBindingTypeStorage}},
	}
	for i := range slots {
		entries = append(entries, wgpu.BindGroupLayoutEntry{
			Binding:    uint32(i + 2),
			Visibility: wgpu.ShaderStageCompute,
			Texture: wgpu.TextureBindingLayout{
				SampleType:    wgpu.TextureSampleTypeUnfilterableFloat,
				ViewDimension: wgpu.TextureViewDimension2DArray,
			},
		})
	}
	layout, err := raw.TryCreateBindGroupLayout(&wgpu.BindGroupLayoutDescriptor{Label: "bindless test", Entries: entries})
	must(t, err)
	t.Cleanup(layout.Release)
	pl, err := raw.TryCreatePipelineLayout(&wgpu.PipelineLayoutDescriptor{BindGroupLayouts: []*wgpu.BindGroupLayout{layout}})
	must(t, err)
	t.Cleanup(pl.Release)
	mod, err := raw.TryCreateShaderModule(&wgpu.ShaderModuleDescriptor{Label: "bindless sample", WGSLSource: &wgpu.ShaderSourceWGSL{Code: sampleWGSL()}})
	must(t, err)
	t.Cleanup(mod.Release)
	pipe, err := raw.TryCreateComputePipeline(&wgpu.ComputePipelineDescriptor{
		Layout:  pl,
		Compute: wgpu.ProgrammableStageDescriptor{Module: mod, EntryPoint: "main"},
	})
	must(t, err)
	t.Cleanup(pipe.Release)
	s := &sampler{t: t, dev: dev, r: r, layout: layout, pipeline: pipe}
	t.Cleanup(s.releaseViews)
	return s
}

func (s *sampler) releaseViews() {
	for _, v := range s.views {
		v.Release()
	}
	s.views = nil
}

// pageViews makes one 2D-array view per page, in global index order, and
// page 0's view in the slots past the last page.
func (s *sampler) pageViews() []*wgpu.TextureView {
	s.releaseViews()
	for _, tex := range s.r.Pages() {
		raw, err := s.dev.RawTexture(tex)
		must(s.t, err)
		d := tex.Desc()
		v, err := raw.TryCreateView(&wgpu.TextureViewDescriptor{
			Dimension:       wgpu.TextureViewDimension2DArray,
			MipLevelCount:   d.Mips,
			ArrayLayerCount: d.Layers,
			Aspect:          wgpu.TextureAspectAll,
		})
		must(s.t, err)
		s.views = append(s.views, v)
	}
	return s.views
}

// sample returns the texel (x, y) of each queried handle, as packed RGBA8
// read by the shader.
func (s *sampler) sample(queries [][3]uint32) []uint32 {
	t := s.t
	raw, queue := s.dev.Raw()
	if s.views == nil || s.version != s.r.Version() {
		// A new page: the views, and so the bind groups, are rebuilt.
		if views := s.pageViews(); len(views) > slots {
			t.Fatalf("%d pages, the shader binds %d", len(views), slots)
		}
		s.version = s.r.Version()
		s.builds++
	}
	q := make([]byte, 16*len(queries))
	for i, v := range queries {
		binary.LittleEndian.PutUint32(q[16*i:], v[0])
		binary.LittleEndian.PutUint32(q[16*i+4:], v[1])
		binary.LittleEndian.PutUint32(q[16*i+8:], v[2])
	}
	qb, err := s.dev.CreateBuffer(device.BufferDesc{Label: "queries", Size: uint64(len(q)), Usage: device.Storage | device.CopyDst})
	must(t, err)
	defer qb.Release()
	must(t, s.dev.WriteBuffer(qb, 0, q))
	ob, err := s.dev.CreateBuffer(device.BufferDesc{Label: "texels", Size: uint64(4 * len(queries)), Usage: device.Storage | device.CopySrc})
	must(t, err)
	defer ob.Release()
	rq, err := s.dev.RawBuffer(qb)
	must(t, err)
	ro, err := s.dev.RawBuffer(ob)
	must(t, err)

	entries := []wgpu.BindGroupEntry{
		{Binding: 0, Buffer: rq, Size: uint64(len(q))},
		{Binding: 1, Buffer: ro, Size: uint64(4 * len(queries))},
	}
	for i := range slots {
		v := s.views[0]
		if i < len(s.views) {
			v = s.views[i]
		}
		entries = append(entries, wgpu.BindGroupEntry{Binding: uint32(i + 2), TextureView: v})
	}
	group, err := raw.TryCreateBindGroup(&wgpu.BindGroupDescriptor{Layout: s.layout, Entries: entries})
	must(t, err)
	defer group.Release()

	must(t, s.dev.Submit()) // the registry's writes and copies go first
	enc, err := raw.TryCreateCommandEncoder(nil)
	must(t, err)
	defer enc.Release()
	pass := enc.BeginComputePass(nil)
	pass.SetPipeline(s.pipeline)
	pass.SetBindGroup(0, group, nil)
	pass.DispatchWorkgroups(uint32(len(queries)+63)/64, 1, 1)
	must(t, pass.TryEnd())
	pass.Release()
	cb, err := enc.TryFinish(nil)
	must(t, err)
	queue.Submit(cb)
	cb.Release()
	raw.Poll(true, nil)

	out := make([]byte, 4*len(queries))
	must(t, s.dev.ReadBuffer(ob, 0, out))
	res := make([]uint32, len(queries))
	for i := range res {
		res[i] = binary.LittleEndian.Uint32(out[4*i:])
	}
	return res
}

// check samples three texels of every texture the model holds (and the
// defaults) through the shader and compares them with the pixels
// registered.
func (s *sampler) check(m *model) {
	s.t.Helper()
	type want struct {
		what  string
		texel uint32
	}
	var queries [][3]uint32
	var wants []want
	add := func(what string, h bindless.Handle, key bindless.Key, px []byte) {
		for _, xy := range [][2]uint32{{0, 0}, {key.Width - 1, 0}, {key.Width / 2, key.Height - 1}} {
			i := 4 * (xy[1]*key.Width + xy[0])
			queries = append(queries, [3]uint32{uint32(h), xy[0], xy[1]})
			wants = append(wants, want{fmt.Sprintf("%s (%v) at %v", what, h, xy), binary.LittleEndian.Uint32(px[i:])})
		}
	}
	one := bindless.Key{Format: device.RGBA8Unorm, Width: 1, Height: 1}
	add("white", s.r.White(), one, []byte{255, 255, 255, 255})
	add("black", s.r.Black(), one, []byte{0, 0, 0, 255})
	add("normal", s.r.FlatNormal(), one, []byte{128, 128, 255, 255})
	for id, e := range m.want {
		add(id, e.h, e.key, e.pixels)
	}
	got := s.sample(queries)
	for i, w := range wants {
		if got[i] != w.texel {
			s.t.Fatalf("%s: shader read %08x, registered %08x", w.what, got[i], w.texel)
		}
	}
}

// TestSampleThroughPages is the proof on a GPU: a compute shader given
// handles reads each texture through the page bindings, in global index
// order, and gets the texels registered; after unregistering and
// registering again into the freed layers; and after pages are added,
// with the bind group rebuilt because Version changed.
func TestSampleThroughPages(t *testing.T) {
	dev := testdevice.WebGPU(t, webgpu.Options{})
	r := newRegistry(t, dev, bindless.Options{LayersPerPage: 4, MaxPages: slots})
	m := newModel(dev, r)
	s := newSampler(t, dev, r)
	s.check(m) // the defaults alone

	seed := 0
	reg := func(id string, key bindless.Key) bindless.Handle {
		t.Helper()
		seed++
		h, err := m.register(id, key, seed)
		must(t, err)
		return h
	}
	for i := range 6 {
		reg(fmt.Sprint("a", i), rgba4)
		reg(fmt.Sprint("b", i), rgba8)
	}
	reg("one", bindless.Key{Format: device.RGBA8Unorm, Width: 1, Height: 1}) // the defaults' page
	must(t, m.verify())
	s.check(m)

	// Free layers in two pages and fill them again: same handles.
	freed := map[bindless.Handle]bool{}
	for _, id := range []string{"a1", "a4", "b2"} {
		freed[m.want[id].h] = true
		must(t, m.unregister(id))
	}
	s.check(m)
	version := r.Version()
	for _, id := range []string{"c0", "c1"} {
		if h := reg(id, rgba4); !freed[h] {
			t.Fatalf("%s got %v, not a freed layer", id, h)
		}
	}
	if h := reg("d0", rgba8); !freed[h] {
		t.Fatalf("d0 got %v, not a freed layer", h)
	}
	if r.Version() != version {
		t.Fatal("Version changed without a new page")
	}
	must(t, m.update("c0", 1000))
	s.check(m)

	// Fill the 4x4 bucket's last page and add one.
	builds, pages := s.builds, r.NumPages()
	for i := 0; r.NumPages() == pages; i++ {
		reg(fmt.Sprint("e", i), rgba4)
	}
	if r.Version() == version {
		t.Fatal("Version did not change with a new page")
	}
	s.check(m)
	if s.builds != builds+1 {
		t.Fatalf("bind group built %d times for one new page", s.builds-builds)
	}
	t.Logf("%d textures on %d pages, version %d", r.Len(), r.NumPages(), r.Version())
}
