//go:build !js

package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/oliverbestmann/webgpu/wgpu"
)

// The shader and pipeline both renderers share (the stream slabs' here,
// the test's buffers of their own): only the fragment stage's texel
// function differs, so their images differ only where data comes from.

// drawWGSL is the shared part: one Draw uniform per mesh, bound at its
// dynamic offset, the four attributes from vertex buffer slots 0 to 3,
// and Lambert lighting of the texel times the vertex colour.
const drawWGSL = `
struct Draw {
	mvp: mat4x4f,     // local to clip
	rot: mat4x4f,     // local to world, for normals
	uvScale: vec2f,   // the texture's bindless Region scale; 1 for a texture of its own
	texture: u32,     // bindless handle: page << 16 | layer
	pad: u32,
}

@group(0) @binding(0) var<uniform> draw: Draw;
@group(1) @binding(0) var samp: sampler;

struct VOut {
	@builtin(position) pos: vec4f,
	@location(0) normal: vec3f,
	@location(1) uv: vec2f,
	@location(2) color: vec4f,
}

// at is the texel a coordinate picks in an image of size texels: nearest,
// clamped to the edge.
fn at(uv: vec2f, size: vec2f) -> vec2i {
	return vec2i(clamp(floor(uv * size), vec2f(0.0), size - 1.0));
}

@vertex fn vs(@location(0) pos: vec3f, @location(1) normal: vec3f, @location(2) uv: vec2f, @location(3) color: vec4f) -> VOut {
	return VOut(draw.mvp * vec4f(pos, 1.0), (draw.rot * vec4f(normal, 0.0)).xyz, uv, color);
}

@fragment fn fs(in: VOut) -> @location(0) vec4f {
	let light = normalize(vec3f(0.3, 0.6, -0.75));
	let lit = 0.3 + 0.7 * max(dot(normalize(in.normal), light), 0.0);
	return vec4f(texel(in.uv).rgb * in.color.rgb * lit, 1.0);
}
`

// drawBytes is the size of the Draw struct.
const drawBytes = 144

// maxPages is the number of bindless page bindings the shader declares:
// WebGPU's default limit of sampled textures per shader stage.
const maxPages = 16

// pagesWGSL loads the mesh's texel from the bindless pages: page h >> 16
// picks the binding, layer h & 0xffff the array layer, and the image's
// size is its size-class layer's times the scale (see the package doc).
// WGSL cannot index an array of bindings, so a switch picks the page.
func pagesWGSL() string {
	var b strings.Builder
	for i := range maxPages {
		fmt.Fprintf(&b, "@group(1) @binding(%d) var page%d: texture_2d_array<f32>;\n", i+1, i)
	}
	b.WriteString(`
fn texel(uv: vec2f) -> vec4f {
	let layer = draw.texture & 0xffffu;
	switch draw.texture >> 16u {
`)
	for i := range maxPages {
		c := fmt.Sprintf("case %du", i)
		if i == maxPages-1 {
			c = "default"
		}
		fmt.Fprintf(&b, "\t\t%s: { return textureLoad(page%d, at(uv, vec2f(textureDimensions(page%d)) * draw.uvScale), layer, 0); }\n", c, i, i)
	}
	b.WriteString("\t}\n}\n")
	return b.String()
}

// pipeline is a render pipeline of the shared shader and its layouts.
type pipeline struct {
	pipeline *wgpu.RenderPipeline
	draws    *wgpu.BindGroupLayout // group 0: the Draw uniform, dynamic offset
	textures *wgpu.BindGroupLayout // group 1: the sampler and texel's textures
	sampler  *wgpu.Sampler
}

