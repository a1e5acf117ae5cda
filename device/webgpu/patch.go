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
// windows, as Move does. The table, 8 bytes a patch, is bound in segments
// of at most a binding, a dispatch each, in table buffers of at most
// MaxBufferSize bytes: one segment a window and one table buffer, unless
// the batch is longer than those hold.
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
	// Segments of at most maxSeg patches (one binding of a table), each
	// starting at a multiple of segAlign, in tables of at most
	// MaxBufferSize bytes: one table, with one segment a window, unless
	// the batch is larger than a binding or a buffer holds.
	segAlign := uint64(max(d.limits.StorageOffsetAlignment, 16))
	maxTable := d.limits.MaxBufferSize
	maxSeg := min(d.limits.MaxStorageBufferBindingSize, maxTable) / 8
	type seg struct {
		table             int // index of its table buffer
		window, offset, n uint64
	}
	segs := make([]seg, 0, len(windows))
	var tbsArr [1]*wgpu.Buffer
	tbs := tbsArr[:0] // the table buffers made so far
	table := make([]byte, 0, min(8*uint64(len(patches))+uint64(len(windows))*segAlign, maxTable))
	for w, words := range windows {
		for len(words) > 0 {
			n := min(uint64(len(words)/2), maxSeg)
			off := alignUp(uint64(len(table)), segAlign)
			if off+8*n > maxTable { // this table is full: up with it
				tb, err := d.tableBuffer("patch", table)
				if err != nil {
					return err
				}
				tbs = append(tbs, tb)
				table, off = table[:0], 0
			}
			for uint64(len(table)) < off {
				table = append(table, 0)
			}
			for _, v := range words[:2*n] {
				table = binary.LittleEndian.AppendUint32(table, v)
			}
			segs = append(segs, seg{len(tbs), w, off, n})
			words = words[2*n:]
		}
	}
	tb, err := d.tableBuffer("patch", table)
	if err != nil {
		return err
	}
	tbs = append(tbs, tb)
	pass, err := d.computePass()
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
				{Binding: 0, Buffer: tbs[s.table], Offset: s.offset, Size: s.n * 8},
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

// tableBuffer uploads table, a kernel's table of work, into a storage
// buffer, destroyed once the GPU is done with it. It copies table: the
// caller may reuse it at once.
func (d *Device) tableBuffer(what string, table []byte) (*wgpu.Buffer, error) {
	tb, err := d.dev.TryCreateBufferInit(&wgpu.BufferInitDescriptor{
		Label:    "gpumem " + what + " table",
		Contents: table,
		Usage:    wgpu.BufferUsageStorage,
	})
	if err != nil {
		return nil, d.fail("create "+what+" table", err)
	}
	d.retire(tb)
	return tb, nil
}

// computePass opens a compute pass on the pending encoder.
func (d *Device) computePass() (*wgpu.ComputePassEncoder, error) {
	enc, err := d.encoder()
	if err != nil {
		return nil, err
	}
	d.encUsed = true
	return enc.BeginComputePass(nil), nil
}
