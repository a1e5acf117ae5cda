//go:build cgo && !js

package multidraw

import (
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// best: wgpu-native draws multi-draws on every backend; a nonzero first
// instance in indirect arguments needs its feature, a count read from a
// buffer its own.
func best(wd *wgpu.Device) Mode {
	switch {
	case !wd.HasFeature(wgpu.FeatureNameIndirectFirstInstance):
		return Direct
	case wd.HasFeature(wgpu.NativeFeatureMultiDrawIndirectCount):
		return MultiDrawCount
	}
	return MultiDraw
}

// The binding's multi-draws take the pass a second time and the buffers
// by value, and record into the pass they are given.
func multiDraw(pass *wgpu.RenderPassEncoder, args *wgpu.Buffer, offset uint64, count uint32) {
	pass.MultiDrawIndexedIndirect(pass, *args, offset, count)
}

func multiDrawCount(pass *wgpu.RenderPassEncoder, args *wgpu.Buffer, offset uint64, counts *wgpu.Buffer, countOffset uint64, maxCount uint32) {
	pass.MultiDrawIndexedIndirectCount(pass, *args, offset, *counts, countOffset, maxCount)
}

func drawIndirect(pass *wgpu.RenderPassEncoder, args *wgpu.Buffer, offset uint64) {
	pass.DrawIndexedIndirect(args, offset)
}

// clearBuffer records in enc the zeroing of buf's first size bytes.
func clearBuffer(dev *webgpu.Device, enc *wgpu.CommandEncoder, buf device.Buffer, size uint64) error {
	raw, err := dev.RawBuffer(buf)
	if err != nil {
		return fmt.Errorf("multidraw: clear counts: %w", err)
	}
	if err := enc.TryClearBuffer(raw, 0, size); err != nil {
		return fmt.Errorf("multidraw: clear counts: %w", err)
	}
	return nil
}

// kernelsWGSL holds the three passes over the entries (see entryHeader):
// draw i is words 4+3i (record slot, instance count, object), the first
// draws of the spans follow the draws. Each writes DrawIndexedIndirect
// arguments from the record's index count, first index and base vertex
// and the draw's instances and object:
//
//   - expand writes draw i's at i;
//   - cull does too, with no instances where the object's sphere lies
//     outside a plane;
//   - compact writes only the kept draws, at their span's first plus a
//     slot it takes from its span's count.
//
// A sphere's plane test is on normalized planes (Frustum.normalized):
// the centre's distance is below minus the radius only when the whole
// sphere is outside.
const kernelsWGSL = `
@group(0) @binding(0) var<storage, read> records: array<u32>;
@group(0) @binding(1) var<storage, read> draws: array<u32>;
@group(0) @binding(2) var<storage, read_write> args: array<u32>;
@group(0) @binding(3) var<storage, read> bounds: array<vec4f>;
@group(0) @binding(4) var<uniform> planes: array<vec4f, 6>;
@group(0) @binding(5) var<storage, read_write> counts: array<atomic<u32>>;

fn put(a: u32, e: u32, instances: u32) {
	let r = 5u * draws[e];
	args[a] = records[r];
	args[a + 1u] = instances;
	args[a + 2u] = records[r + 2u];
	args[a + 3u] = records[r + 3u];
	args[a + 4u] = draws[e + 2u];
}

fn visible(object: u32) -> bool {
	let s = bounds[object];
	for (var p = 0u; p < 6u; p++) {
		if (dot(planes[p].xyz, s.xyz) + planes[p].w < -s.w) {
			return false;
		}
	}
	return true;
}

@compute @workgroup_size(64)
fn expand(@builtin(global_invocation_id) id: vec3u) {
	let i = id.x;
	if (i >= draws[0]) {
		return;
	}
	let e = 4u + 3u * i;
	put(5u * i, e, draws[e + 1u]);
}

@compute @workgroup_size(64)
fn cull(@builtin(global_invocation_id) id: vec3u) {
	let i = id.x;
	if (i >= draws[0]) {
		return;
	}
	let e = 4u + 3u * i;
	var instances = draws[e + 1u];
	if (!visible(draws[e + 2u])) {
		instances = 0u;
	}
	put(5u * i, e, instances);
}

@compute @workgroup_size(64)
fn compact(@builtin(global_invocation_id) id: vec3u) {
	let n = draws[0];
	let i = id.x;
	if (i >= n) {
		return;
	}
	let e = 4u + 3u * i;
	if (!visible(draws[e + 2u])) {
		return;
	}
	// The span of draw i: the last whose first draw is at most i.
	let firsts = 4u + 3u * n;
	var lo = 0u;
	var hi = draws[1];
	while (hi - lo > 1u) {
		let mid = (lo + hi) / 2u;
		if (draws[firsts + mid] <= i) {
			lo = mid;
		} else {
			hi = mid;
		}
	}
	let slot = draws[firsts + lo] + atomicAdd(&counts[lo], 1u);
	put(5u * slot, e, draws[e + 1u]);
}
`

// kernels are the compute pipelines of kernelsWGSL's entry points, each
// made at its first use.
type kernels struct {
	wd                          *wgpu.Device
	mod                         *wgpu.ShaderModule
	expander, culler, compacter kernel
}

// kernel is one entry point's pipeline and its bind group over the
// buffers it last bound, binding k binding bound[k].
type kernel struct {
	entry    string
	pipeline *wgpu.ComputePipeline
	group    *wgpu.BindGroup
	bound    []device.Buffer
}

func newKernels(wd *wgpu.Device) (*kernels, error) {
	mod, err := wd.TryCreateShaderModule(&wgpu.ShaderModuleDescriptor{Label: "multidraw kernels", WGSLSource: &wgpu.ShaderSourceWGSL{Code: kernelsWGSL}})
	if err != nil {
		return nil, fmt.Errorf("multidraw: kernels: %w", err)
	}
	return &kernels{wd: wd, mod: mod, expander: kernel{entry: "expand"}, culler: kernel{entry: "cull"}, compacter: kernel{entry: "compact"}}, nil
}

// expand records the expansion of n draws of entries into args.
func (ks *kernels) expand(dev *webgpu.Device, enc *wgpu.CommandEncoder, n uint32, rec, entries, args device.Buffer) error {
	return ks.run(&ks.expander, dev, enc, n, rec, entries, args)
}

// cull records the expansion with culled draws of no instances.
func (ks *kernels) cull(dev *webgpu.Device, enc *wgpu.CommandEncoder, n uint32, rec, entries, args, bounds, frustum device.Buffer) error {
	return ks.run(&ks.culler, dev, enc, n, rec, entries, args, bounds, frustum)
}

// compact records the expansion of the kept draws, counted in counts,
// which must be zero.
func (ks *kernels) compact(dev *webgpu.Device, enc *wgpu.CommandEncoder, n uint32, rec, entries, args, bounds, frustum, counts device.Buffer) error {
	return ks.run(&ks.compacter, dev, enc, n, rec, entries, args, bounds, frustum, counts)
}

// run records in enc the pass of k over n draws with bufs bound: its bind
// group is made again only where a buffer changed.
func (ks *kernels) run(k *kernel, dev *webgpu.Device, enc *wgpu.CommandEncoder, n uint32, bufs ...device.Buffer) error {
	if k.pipeline == nil {
		p, err := ks.wd.TryCreateComputePipeline(&wgpu.ComputePipelineDescriptor{
			Label:   "multidraw " + k.entry,
			Compute: wgpu.ProgrammableStageDescriptor{Module: ks.mod, EntryPoint: k.entry},
		})
		if err != nil {
			return fmt.Errorf("multidraw: %s pipeline: %w", k.entry, err)
		}
		k.pipeline = p
	}
	if k.group == nil || !slices.Equal(bufs, k.bound) {
		entries := make([]wgpu.BindGroupEntry, len(bufs))
		for i, b := range bufs {
			raw, err := dev.RawBuffer(b)
			if err != nil {
				return fmt.Errorf("multidraw: %s: %w", k.entry, err)
			}
			entries[i] = wgpu.BindGroupEntry{Binding: uint32(i), Buffer: raw, Size: wgpu.WholeSize}
		}
		layout := k.pipeline.GetBindGroupLayout(0)
		defer layout.Release()
		g, err := ks.wd.TryCreateBindGroup(&wgpu.BindGroupDescriptor{Label: "multidraw " + k.entry, Layout: layout, Entries: entries})
		if err != nil {
			return fmt.Errorf("multidraw: %s: %w", k.entry, err)
		}
		if k.group != nil {
			k.group.Release()
		}
		k.group, k.bound = g, append(k.bound[:0], bufs...)
	}
	pass := enc.BeginComputePass(&wgpu.ComputePassDescriptor{Label: "multidraw " + k.entry})
	pass.SetPipeline(k.pipeline)
	pass.SetBindGroup(0, k.group, nil)
	pass.DispatchWorkgroups((n+63)/64, 1, 1)
	if err := pass.TryEnd(); err != nil {
		return fmt.Errorf("multidraw: %s: %w", k.entry, err)
	}
	return nil
}

func (k *kernel) release() {
	if k.group != nil {
		k.group.Release()
	}
	if k.pipeline != nil {
		k.pipeline.Release()
	}
	k.group, k.pipeline, k.bound = nil, nil, nil
}

func (ks *kernels) release() {
	if ks == nil {
		return
	}
	ks.expander.release()
	ks.culler.release()
	ks.compacter.release()
	ks.mod.Release()
}