// newPipeline builds the pipeline whose fragment stage samples through
// texelWGSL (declaring group 1's textures from binding 1 and fn texel),
// group 1 laid out as textures says after the sampler at binding 0.
func newPipeline(wd *wgpu.Device, texelWGSL string, textures []wgpu.BindGroupLayoutEntry) (_ *pipeline, err error) {
	p := &pipeline{}
	defer func() {
		if err != nil {
			p.release()
		}
	}()
	if p.draws, err = wd.TryCreateBindGroupLayout(&wgpu.BindGroupLayoutDescriptor{Label: "draws", Entries: []wgpu.BindGroupLayoutEntry{{
		Binding: 0, Visibility: wgpu.ShaderStageVertex | wgpu.ShaderStageFragment,
		Buffer: wgpu.BufferBindingLayout{Type: wgpu.BufferBindingTypeUniform, HasDynamicOffset: true, MinBindingSize: drawBytes},
	}}}); err != nil {
		return nil, err
	}
	entries := append([]wgpu.BindGroupLayoutEntry{{Binding: 0, Visibility: wgpu.ShaderStageFragment,
		Sampler: wgpu.SamplerBindingLayout{Type: wgpu.SamplerBindingTypeFiltering}}}, textures...)
	if p.textures, err = wd.TryCreateBindGroupLayout(&wgpu.BindGroupLayoutDescriptor{Label: "textures", Entries: entries}); err != nil {
		return nil, err
	}
	layout, err := wd.TryCreatePipelineLayout(&wgpu.PipelineLayoutDescriptor{Label: "streams", BindGroupLayouts: []*wgpu.BindGroupLayout{p.draws, p.textures}})
	if err != nil {
		return nil, err
	}
	defer layout.Release()
	mod, err := wd.TryCreateShaderModule(&wgpu.ShaderModuleDescriptor{Label: "streams", WGSLSource: &wgpu.ShaderSourceWGSL{Code: drawWGSL + texelWGSL}})
	if err != nil {
		return nil, err
	}
	defer mod.Release()
	// One vertex buffer per attribute, as the mesh allocator's streams
	// lay them out: slot i is stream i.
	formats := [4]wgpu.VertexFormat{wgpu.VertexFormatFloat32x3, wgpu.VertexFormatFloat32x3, wgpu.VertexFormatFloat32x2, wgpu.VertexFormatFloat32x4}
	var buffers []wgpu.VertexBufferLayout
	for i, f := range formats {
		buffers = append(buffers, wgpu.VertexBufferLayout{ArrayStride: uint64(strides[i]), StepMode: wgpu.VertexStepModeVertex,
			Attributes: []wgpu.VertexAttribute{{Format: f, ShaderLocation: uint32(i)}}})
	}
	if p.pipeline, err = wd.TryCreateRenderPipeline(&wgpu.RenderPipelineDescriptor{
		Label:     "streams",
		Layout:    layout,
		Vertex:    wgpu.VertexState{Module: mod, EntryPoint: "vs", Buffers: buffers},
		Primitive: wgpu.PrimitiveState{Topology: wgpu.PrimitiveTopologyTriangleList, FrontFace: wgpu.FrontFaceCCW, CullMode: wgpu.CullModeNone},
		DepthStencil: &wgpu.DepthStencilState{Format: depthFormat, DepthWriteEnabled: wgpu.OptionalBoolTrue, DepthCompare: wgpu.CompareFunctionLess,
			StencilFront: wgpu.StencilFaceState{Compare: wgpu.CompareFunctionAlways}, StencilBack: wgpu.StencilFaceState{Compare: wgpu.CompareFunctionAlways}},
		Multisample: wgpu.MultisampleState{Count: 1, Mask: 0xFFFFFFFF},
		Fragment: &wgpu.FragmentState{Module: mod, EntryPoint: "fs", Targets: []wgpu.ColorTargetState{{
			Format: colorFormat, Blend: &wgpu.BlendStateReplace, WriteMask: wgpu.ColorWriteMaskAll,
		}}},
	}); err != nil {
		return nil, err
	}
	// The shaders load texels by integer coordinates (see the package
	// doc); the sampler is bound for a renderer that filters instead.
	p.sampler, err = wd.TryCreateSampler(&wgpu.SamplerDescriptor{
		Label:        "nearest",
		AddressModeU: wgpu.AddressModeClampToEdge, AddressModeV: wgpu.AddressModeClampToEdge, AddressModeW: wgpu.AddressModeClampToEdge,
		MagFilter: wgpu.FilterModeNearest, MinFilter: wgpu.FilterModeNearest, MipmapFilter: wgpu.MipmapFilterModeNearest,
		LodMaxClamp: 32, MaxAnisotropy: 1,
	})
	return p, err
}

func (p *pipeline) release() {
	if p.pipeline != nil {
		p.pipeline.Release()
	}
	if p.draws != nil {
		p.draws.Release()
	}
	if p.textures != nil {
		p.textures.Release()
	}
	if p.sampler != nil {
		p.sampler.Release()
	}
}

// The scene's layout: a grid of cells, a mesh in each live slot, turning.
const (
	gridCols, gridRows = 10, 10
	slots              = gridCols * gridRows
)

// appendDraw appends the Draw of the mesh in slot at frame to b, for a
// target of width x height: turned about its cell's centre, scaled to
// stay inside its cell (the shapes lie in the unit sphere), so no two
// meshes overlap and the order of draws cannot change a pixel.
func appendDraw(b []byte, slot, frame int, width, height uint32, texture uint32, scaleU, scaleV float32) []byte {
	side := float32(min(width, height))
	kx := 2 * side / float32(width) / gridCols
	ky := 2 * side / float32(height) / gridRows
	cx := float32(slot%gridCols) + 0.5 - gridCols/2.0
	cy := gridRows/2.0 - float32(slot/gridCols) - 0.5
	a := float64(slot)*0.7 + float64(frame)*0.02*float64(1+slot%3)
	t := 0.45 + 0.1*float64(slot%4)
	// R = Ry(a) * Rx(t)
	ca, sa, ct, st := float32(math.Cos(a)), float32(math.Sin(a)), float32(math.Cos(t)), float32(math.Sin(t))
	r := [3][3]float32{{ca, sa * st, sa * ct}, {0, ct, -st}, {-sa, ca * st, ca * ct}}
	const s = 0.47
	mvp := [4][4]float32{ // rows
		{kx * s * r[0][0], kx * s * r[0][1], kx * s * r[0][2], kx * cx},
		{ky * s * r[1][0], ky * s * r[1][1], ky * s * r[1][2], ky * cy},
		{s * r[2][0], s * r[2][1], s * r[2][2], 0.5},
		{0, 0, 0, 1},
	}
	rot := [4][4]float32{{r[0][0], r[0][1], r[0][2], 0}, {r[1][0], r[1][1], r[1][2], 0}, {r[2][0], r[2][1], r[2][2], 0}, {0, 0, 0, 1}}
	for _, m := range [][4][4]float32{mvp, rot} {
		for c := range 4 { // WGSL matrices are column-major
			b = appendFloats(b, m[0][c], m[1][c], m[2][c], m[3][c])
		}
	}
	b = appendFloats(b, scaleU, scaleV)
	b = binary.LittleEndian.AppendUint32(b, texture)
	return binary.LittleEndian.AppendUint32(b, 0)
}

// The render targets' formats.
const (
	colorFormat = wgpu.TextureFormatRGBA8Unorm
	depthFormat = wgpu.TextureFormatDepth32Float
)

// clearColor is the background.
var clearColor = wgpu.Color{R: 0.05, G: 0.06, B: 0.09, A: 1}
