//go:build cgo || js

package webgpu

import (
	"fmt"

	"github.com/oliverbestmann/webgpu/wgpu"
)

// The compute kernels. Each runs as one dispatch over a table in a storage
// buffer. The patch kernel's workgroups walk their table with a
// grid-stride loop, so a dispatch needs no more than maxWorkgroups
// workgroups however long the table is. The move kernels run one workgroup
// an entry (x + y * maxWorkgroups, a second dimension past maxWorkgroups
// entries); their table segment is bound at a dynamic offset, so one bind
// group serves every dispatch of a pair of bindings, and starts with a
// header entry whose first word is the number of entries.

const (
	// workgroupSize is the number of threads of a move or patch workgroup.
	workgroupSize = 256
	// chunkBytes is the most bytes one table entry of the move kernels
	// copies: sixteen 16-byte vec4s per thread of a workgroup, four loads
	// in flight before their stores. Measured on an NVIDIA H200 with
	// `gpumem devbench` (internal/devbench), 64 KiB entries move 3.5 to 3.6 TB/s in
	// 1 GiB batches where 4 KiB entries (one vec4 a thread) moved 2.9 to
	// 3.6, and they cut the CPU time to record a batch sixteenfold. A
	// 256 MiB move is 4,096 entries, 4,096 workgroups of 256 threads:
	// enough to fill the GPU; the table costs 16 bytes per 64 KiB.
	chunkBytes = workgroupSize * 16 * 16
	// mipWorkgroupSize is the number of threads of a mip workgroup.
	mipWorkgroupSize = 64
	// maxWorkgroups is the most workgroups of one dispatch (WebGPU's
	// default maxComputeWorkgroupsPerDimension).
	maxWorkgroups = 65535
)

// wgslConsts declares, ahead of every kernel, the constants that the Go
// side also uses: WG threads a workgroup of the move and patch kernels,
// MIP_WG of the mip kernel.
var wgslConsts = fmt.Sprintf("const WG: u32 = %du;\nconst MIP_WG: u32 = %du;\n", workgroupSize, mipWorkgroupSize)

// copyVec4WGSL copies, for the table entry of its workgroup, n vec4<u32>
// from src[s] to dst[d] (indices in 16-byte units, relative to the bound
// windows), four vec4 loads a thread in flight before their stores.
const copyVec4WGSL = `
struct Entry { s: u32, d: u32, n: u32, pad: u32 };
@group(0) @binding(0) var<storage, read> table: array<Entry>;
@group(0) @binding(1) var<storage, read_write> src: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<u32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
	let c = wg.x + wg.y * nwg.x;
	if (c >= table[0].s) {
		return;
	}
	{
		let e = table[1u + c];
		var i = lid;
		for (; i + 3u * WG < e.n; i += 4u * WG) {
			let a0 = src[e.s + i];
			let a1 = src[e.s + i + WG];
			let a2 = src[e.s + i + 2u * WG];
			let a3 = src[e.s + i + 3u * WG];
			dst[e.d + i] = a0;
			dst[e.d + i + WG] = a1;
			dst[e.d + i + 2u * WG] = a2;
			dst[e.d + i + 3u * WG] = a3;
		}
		for (; i < e.n; i += WG) {
			dst[e.d + i] = src[e.s + i];
		}
	}
}
`

// copyShiftWGSL copies, for every table entry, n vec4<u32> to dst[d]
// (16-byte units) from the 32-bit words at src[s] (word units), for a
// destination 16-byte aligned and a source that is not: four word loads,
// all in flight before the store, and one aligned vec4 store per thread.
const copyShiftWGSL = `
struct Entry { s: u32, d: u32, n: u32, pad: u32 };
@group(0) @binding(0) var<storage, read> table: array<Entry>;
@group(0) @binding(1) var<storage, read_write> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<u32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
	let c = wg.x + wg.y * nwg.x;
	if (c >= table[0].s) {
		return;
	}
	{
		let e = table[1u + c];
		for (var i = lid; i < e.n; i += WG) {
			let w = e.s + 4u * i;
			dst[e.d + i] = vec4<u32>(src[w], src[w + 1u], src[w + 2u], src[w + 3u]);
		}
	}
}
`

