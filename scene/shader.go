package scene

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/oliverbestmann/webgpu/wgpu"
)

// The shader, its pipeline and the bytes of the structs it reads. Every
// renderer of the scene (Renderer, and the reference rendering of
// examples/offscreen's test) draws through NewPipeline, so their images
// differ only where their data comes from.

// vertexWGSL is the vertex stage every renderer of the scene shares: the
// frame's constants in a uniform, one Draw a mesh in a storage array
// indexed by the instance index (the draw's first instance), and the
// mesh's vertices in local tile units, turned and pulsed about the tile's
// centre.
const vertexWGSL = `
struct Frame {
	scale: vec2f, // clip units per tile unit, x and y (keeps tiles square)
	time: f32,
	pad: f32,
}

struct Draw {
	center: vec2f, // the tile's centre, in tile units from the grid's centre
	spin: f32,     // radians a second
	phase: f32,
	texture: u32,  // bindless handle: page << 16 | layer
	pad0: u32,
	pad1: u32,
	pad2: u32,
}

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read> draws: array<Draw>;

struct VOut {
	@builtin(position) pos: vec4f,
	@location(0) uv: vec2f,
	@location(1) tint: vec4f,
	@location(2) @interpolate(flat) texture: u32,
}

@vertex fn vs(@location(0) pos: vec2f, @location(1) uv: vec2f, @location(2) tint: vec4f,
		@builtin(instance_index) draw: u32) -> VOut {
	let d = draws[draw];
	let a = frame.time * d.spin + d.phase;
	let s = 0.9 * (0.8 + 0.2 * sin(2.0 * a)); // at most 0.9: inside the tile
	let r = vec2f(pos.x * cos(a) - pos.y * sin(a), pos.x * sin(a) + pos.y * cos(a));
	let p = (d.center + s * r) * frame.scale;
	return VOut(vec4f(p, 0.0, 1.0), uv, tint, d.texture);
}
`

// bindlessWGSL is the fragment stage that samples the mesh's texture from
// the bindless pages: page h >> 16 picks the binding, layer h & 0xffff the
// array layer. WGSL cannot index an array of textures without a native
// extension, so a switch over MaxPages bindings does it.
func bindlessWGSL() string {
	var b strings.Builder
	b.WriteString("@group(1) @binding(0) var samp: sampler;\n")
	for i := range MaxPages {
		fmt.Fprintf(&b, "@group(1) @binding(%d) var page%d: texture_2d_array<f32>;\n", i+1, i)
	}
	b.WriteString(`
fn texel(h: u32, uv: vec2f) -> vec4f {
	let layer = h & 0xffffu;
	switch h >> 16u {
`)
	for i := range MaxPages - 1 {
		fmt.Fprintf(&b, "\t\tcase %du: { return textureSampleLevel(page%d, samp, uv, layer, 0.0); }\n", i, i)
	}
	fmt.Fprintf(&b, "\t\tdefault: { return textureSampleLevel(page%d, samp, uv, layer, 0.0); }\n", MaxPages-1)
	b.WriteString(`	}
}

@fragment fn fs(in: VOut) -> @location(0) vec4f {
	return texel(in.texture, in.uv) * in.tint;
}
`)
	return b.String()
}

// NewPipeline returns the scene's render pipeline for targets of format:
// the shared vertex stage and the fragment stage fragment, WGSL with an
// entry point fs that takes the vertex stage's VOut. Bind group 0 holds
// the Frame and the Draw array; group 1 whatever fragment declares.
func NewPipeline(wd *wgpu.Device, format wgpu.TextureFormat, fragment string) (*wgpu.RenderPipeline, error) {
	mod, err := wd.TryCreateShaderModule(&wgpu.ShaderModuleDescriptor{Label: "scene", WGSLSource: &wgpu.ShaderSourceWGSL{Code: vertexWGSL + fragment}})
	if err != nil {
		return nil, err
	}
	defer mod.Release()
	return wd.TryCreateRenderPipeline(&wgpu.RenderPipelineDescriptor{
		Label: "scene",
		Vertex: wgpu.VertexState{Module: mod, EntryPoint: "vs", Buffers: []wgpu.VertexBufferLayout{{
			ArrayStride: VertexStride,
			StepMode:    wgpu.VertexStepModeVertex,
			Attributes: []wgpu.VertexAttribute{
				{Format: wgpu.VertexFormatFloat32x2, Offset: 0, ShaderLocation: 0},
				{Format: wgpu.VertexFormatFloat32x2, Offset: 8, ShaderLocation: 1},
				{Format: wgpu.VertexFormatUnorm8x4, Offset: 16, ShaderLocation: 2},
			},
		}}},
		Primitive:   wgpu.PrimitiveState{Topology: wgpu.PrimitiveTopologyTriangleList, FrontFace: wgpu.FrontFaceCCW, CullMode: wgpu.CullModeNone},
		Multisample: wgpu.MultisampleState{Count: 1, Mask: 0xFFFFFFFF},
		Fragment: &wgpu.FragmentState{Module: mod, EntryPoint: "fs", Targets: []wgpu.ColorTargetState{{
			Format: format, Blend: &wgpu.BlendStateReplace, WriteMask: wgpu.ColorWriteMaskAll,
		}}},
	})
}

// NewSampler returns the scene's sampler: nearest texels, clamped.
func NewSampler(wd *wgpu.Device) (*wgpu.Sampler, error) {
	return wd.TryCreateSampler(&wgpu.SamplerDescriptor{
		Label:        "scene",
		AddressModeU: wgpu.AddressModeClampToEdge, AddressModeV: wgpu.AddressModeClampToEdge, AddressModeW: wgpu.AddressModeClampToEdge,
		MagFilter: wgpu.FilterModeNearest, MinFilter: wgpu.FilterModeNearest, MipmapFilter: wgpu.MipmapFilterModeNearest,
		LodMaxClamp: 32, MaxAnisotropy: 1,
	})
}

// FrameConstants returns the Frame uniform of frame for a target of width
// x height: the grid fits the shorter side, tiles stay square, and time
// runs at 60 frames a second.
func FrameConstants(frame int, width, height uint32) []byte {
	side := float32(min(width, height))
	b := make([]byte, 0, 16)
	for _, f := range []float32{side / float32(width) / Grid, side / float32(height) / Grid, float32(frame) / 60, 0} {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

// AppendDraw appends it's Draw, with texture its bindless handle, to b.
func AppendDraw(b []byte, it *Item, texture uint32) []byte {
	x, y := it.Center()
	for _, f := range []float32{x, y, it.Spin, it.Phase} {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	b = binary.LittleEndian.AppendUint32(b, texture)
	return append(b, make([]byte, 12)...)
}
