//go:build cgo

package webgpu

import (
	"github.com/oliverbestmann/webgpu/wgpu"
)

// The few calls whose native form the binding's browser side lacks or
// implements differently; platform_js.go has their browser form.

// destroyTexture destroys and releases t.
func destroyTexture(t *wgpu.Texture) {
	t.Destroy()
	t.Release()
}

// adapterInfo describes adapter.
func adapterInfo(adapter *wgpu.Adapter) AdapterInfo {
	wi := adapter.GetInfo()
	return AdapterInfo{
		Name:        wi.Device,
		Vendor:      wi.Vendor,
		Description: wi.Description,
		Backend:     wi.BackendType.String(),
		Type:        adapterType(wi.AdapterType),
	}
}

// mappedView is empty natively: Buffer.mapped is the mapping itself.
type mappedView struct{}

// mapAll sets b.mapped to the whole of b's mapping; b is mapped.
func (b *Buffer) mapAll() {
	b.mapped = b.buf.GetMappedRange(0, uint(b.desc.Size))
}

// wrote is called after the caller wrote p, a range of b.mapped starting
// at offset. Natively p is the mapping, so nothing is left to do.
func (b *Buffer) wrote(uint64, []byte) {}

// createComputePipeline creates the compute pipeline of mod's entry point
// "main", named name; layout nil derives the layout from the shader.
func (d *Device) createComputePipeline(name string, layout *wgpu.PipelineLayout, mod *wgpu.ShaderModule) (*wgpu.ComputePipeline, error) {
	return d.dev.TryCreateComputePipeline(&wgpu.ComputePipelineDescriptor{
		Label:   name,
		Layout:  layout,
		Compute: wgpu.ProgrammableStageDescriptor{Module: mod, EntryPoint: "main"},
	})
}

// writeQueue writes data to b at offset through the queue.
func (d *Device) writeQueue(b *wgpu.Buffer, offset uint64, data []byte) error {
	return d.queue.TryWriteBuffer(b, offset, data)
}

// writeQueueLayer writes data, rows of bytesPerRow bytes, to layer of mip
// level mip of t, w by h texels, through the queue.
func (d *Device) writeQueueLayer(t *wgpu.Texture, layer, mip, w, h, bytesPerRow uint32, data []byte) error {
	return d.queue.TryWriteTexture(
		&wgpu.TexelCopyTextureInfo{Texture: t, MipLevel: mip, Origin: wgpu.Origin3D{Z: layer}, Aspect: wgpu.TextureAspectAll},
		data,
		&wgpu.TexelCopyBufferLayout{BytesPerRow: bytesPerRow, RowsPerImage: h},
		&wgpu.Extent3D{Width: w, Height: h, DepthOrArrayLayers: 1},
	)
}

// computeMoves says whether Move may run as compute dispatches:
// wgpu-native lets a dispatch bind one buffer twice as writable storage
// (the move kernels' source and destination windows).
const computeMoves = true

// stagedTables says whether the compute path's move tables go through the
// device's own mapped staging buffers (tablestage.go): natively they do.
const stagedTables = true

// releaseDevice releases a device New created.
func releaseDevice(dev *wgpu.Device) { dev.Release() }

// offThread says whether the device does slow work on goroutines of its
// own (PrepareBuffer's creation, reap's destruction of large buffers):
// natively it does, wgpu-native's device being safe to use from several
// threads.
const offThread = true