// copyWordWGSL is copyVec4WGSL on 32-bit words, for the unaligned heads and
// tails of ranges. Each thread loads four words before it stores any, so
// four loads are in flight.
const copyWordWGSL = `
struct Entry { s: u32, d: u32, n: u32, pad: u32 };
@group(0) @binding(0) var<storage, read> table: array<Entry>;
@group(0) @binding(1) var<storage, read_write> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
	let c = wg.x + wg.y * nwg.x;
	if (c >= table[0].s) {
		return;
	}
	{
		let e = table[1u + c];
		for (var i = lid; i < e.n; i += 4u * WG) {
			let i1 = i + WG;
			let i2 = i + 2u * WG;
			let i3 = i + 3u * WG;
			let a0 = src[e.s + i];
			let a1 = src[e.s + min(i1, e.n - 1u)];
			let a2 = src[e.s + min(i2, e.n - 1u)];
			let a3 = src[e.s + min(i3, e.n - 1u)];
			dst[e.d + i] = a0;
			if (i1 < e.n) { dst[e.d + i1] = a1; }
			if (i2 < e.n) { dst[e.d + i2] = a2; }
			if (i3 < e.n) { dst[e.d + i3] = a3; }
		}
	}
}
`

// patchWGSL adds delta to the word at index (relative to the bound window)
// for every table entry. atomicAdd makes repeated indices add up.
const patchWGSL = `
struct Entry { index: u32, delta: u32 };
@group(0) @binding(0) var<storage, read> table: array<Entry>;
@group(0) @binding(1) var<storage, read_write> words: array<atomic<u32>>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
	let count = arrayLength(&table);
	let stride = nwg.x * WG;
	for (var i = gid.x; i < count; i += stride) {
		let e = table[i];
		atomicAdd(&words[e.index], e.delta);
	}
}
`

// mipWGSL computes one mip level from the one above it, both stored in one
// buffer as rows of rowWords words (bytesPerRow/4). Each thread makes one
// 32-bit word of the output, so no two threads write the same word.
// Texel (x, y) averages texels (2x, 2y), (2x+1, 2y), (2x, 2y+1),
// (2x+1, 2y+1) of the level above, coordinates clamped; per channel:
// 8-bit: (a+b+c+d+2)/4; float32: ((a+b)+(c+d))*0.25; float16: the same in
// float32, rounded to half.
const mipWGSL = `
struct Params {
	inW: u32, inH: u32, outW: u32, outH: u32,
	inRow: u32, outRow: u32, inBase: u32, outBase: u32,
	bpt: u32, kind: u32, pad0: u32, pad1: u32,
};
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> words: array<u32>;

fn inByte(x: u32, y: u32, ch: u32) -> u32 {
	let b = y * p.inRow * 4u + x * p.bpt + ch;
	return (words[p.inBase + b / 4u] >> ((b % 4u) * 8u)) & 0xffu;
}

fn inWord(x: u32, y: u32, w: u32) -> u32 {
	return words[p.inBase + y * p.inRow + x * (p.bpt / 4u) + w];
}

@compute @workgroup_size(MIP_WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
	let k = gid.x;
	let y = gid.y;
	let rowBytes = p.outW * p.bpt;
	if (y >= p.outH || k * 4u >= rowBytes) {
		return;
	}
	let y0 = min(2u * y, p.inH - 1u);
	let y1 = min(2u * y + 1u, p.inH - 1u);
	var res = 0u;
	if (p.kind == 0u) {
		for (var j = 0u; j < 4u; j++) {
			let b = k * 4u + j;
			if (b < rowBytes) {
				let x = b / p.bpt;
				let ch = b % p.bpt;
				let x0 = min(2u * x, p.inW - 1u);
				let x1 = min(2u * x + 1u, p.inW - 1u);
				let s = inByte(x0, y0, ch) + inByte(x1, y0, ch) + inByte(x0, y1, ch) + inByte(x1, y1, ch);
				res |= ((s + 2u) / 4u) << (j * 8u);
			}
		}
	} else {
		let wpt = p.bpt / 4u;
		let x = k / wpt;
		let w = k % wpt;
		let x0 = min(2u * x, p.inW - 1u);
		let x1 = min(2u * x + 1u, p.inW - 1u);
		let a = inWord(x0, y0, w);
		let b = inWord(x1, y0, w);
		let c = inWord(x0, y1, w);
		let d = inWord(x1, y1, w);
		if (p.kind == 1u) {
			let v = ((bitcast<f32>(a) + bitcast<f32>(b)) + (bitcast<f32>(c) + bitcast<f32>(d))) * 0.25;
			res = bitcast<u32>(v);
		} else {
			let v = ((unpack2x16float(a) + unpack2x16float(b)) + (unpack2x16float(c) + unpack2x16float(d))) * 0.25;
			res = pack2x16float(v);
		}
	}
	words[p.outBase + y * p.outRow + k] = res;
}
`

