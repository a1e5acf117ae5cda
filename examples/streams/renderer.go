//go:build !js

package main

import (
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// renderer keeps, per live mesh, what a draw needs (its slab's buffers,
// base vertex, first index, index count, texture handle and scale), and
// changes it only where gpumem's change reports say: a Moved mesh's draw
// is rebuilt from Streams and Slices, a Replaced buffer is rebound for
// every draw of its slab at once, a Released one forgotten. It is not
// safe for concurrent use.
type renderer struct {
	dev      *webgpu.Device
	wd       *wgpu.Device
	queue    *wgpu.Queue
	meshes   *mesh.Allocator
	textures *bindless.Registry[uint64]
	pipe     *pipeline

	// items are the live meshes; byTexture the same by texture handle,
	// for the registry's moves.
	items     map[mesh.Handle]*item
	byTexture map[bindless.Handle]*item
	// buffers are the slab buffers draws bind, by gpumem's buffer.
	buffers map[device.Buffer]*binding
	dirty   []*item // draws to rebuild after this frame's Flush

	// pages binds the sampler and a view of each bindless page, built at
	// registry version pagesVersion.
	pages        *wgpu.BindGroup
	pageViews    []*wgpu.TextureView
	pagesVersion uint64

	// uniforms holds the frame's Draw structs, one per stride.
	uniforms     *wgpu.Buffer
	uniformGroup *wgpu.BindGroup
	uniformCap   int
	stride       int

	order   []*item
	data    []byte
	streams []mesh.Slice
	stats   Stats
}

// item is one live mesh of the scene and its draw.
type item struct {
	slot    int
	mesh    mesh.Handle
	shape   *shape // the data last staged for it
	image   bitmap
	texID   uint64
	texture bindless.Handle
	scale   [2]float32 // bindless Region(texture).Scale
	draw    drawRecord
	built   int // the apply call that last built draw, counted from 1
}

// drawRecord is where a mesh's draw reads: the buffers of its vertex
// slab's four streams and of its index slab, and its ranges in them.
type drawRecord struct {
	streams    [4]*binding
	index      *binding
	format     wgpu.IndexFormat
	baseVertex int32
	firstIndex uint32
	indexCount uint32
}

// binding is one slab buffer as draws bind it. Draws point at it, so a
// Replaced buffer is rebound once for all of them.
type binding struct {
	id  int // creation order: draws sort by it
	raw *wgpu.Buffer
}

// Stats counts what the renderer did.
type Stats struct {
	Frames                   int
	Added, Modified, Removed int
	// Rebuilt counts draws rebuilt because Changes reported their mesh
	// Moved; Rebinds slab buffers bound anew because Changes reported
	// them Replaced; Bound slab buffers first met through a placement.
	Rebuilt, Rebinds, Bound int
	// TexturesMoved counts handles rewritten after the registry's
	// Compact; PageGroups page bind groups built (registry versions).
	TexturesMoved, PageGroups int
	// Of the last frame: meshes drawn, SetVertexBuffer runs (four calls
	// each) and SetIndexBuffer calls.
	Drawn, VertexBinds, IndexBinds int
	// History has a FrameStats per frame.
	History  []FrameStats
	Mesh     mesh.Stats
	Bindless bindless.Stats
}

// FrameStats is what one frame's changes asked of the renderer.
type FrameStats struct {
	Moved, Replaced, Released int // the mesh allocator's changes
	Rebuilt, Rebinds          int
}

func newRenderer(dev *webgpu.Device, meshes *mesh.Allocator, textures *bindless.Registry[uint64]) (*renderer, error) {
	wd, queue := dev.Raw()
	var texs []wgpu.BindGroupLayoutEntry
	for i := range maxPages {
		texs = append(texs, wgpu.BindGroupLayoutEntry{Binding: uint32(i + 1), Visibility: wgpu.ShaderStageFragment,
			Texture: wgpu.TextureBindingLayout{SampleType: wgpu.TextureSampleTypeFloat, ViewDimension: wgpu.TextureViewDimension2DArray}})
	}
	pipe, err := newPipeline(wd, pagesWGSL(), texs)
	if err != nil {
		return nil, err
	}
	align := int(dev.Limits().UniformOffsetAlignment)
	return &renderer{dev: dev, wd: wd, queue: queue, meshes: meshes, textures: textures, pipe: pipe,
		items: map[mesh.Handle]*item{}, byTexture: map[bindless.Handle]*item{}, buffers: map[device.Buffer]*binding{},
		stride: (drawBytes + align - 1) / align * align}, nil
}

// add tracks a mesh a loader added; its draw is built after the Flush.
func (r *renderer) add(ev event, tex bindless.Handle) error {
	g, ok := r.textures.Region(tex)
	if !ok {
		return fmt.Errorf("texture %v has no region", tex)
	}
	it := &item{slot: ev.slot, mesh: ev.mesh, shape: ev.shape, image: ev.image, texID: ev.texID, texture: tex}
	it.scale[0], it.scale[1] = g.Scale()
	r.items[ev.mesh], r.byTexture[tex] = it, it
	r.dirty = append(r.dirty, it)
	r.stats.Added++
	return nil
}

// modify notes a mesh's new data. Its draw stays: the same sizes are
// rewritten in place, new ones come back from Changes as Moved.
func (r *renderer) modify(ev event) {
	if it := r.items[ev.mesh]; it != nil {
		it.shape = ev.shape
		r.stats.Modified++
	}
}

// remove stops drawing a mesh; the caller unregisters its texture.
func (r *renderer) remove(ev event) {
	if it := r.items[ev.mesh]; it != nil {
		delete(r.items, ev.mesh)
		delete(r.byTexture, it.texture)
		r.stats.Removed++
	}
}

// apply brings the draws up to date with the mesh allocator's changes,
// and builds the draws of the meshes added since the last call.
func (r *renderer) apply(cs []memory.Change) error {
	var fs FrameStats
	r.stats.History = append(r.stats.History, fs) // this call's, filled below
	for _, c := range cs {
		switch c.Kind {
		case memory.Moved:
			fs.Moved++
			if it := r.items[mesh.HandleOf(c)]; it != nil {
				r.dirty = append(r.dirty, it)
			}
		case memory.Replaced:
			fs.Replaced++
			if b := r.buffers[c.Old]; b != nil { // else never bound: nothing to do
				raw, err := r.dev.RawBuffer(c.Buffer)
				if err != nil {
					return err
				}
				delete(r.buffers, c.Old)
				b.raw, r.buffers[c.Buffer] = raw, b
				fs.Rebinds++
			}
		case memory.Released:
			fs.Released++
			delete(r.buffers, c.Old)
		case memory.Overflowed:
			clear(r.buffers)
			for _, it := range r.items {
				r.dirty = append(r.dirty, it)
			}
		}
	}
	for _, it := range r.dirty {
		if r.items[it.mesh] != it || it.built == len(r.stats.History) {
			continue // removed since, or named twice
		}
		it.built = len(r.stats.History)
		if err := r.build(it); err != nil {
			return err
		}
		fs.Rebuilt++
	}
	r.dirty = r.dirty[:0]
	r.stats.Rebuilt += fs.Rebuilt
	r.stats.Rebinds += fs.Rebinds
	r.stats.History[len(r.stats.History)-1] = fs
	return nil
}

// build reads where the mesh's streams and indices are now.
func (r *renderer) build(it *item) error {
	var err error
	if r.streams, err = r.meshes.Streams(it.mesh, r.streams[:0]); err != nil {
		return fmt.Errorf("mesh %v: %w", it.mesh, err)
	}
	_, idx, err := r.meshes.Slices(it.mesh)
	if err != nil {
		return fmt.Errorf("mesh %v: %w", it.mesh, err)
	}
	if len(r.streams) != len(strides) || idx.Buffer == nil {
		return fmt.Errorf("mesh %v: %d streams and index buffer %v", it.mesh, len(r.streams), idx.Buffer)
	}
	d := drawRecord{baseVertex: int32(r.streams[0].StartElem), firstIndex: idx.StartElem, indexCount: idx.Len(), format: wgpu.IndexFormatUint16}
	if it.shape.format == mesh.Uint32 {
		d.format = wgpu.IndexFormatUint32
	}
	for i, s := range r.streams {
		if d.streams[i], err = r.bind(s.Buffer); err != nil {
			return err
		}
	}
	if d.index, err = r.bind(idx.Buffer); err != nil {
		return err
	}
	it.draw = d
	return nil
}

// bind returns the binding of slab buffer b, made at first sight.
func (r *renderer) bind(b device.Buffer) (*binding, error) {
	if bd := r.buffers[b]; bd != nil {
		return bd, nil
	}
	raw, err := r.dev.RawBuffer(b)
	if err != nil {
		return nil, err
	}
	bd := &binding{id: r.stats.Bound, raw: raw}
	r.buffers[b] = bd
	r.stats.Bound++
	return bd, nil
}

// applyTextures rewrites the handles of the textures the registry's
// Compact moved.
func (r *renderer) applyTextures(cs []memory.Change) {
	for _, c := range cs {
		if c.Kind != memory.Moved {
			continue
		}
		from, to := bindless.Moved(c)
		if it := r.byTexture[from]; it != nil {
			delete(r.byTexture, from)
			it.texture, r.byTexture[to] = to, it
			r.stats.TexturesMoved++
		}
	}
}

// draw renders every live mesh into color and depth, targets of width x
// height, sorted by slab so that buffers are bound only when the slab
// changes between consecutive draws, and submits the frame.
func (r *renderer) draw(frame int, color, depth *wgpu.TextureView, width, height uint32) error {
	if r.pages == nil || r.pagesVersion != r.textures.Version() {
		if err := r.buildPages(); err != nil {
			return err
		}
	}
	r.order = r.order[:0]
	for _, it := range r.items {
		r.order = append(r.order, it)
	}
	slices.SortFunc(r.order, func(a, b *item) int {
		if a.draw.streams[0].id != b.draw.streams[0].id {
			return a.draw.streams[0].id - b.draw.streams[0].id
		}
		if a.draw.index.id != b.draw.index.id {
			return a.draw.index.id - b.draw.index.id
		}
		return a.slot - b.slot
	})
	if err := r.writeDraws(frame, width, height); err != nil {
		return err
	}
	// gpumem's uploads and moves reach the queue before the draws.
	if err := r.dev.Submit(); err != nil {
		return err
	}
	if err := r.queue.TryWriteBuffer(r.uniforms, 0, r.data); err != nil {
		return err
	}
	enc, err := r.wd.TryCreateCommandEncoder(&wgpu.CommandEncoderDescriptor{Label: "streams"})
	if err != nil {
		return err
	}
	defer enc.Release()
	pass := enc.BeginRenderPass(passDesc(color, depth))
	pass.SetPipeline(r.pipe.pipeline)
	pass.SetBindGroup(1, r.pages, nil)
	var vb, ib *binding
	r.stats.VertexBinds, r.stats.IndexBinds = 0, 0
	for k, it := range r.order {
		d := &it.draw
		if d.streams[0] != vb {
			for i, b := range d.streams {
				pass.SetVertexBuffer(uint32(i), b.raw, 0, wgpu.WholeSize)
			}
			vb = d.streams[0]
			r.stats.VertexBinds++
		}
		if d.index != ib {
			pass.SetIndexBuffer(d.index.raw, d.format, 0, wgpu.WholeSize)
			ib = d.index
			r.stats.IndexBinds++
		}
		pass.SetBindGroup(0, r.uniformGroup, []uint32{uint32(k * r.stride)})
		pass.DrawIndexed(d.indexCount, 1, d.firstIndex, d.baseVertex, 0)
	}
	if err := pass.TryEnd(); err != nil {
		return err
	}
	pass.Release()
	cb, err := enc.TryFinish(nil)
	if err != nil {
		return err
	}
	r.queue.Submit(cb)
	cb.Release()
	// The frame's fence: buffers gpumem released are freed once it passes.
	if _, err := r.dev.Fence(); err != nil {
		return err
	}
	r.stats.Frames++
	r.stats.Drawn = len(r.order)
	return nil
}

// writeDraws lays the Draw structs out in draw order, a stride apart,
// growing the uniform buffer when the meshes outgrow it.
func (r *renderer) writeDraws(frame int, width, height uint32) error {
	r.data = r.data[:0]
	for _, it := range r.order {
		r.data = appendDraw(r.data, it.slot, frame, width, height, uint32(it.texture), it.scale[0], it.scale[1])
		r.data = append(r.data, make([]byte, r.stride-drawBytes)...)
	}
	if len(r.order) <= r.uniformCap && r.uniforms != nil {
		return nil
	}
	r.releaseUniforms()
	r.uniformCap = max(64, 2*len(r.order))
	var err error
	if r.uniforms, err = r.wd.TryCreateBuffer(&wgpu.BufferDescriptor{Label: "draws", Size: uint64(r.uniformCap * r.stride),
		Usage: wgpu.BufferUsageUniform | wgpu.BufferUsageCopyDst}); err != nil {
		return err
	}
	r.uniformGroup, err = r.wd.TryCreateBindGroup(&wgpu.BindGroupDescriptor{Label: "draws", Layout: r.pipe.draws,
		Entries: []wgpu.BindGroupEntry{{Binding: 0, Buffer: r.uniforms, Size: drawBytes}}})
	return err
}

// buildPages binds a 2D-array view of every bindless page, page i at
// binding i+1, and page 0 in the slots of vacant pages and past the last.
func (r *renderer) buildPages() error {
	r.releasePages()
	pages := r.textures.Pages()
	if len(pages) > maxPages {
		return fmt.Errorf("%d bindless pages, the shader binds %d", len(pages), maxPages)
	}
	for _, p := range pages {
		if p == nil {
			r.pageViews = append(r.pageViews, nil)
			continue
		}
		raw, err := r.dev.RawTexture(p)
		if err != nil {
			return err
		}
		v, err := raw.TryCreateView(&wgpu.TextureViewDescriptor{Dimension: wgpu.TextureViewDimension2DArray,
			MipLevelCount: p.Desc().Mips, ArrayLayerCount: p.Desc().Layers, Aspect: wgpu.TextureAspectAll})
		if err != nil {
			return err
		}
		r.pageViews = append(r.pageViews, v)
	}
	entries := []wgpu.BindGroupEntry{{Binding: 0, Sampler: r.pipe.sampler}}
	for i := range maxPages {
		v := r.pageViews[0]
		if i < len(r.pageViews) && r.pageViews[i] != nil {
			v = r.pageViews[i]
		}
		entries = append(entries, wgpu.BindGroupEntry{Binding: uint32(i + 1), TextureView: v})
	}
	g, err := r.wd.TryCreateBindGroup(&wgpu.BindGroupDescriptor{Label: "bindless pages", Layout: r.pipe.textures, Entries: entries})
	if err != nil {
		return err
	}
	r.pages, r.pagesVersion = g, r.textures.Version()
	r.stats.PageGroups++
	return nil
}

func (r *renderer) releasePages() {
	if r.pages != nil {
		r.pages.Release()
		r.pages = nil
	}
	for _, v := range r.pageViews {
		if v != nil {
			v.Release()
		}
	}
	r.pageViews = r.pageViews[:0]
}

func (r *renderer) releaseUniforms() {
	if r.uniformGroup != nil {
		r.uniformGroup.Release()
		r.uniformGroup = nil
	}
	if r.uniforms != nil {
		r.uniforms.Release()
		r.uniforms = nil
	}
}

// Stats returns what the renderer and gpumem's managers did so far.
func (r *renderer) Stats() Stats {
	s := r.stats
	s.Mesh, s.Bindless = r.meshes.Stats(), r.textures.Stats()
	return s
}

// release releases the renderer's own objects; the managers are the
// caller's.
func (r *renderer) release() {
	r.releasePages()
	r.releaseUniforms()
	r.pipe.release()
}

// passDesc clears color and depth and draws into them.
func passDesc(color, depth *wgpu.TextureView) *wgpu.RenderPassDescriptor {
	return &wgpu.RenderPassDescriptor{
		ColorAttachments: []wgpu.RenderPassColorAttachment{{View: color, LoadOp: wgpu.LoadOpClear, StoreOp: wgpu.StoreOpStore, ClearValue: clearColor}},
		DepthStencilAttachment: &wgpu.RenderPassDepthStencilAttachment{View: depth,
			DepthLoadOp: wgpu.LoadOpClear, DepthStoreOp: wgpu.StoreOpStore, DepthClearValue: 1},
	}
}
