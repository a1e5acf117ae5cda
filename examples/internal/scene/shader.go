package scene

import (
	"fmt"
	"strings"
)

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