// kernel is one compute pipeline and its bind group layout.
type kernel struct {
	pipeline *wgpu.ComputePipeline
	layout   *wgpu.BindGroupLayout
}

// kernels are the device's compute pipelines; a zero kernel is not built
// yet. The three move kernels share one explicit layout, moveLayout (the
// table bound at a dynamic offset), and the table buffer.
type kernels struct {
	copyVec4, copyShift, copyWord, patch, mip, guard kernel
	moveLayout                                       *wgpu.BindGroupLayout
	movePipelineLayout                               *wgpu.PipelineLayout
	table                                            moveTableBuffer
}

// release releases the pipelines, layouts and the move table buffer; the
// GPU must be done with them.
func (k *kernels) release() {
	if k == nil {
		return
	}
	k.table.release()
	for _, p := range []*kernel{&k.copyVec4, &k.copyShift, &k.copyWord, &k.patch, &k.mip, &k.guard} {
		p.layout.Release() // the move kernels' shared layout: Release is idempotent
		p.pipeline.Release()
	}
	if k.movePipelineLayout != nil {
		k.movePipelineLayout.Release()
	}
}

// moveLayouts makes the move kernels' bind group and pipeline layouts:
// the table read-only at a dynamic offset, source and destination
// read-write.
func (d *Device) moveLayouts(k *kernels) error {
	if k.movePipelineLayout != nil {
		return nil
	}
	storage := func(binding uint32, typ wgpu.BufferBindingType, dynamic bool) wgpu.BindGroupLayoutEntry {
		return wgpu.BindGroupLayoutEntry{
			Binding:    binding,
			Visibility: wgpu.ShaderStageCompute,
			Buffer:     wgpu.BufferBindingLayout{Type: typ, HasDynamicOffset: dynamic},
		}
	}
	bgl, err := d.dev.TryCreateBindGroupLayout(&wgpu.BindGroupLayoutDescriptor{
		Label: "gpumem move",
		Entries: []wgpu.BindGroupLayoutEntry{
			storage(0, wgpu.BufferBindingTypeReadOnlyStorage, true),
			storage(1, wgpu.BufferBindingTypeStorage, false),
			storage(2, wgpu.BufferBindingTypeStorage, false),
		},
	})
	if err != nil {
		return d.fail("create move bind group layout", err)
	}
	pl, err := d.dev.TryCreatePipelineLayout(&wgpu.PipelineLayoutDescriptor{
		Label:            "gpumem move",
		BindGroupLayouts: []*wgpu.BindGroupLayout{bgl},
	})
	if err != nil {
		bgl.Release()
		return d.fail("create move pipeline layout", err)
	}
	k.moveLayout, k.movePipelineLayout = bgl, pl
	return nil
}

// kernelSet names kernels to build.
type kernelSet uint8

const (
	moveKernels kernelSet = 1 << iota // copyVec4, copyShift, copyWord
	patchKernel
	mipKernel
	guardKernel
)

// moveKernelSources are the move kernels: where each is kept, its label
// and its code.
func moveKernelSources(k *kernels) [3]kernelSource {
	return [3]kernelSource{
		{&k.copyVec4, "gpumem copy vec4", copyVec4WGSL},
		{&k.copyShift, "gpumem copy shift", copyShiftWGSL},
		{&k.copyWord, "gpumem copy word", copyWordWGSL},
	}
}

// kernelSource is a kernel to build: where it is kept, its label and its
// code.
type kernelSource struct {
	dst  *kernel
	name string
	code string
}

