//go:build cgo || js

package webgpu

import (
	"encoding/binary"
	"fmt"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// Patch adds each patch's Delta to the word at its Index, in a compute
// shader (patchWGSL). Patches of one index add up: the shader adds
// atomically. A buffer larger than one storage binding is patched through
// windows, as Move does.
func (d *Device) Patch(db device.Buffer, patches []device.Patch) error {
	b, err := d.buffer(db, "patch", device.Storage)
	if err != nil {
		return err
	}
	if err := device.CheckPatches(b.desc.Size, patches); err != nil {
		return fmt.Errorf("webgpu: patch buffer %q: %w", b.desc.Label, err)
	}
	if len(patches) == 0 {
		return nil
	}
	k, err := d.kernelsOrErr(patchKernel)
	if err != nil {
		return err
	}
	// Windows of 2H bytes at multiples of H; a word at byte 4i lies in
	// window min(4i/H, last), where the last window reaches the end.
	half, last := uint64(0), uint64(0)
	if b.desc.Size > d.limits.MaxStorageBufferBindingSize {
		align := uint64(max(d.limits.StorageOffsetAlignment, 256))
		half = (d.limits.MaxStorageBufferBindingSize / 2) / align * align
		// The first window that reaches the end of the buffer.
		last = (b.desc.Size - 2*half + half - 1) / half
	}
	windows := map[uint64][]uint32{}
	for _, p := range patches {
		w, base := uint64(0), uint64(0)
		if half != 0 {
			w = min(uint64(p.Index)*4/half, last)
			base = w * half
		}
		windows[w] = append(windows[w], uint32(uint64(p.Index)-base/4), p.Delta)
	}
	segAlign := uint64(max(d.limits.StorageOffsetAlignment, 16))
	var table []byte
	type seg struct {
		window, offset, n uint64
	}
	var segs []seg
	for w, words := range windows {
		off := uint64(len(table))
		for _, v := range words {
			table = binary.LittleEndian.AppendUint32(table, v)
		}
		segs = append(segs, seg{w, off, uint64(len(words) / 2)})
		for uint64(len(table))%segAlign != 0 {
			table = append(table, 0)
		}
	}
	tb, pass, err := d.tablePass("patch", table)
	if err != nil {
		return err
	}
	for _, s := range segs {
		entry := wgpu.BindGroupEntry{Binding: 1, Buffer: b.buf, Size: wgpu.WholeSize}
		if half != 0 {
			base := s.window * half
			entry.Offset, entry.Size = base, min(2*half, b.desc.Size-base)
		}
		bg, err := d.dev.TryCreateBindGroup(&wgpu.BindGroupDescriptor{
			Layout: k.patch.layout,
			Entries: []wgpu.BindGroupEntry{
				{Binding: 0, Buffer: tb, Offset: s.offset, Size: s.n * 8},
				entry,
			},
		})
		if err != nil {
			_ = pass.TryEnd()
			pass.Release()
			return d.fail("patch: bind group", err)
		}
		pass.SetPipeline(k.patch.pipeline)
		pass.SetBindGroup(0, bg, nil)
		pass.DispatchWorkgroups(uint32(min((s.n+workgroupSize-1)/workgroupSize, maxWorkgroups)), 1, 1)
		bg.Release()
	}
	err = pass.TryEnd()
	pass.Release()
	if err != nil {
		return d.fail("patch: end compute pass", err)
	}
	return nil
}

// tablePass uploads table, a kernel's table of work, into a storage buffer
// (destroyed once the GPU is done with it) and opens a compute pass on the
// pending encoder for the dispatches that read it.
func (d *Device) tablePass(what string, table []byte) (*wgpu.Buffer, *wgpu.ComputePassEncoder, error) {
	tb, err := d.dev.TryCreateBufferInit(&wgpu.BufferInitDescriptor{
		Label:    "gpumem " + what + " table",
		Contents: table,
		Usage:    wgpu.BufferUsageStorage,
	})
	if err != nil {
		return nil, nil, d.fail("create "+what+" table", err)
	}
	d.graveBuffers = append(d.graveBuffers, tb)
	enc, err := d.encoder()
	if err != nil {
		return nil, nil, err
	}
	d.encUsed = true
	return tb, enc.BeginComputePass(nil), nil
}
