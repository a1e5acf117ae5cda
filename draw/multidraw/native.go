//go:build cgo && !js

package multidraw

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// best: wgpu-native draws multi-draws on every backend; a nonzero first
// instance in indirect arguments needs the feature.
func best(wd *wgpu.Device) Mode {
	if wd.HasFeature(wgpu.FeatureNameIndirectFirstInstance) {
		return MultiDraw
	}
	return Direct
}

// The binding's multi-draw takes the pass a second time and the buffer by
// value, and records into the pass it is given.
func multiDraw(pass *wgpu.RenderPassEncoder, args *wgpu.Buffer, offset uint64, count uint32) {
	pass.MultiDrawIndexedIndirect(pass, *args, offset, count)
}

func drawIndirect(pass *wgpu.RenderPassEncoder, args *wgpu.Buffer, offset uint64) {
	pass.DrawIndexedIndirect(args, offset)
}

// expandWGSL turns draw i (record slot, instance count, first instance:
// three words after the 16-byte header whose first word is the count)
// into DrawIndexedIndirect arguments i: the record's index count, first
// index and base vertex with the draw's instances.
const expandWGSL = `
@group(0) @binding(0) var<storage, read> records: array<u32>;
@group(0) @binding(1) var<storage, read> draws: array<u32>;
@group(0) @binding(2) var<storage, read_write> args: array<u32>;

@compute @workgroup_size(64)
fn expand(@builtin(global_invocation_id) id: vec3u) {
	let i = id.x;
	if (i >= draws[0]) {
		return;
	}
	let e = 4u + 3u * i;
	let r = 5u * draws[e];
	let a = 5u * i;
	args[a] = records[r];
	args[a + 1u] = draws[e + 1u];
	args[a + 2u] = records[r + 2u];
	args[a + 3u] = records[r + 3u];
	args[a + 4u] = draws[e + 2u];
}
`

// expander is the compute pipeline that expands draws into arguments,
// and its bind group over the buffers it last bound.
type expander struct {
	wd       *wgpu.Device
	pipeline *wgpu.ComputePipeline
	group    *wgpu.BindGroup
	bound    [3]device.Buffer
}

func newExpander(wd *wgpu.Device) (*expander, error) {
	mod, err := wd.TryCreateShaderModule(&wgpu.ShaderModuleDescriptor{Label: "multidraw expand", WGSLSource: &wgpu.ShaderSourceWGSL{Code: expandWGSL}})
	if err != nil {
		return nil, fmt.Errorf("multidraw: expand shader: %w", err)
	}
	defer mod.Release()
	p, err := wd.TryCreateComputePipeline(&wgpu.ComputePipelineDescriptor{
		Label:   "multidraw expand",
		Compute: wgpu.ProgrammableStageDescriptor{Module: mod, EntryPoint: "expand"},
	})
	if err != nil {
		return nil, fmt.Errorf("multidraw: expand pipeline: %w", err)
	}
	return &expander{wd: wd, pipeline: p}, nil
}

// expand records in enc the pass that expands n draws of entries into
// args, with the records of rec.
func (x *expander) expand(dev *webgpu.Device, enc *wgpu.CommandEncoder, rec, entries, args device.Buffer, n uint32) error {
	if bufs := [3]device.Buffer{rec, entries, args}; x.group == nil || bufs != x.bound {
		var raw [3]*wgpu.Buffer
		for k, b := range bufs {
			r, err := dev.RawBuffer(b)
			if err != nil {
				return fmt.Errorf("multidraw: expand: %w", err)
			}
			raw[k] = r
		}
		layout := x.pipeline.GetBindGroupLayout(0)
		defer layout.Release()
		g, err := x.wd.TryCreateBindGroup(&wgpu.BindGroupDescriptor{Label: "multidraw expand", Layout: layout, Entries: []wgpu.BindGroupEntry{
			{Binding: 0, Buffer: raw[0], Size: wgpu.WholeSize},
			{Binding: 1, Buffer: raw[1], Size: wgpu.WholeSize},
			{Binding: 2, Buffer: raw[2], Size: wgpu.WholeSize},
		}})
		if err != nil {
			return fmt.Errorf("multidraw: expand: %w", err)
		}
		if x.group != nil {
			x.group.Release()
		}
		x.group, x.bound = g, bufs
	}
	pass := enc.BeginComputePass(&wgpu.ComputePassDescriptor{Label: "multidraw expand"})
	pass.SetPipeline(x.pipeline)
	pass.SetBindGroup(0, x.group, nil)
	pass.DispatchWorkgroups((n+63)/64, 1, 1)
	if err := pass.TryEnd(); err != nil {
		return fmt.Errorf("multidraw: expand: %w", err)
	}
	return nil
}

func (x *expander) release() {
	if x == nil {
		return
	}
	if x.group != nil {
		x.group.Release()
	}
	x.pipeline.Release()
}