// precompiled is the move kernels' pipelines being built off the caller's
// goroutine. A shader compiler may take tens of milliseconds a kernel,
// and a renderer's first compaction should not pay them in its frame: the
// device starts building them when it opens (precompile), and the first
// Move takes them (takePrecompiled), waiting only for what is left.
// wgpu-native's device may be used from several threads, and the
// binding's calls open and close their error scopes within one cgo call,
// on one thread, where wgpu keeps them. job sets pipes and err
// (jobs.go).
type precompiled struct {
	job   *job
	pipes [3]*wgpu.ComputePipeline
	err   error
}

// precompile starts building the move kernels on a goroutine of their
// own, when the device will move by compute.
func (d *Device) precompile() {
	if d.noCompute || d.opts.Moves == MoveCopy {
		return
	}
	k := &kernels{}
	if err := d.moveLayouts(k); err != nil {
		return // the first Move builds them, and reports the error
	}
	d.kernels = k
	p := &precompiled{}
	d.pre = p
	layout := k.movePipelineLayout
	p.job = newJob(func() {
		for i, s := range moveKernelSources(k) {
			p.pipes[i], p.err = d.buildPipeline(s, layout)
			if p.err != nil {
				return
			}
		}
	})
	d.start(p.job) // now, not at the next Fence: nothing submits yet
}

// takePrecompiled waits for the precompiled move kernels, if any, and
// keeps those that were built; after an error the first Move builds them
// again, and reports it.
func (d *Device) takePrecompiled() {
	p := d.pre
	if p == nil {
		return
	}
	d.pre = nil
	d.wait(p.job)
	for i, s := range moveKernelSources(d.kernels) {
		if p.pipes[i] == nil {
			continue
		}
		if p.err != nil {
			p.pipes[i].Release()
			continue
		}
		*s.dst = kernel{pipeline: p.pipes[i], layout: d.kernels.moveLayout}
	}
}

// buildPipeline compiles s's code and makes its pipeline with layout (nil:
// from the shader). It touches no state of d's: precompile calls it off
// the caller's goroutine.
func (d *Device) buildPipeline(s kernelSource, layout *wgpu.PipelineLayout) (*wgpu.ComputePipeline, error) {
	mod, err := d.dev.TryCreateShaderModule(&wgpu.ShaderModuleDescriptor{
		Label:      s.name,
		WGSLSource: &wgpu.ShaderSourceWGSL{Code: wgslConsts + s.code},
	})
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	defer mod.Release()
	p, err := d.createComputePipeline(s.name, layout, mod)
	if err != nil {
		return nil, fmt.Errorf("create pipeline: %w", err)
	}
	return p, nil
}

// kernelsOrErr returns the device's compute pipelines with those of need
// built: each is built on its first use, so a device that only moves
// never compiles the patch and mip kernels (the move kernels are started
// when the device opens: precompile).
func (d *Device) kernelsOrErr(need kernelSet) (*kernels, error) {
	if need&moveKernels != 0 {
		d.takePrecompiled()
	}
	if d.kernels == nil {
		d.kernels = &kernels{}
	}
	k := d.kernels
	moves := moveKernelSources(k)
	for _, s := range []struct {
		set kernelSet
		kernelSource
	}{
		{moveKernels, moves[0]}, {moveKernels, moves[1]}, {moveKernels, moves[2]},
		{patchKernel, kernelSource{&k.patch, "gpumem patch", patchWGSL}},
		{mipKernel, kernelSource{&k.mip, "gpumem mip", mipWGSL}},
		{guardKernel, kernelSource{&k.guard, "gpumem guard", guardWGSL}},
	} {
		if need&s.set == 0 || s.dst.pipeline != nil {
			continue
		}
		var layout *wgpu.PipelineLayout // auto, from the shader
		if s.set == moveKernels {
			if err := d.moveLayouts(k); err != nil {
				return nil, err
			}
			layout = k.movePipelineLayout
		}
		p, err := d.buildPipeline(s.kernelSource, layout)
		if err != nil {
			return nil, d.fail(s.name, err)
		}
		if layout != nil {
			*s.dst = kernel{pipeline: p, layout: k.moveLayout}
		} else {
			*s.dst = kernel{pipeline: p, layout: p.GetBindGroupLayout(0)}
		}
	}
	return k, nil
}
