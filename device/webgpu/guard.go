//go:build cgo || js

package webgpu

import (
	"encoding/binary"
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// guardWGSL checks guards: table[0] holds the pattern, then one entry per
// guard, its first word and word count; a thread per guard compares its
// words and writes 1 to bad[i] when one differs.
const guardWGSL = `
struct Entry { start: u32, count: u32 };
@group(0) @binding(0) var<storage, read> table: array<Entry>;
@group(0) @binding(1) var<storage, read> words: array<u32>;
@group(0) @binding(2) var<storage, read_write> bad: array<u32>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
	let pattern = table[0].start;
	let n = arrayLength(&table) - 1u;
	let stride = nwg.x * WG;
	for (var i = gid.x; i < n; i += stride) {
		let e = table[i + 1u];
		var b = 0u;
		for (var w = e.start; w < e.start + e.count; w++) {
			if (words[w] != pattern) {
				b = 1u;
				break;
			}
		}
		bad[i] = b;
	}
}
`

// CheckGuards checks guards of buf in a compute kernel (guardWGSL) and
// reads back one word per guard; see device.CheckGuards. A buffer larger
// than one storage binding, or without Storage usage, has its guards read
// back instead. A batch whose table or results are more than a binding
// holds is checked in slices, a kernel and a read back each.
func (d *Device) CheckGuards(db device.Buffer, guards []device.Guard, pattern uint32, bad []int) ([]int, error) {
	b, err := d.buffer(db, "checked", device.CopySrc)
	if err != nil {
		return bad, err
	}
	if err := device.ValidateGuards(b.desc.Size, guards); err != nil {
		return bad, fmt.Errorf("webgpu: check guards of buffer %q: %w", b.desc.Label, err)
	}
	if len(guards) == 0 {
		return bad, nil
	}
	if !b.desc.Usage.Has(device.Storage) || b.desc.Size > d.limits.MaxStorageBufferBindingSize || b.desc.Size/4 > 1<<32-1 {
		return device.CheckGuards(readBack{d}, db, guards, pattern, bad)
	}
	k, err := d.kernelsOrErr(guardKernel)
	if err != nil {
		return bad, err
	}
	// A slice's table, 8 bytes a guard and 8 of header, and its results,
	// 4 bytes a guard, are each one binding of a buffer.
	slice := int(min(d.limits.MaxStorageBufferBindingSize, d.limits.MaxBufferSize)/8 - 1)
	for i := 0; i < len(guards); i += slice {
		bad, err = d.checkGuards(k, b, guards[i:min(i+slice, len(guards))], pattern, bad, i)
		if err != nil {
			return bad, err
		}
	}
	return bad, nil
}

// checkGuards is CheckGuards on a slice of guards short enough for one
// dispatch; first is the index of the slice's first guard in the batch.
func (d *Device) checkGuards(k *kernels, b *Buffer, guards []device.Guard, pattern uint32, bad []int, first int) ([]int, error) {
	table := make([]byte, 0, 8*(len(guards)+1))
	table = binary.LittleEndian.AppendUint32(table, pattern)
	table = binary.LittleEndian.AppendUint32(table, 0)
	for _, g := range guards {
		table = binary.LittleEndian.AppendUint32(table, uint32(g.Offset/4))
		table = binary.LittleEndian.AppendUint32(table, uint32(g.Size/4))
	}
	out, err := d.CreateBuffer(device.BufferDesc{Label: "gpumem guard results", Size: 4 * uint64(len(guards)), Usage: device.Storage | device.CopySrc})
	if err != nil {
		return bad, err
	}
	defer d.releaseInternal(out.(*Buffer))
	tb, err := d.tableBuffer("guard", table)
	if err != nil {
		return bad, err
	}
	pass, err := d.computePass()
	if err != nil {
		return bad, err
	}
	bg, err := d.dev.TryCreateBindGroup(&wgpu.BindGroupDescriptor{
		Layout: k.guard.layout,
		Entries: []wgpu.BindGroupEntry{
			{Binding: 0, Buffer: tb, Size: wgpu.WholeSize},
			{Binding: 1, Buffer: b.buf, Size: wgpu.WholeSize},
			{Binding: 2, Buffer: out.(*Buffer).buf, Size: wgpu.WholeSize},
		},
	})
	if err != nil {
		_ = pass.TryEnd()
		pass.Release()
		return bad, d.fail("guard: bind group", err)
	}
	pass.SetPipeline(k.guard.pipeline)
	pass.SetBindGroup(0, bg, nil)
	pass.DispatchWorkgroups(uint32(min((uint64(len(guards))+workgroupSize-1)/workgroupSize, maxWorkgroups)), 1, 1)
	bg.Release()
	err = pass.TryEnd()
	pass.Release()
	if err != nil {
		return bad, d.fail("guard: end compute pass", err)
	}
	res := make([]byte, 4*len(guards))
	if err := d.ReadBuffer(out, 0, res); err != nil {
		return bad, err
	}
	for i := range guards {
		if binary.LittleEndian.Uint32(res[4*i:]) != 0 {
			bad = append(bad, first+i)
		}
	}
	return bad, nil
}

// readBack is the device without its GuardChecker: device.CheckGuards
// on it reads each guard back.
type readBack struct{ device.Device }
