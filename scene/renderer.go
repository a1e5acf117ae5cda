package scene

import (
	"fmt"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
	"github.com/gpumem/gpumem/ring"
	"github.com/gpumem/gpumem/staging"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// The renderer's memory, all of it gpumem's:
//
//   - meshes: every item's vertices and indices in the mesh allocator's
//     slabs (one slab of 20-byte vertices, one of uint16 indices, grown as
//     the scene fills), drawn with DrawIndexed's first index and base
//     vertex from Slices;
//   - textures: every item's texture a layer of a bindless page, sampled
//     through the handle that the item's Draw carries;
//   - per-frame constants: the Frame uniform and the Draw array, written
//     to the ring each frame and bound at the offsets it hands out.
//
// A frame (Update, then Render) follows the order that gpumem's webgpu
// package documents for sharing the queue: the managers first (mesh
// Remove, Add, Flush and Sweep; bindless Unregister and Register; ring
// writes), then Device.Submit, which submits what gpumem recorded, then the
// renderer's own command buffer, then Device.Fence, which ends the ring's
// frame.
const (
	// MaxPages is the number of bindless page bindings the shader declares,
	// the registry's MaxPages.
	MaxPages = 8
	// LayersPerPage is small so the scene spreads over several pages and
	// the page bind group is rebuilt as they come.
	LayersPerPage = 64
	// minSlabBytes is small so the slabs grow while the scene fills up.
	minSlabBytes = 16 << 10
)

// sweepLimits bounds the compaction the renderer runs every frame.
var sweepLimits = arena.SweepLimits{Moves: 32, Bytes: 64 << 10}

// TextureKey is the bindless bucket of every item's texture.
var TextureKey = bindless.Key{Format: device.RGBA8Unorm, Width: TextureSize, Height: TextureSize}

// ClearColor is the background.
var ClearColor = wgpu.Color{R: 0.05, G: 0.06, B: 0.09, A: 1}

// Renderer draws a Scene with gpumem managing its memory on the caller's
// device. It is not safe for concurrent use.
type Renderer struct {
	dev   *webgpu.Device
	wd    *wgpu.Device
	queue *wgpu.Queue
	scene *Scene

	meshes   *mesh.Allocator
	belt     *staging.Belt           // carries the meshes' uploads
	textures *bindless.Registry[int] // keyed by Item.ID
	consts   *ring.Buffer

	pipeline *wgpu.RenderPipeline
	sampler  *wgpu.Sampler
	// pages binds the sampler and a view of every bindless page; it was
	// built at textures' version pagesVersion.
	pages        *wgpu.BindGroup
	pageViews    []*wgpu.TextureView
	pagesVersion uint64

	draws    map[*Item]*draw
	byHandle map[mesh.Handle]*draw
	fresh    []*draw         // added this frame: draw data made after the Flush
	changes  []memory.Change // the meshes' Changes, reused
	table    []byte          // the Draw array, reused
	stats    Stats
}

// draw is what the renderer keeps per item to draw it: where its mesh
// is (valid until the next Flush or Sweep) and its texture's handle.
type draw struct {
	mesh       mesh.Handle
	texture    bindless.Handle
	vbuf, ibuf *wgpu.Buffer
	baseVertex uint32
	firstIndex uint32
	indexCount uint32
	moved      int // Stats.Frames+1 of the Update that last rebuilt it for a move
}

// Stats counts what a Renderer did.
type Stats struct {
	Frames       int // Updates
	Added        int // items streamed in
	Removed      int // items streamed out
	Rebuilt      int // draw records rebuilt because their mesh moved or its slab grew
	PageRebuilds int // page bind groups built (bindless Version changes)
	Mesh         mesh.Stats
	Bindless     bindless.Stats
	Ring         ring.BufferStats
	Drawn        int // draws of the last Render
}

// NewRenderer returns a renderer of a new Scene from seed, drawing to
// targets of format. dev is gpumem's device on the renderer's own WebGPU
// device (webgpu.Wrap).
func NewRenderer(dev *webgpu.Device, format wgpu.TextureFormat, seed uint64) (_ *Renderer, err error) {
	wd, queue := dev.Raw()
	r := &Renderer{dev: dev, wd: wd, queue: queue, scene: New(seed),
		draws: map[*Item]*draw{}, byHandle: map[mesh.Handle]*draw{}}
	defer func() {
		if err != nil {
			r.Release()
		}
	}()
	// Mesh uploads go through a staging belt: mapped chunks, reused once
	// the frame that filled them is done (EndFrame below).
	if r.belt, err = staging.New(dev, staging.Options{Label: "scene uploads", ChunkBytes: 1 << 20}); err != nil {
		return nil, err
	}
	if r.meshes, err = mesh.New(dev, mesh.Options{Label: "scene", MinSlabBytes: minSlabBytes, Belt: r.belt}); err != nil {
		return nil, err
	}
	if r.textures, err = bindless.New[int](dev, bindless.Options{Label: "scene/", LayersPerPage: LayersPerPage, MaxPages: MaxPages}); err != nil {
		return nil, err
	}
	// The ring holds a uniform and a storage array each frame, so its
	// offsets meet both alignments.
	lim := dev.Limits()
	if r.consts, err = ring.NewBuffer(dev, ring.BufferOptions{
		Label:     "scene constants",
		SizeBytes: 16 << 10,
		Grow:      true,
		Usage:     device.Uniform | device.Storage | device.CopyDst,
		Alignment: max(lim.UniformOffsetAlignment, lim.StorageOffsetAlignment),
	}); err != nil {
		return nil, err
	}
	if r.pipeline, err = NewPipeline(wd, format, bindlessWGSL()); err != nil {
		return nil, err
	}
	if r.sampler, err = NewSampler(wd); err != nil {
		return nil, err
	}
	return r, nil
}

// Scene returns the scene the renderer draws.
func (r *Renderer) Scene() *Scene { return r.scene }

// Update advances the scene by a frame and brings gpumem's managers along:
// meshes and textures of the items that left are given back, those of the
// items that came are added, the slabs are flushed and swept within a
// budget, and the draw data of every mesh that moved is rebuilt.
func (r *Renderer) Update() error {
	added, removed := r.scene.Step()
	for _, it := range removed {
		d := r.draws[it]
		if err := r.meshes.Remove(d.mesh); err != nil {
			return err
		}
		if it.Pixels != nil {
			if err := r.textures.Unregister(it.ID); err != nil {
				return err
			}
		}
		delete(r.draws, it)
		delete(r.byHandle, d.mesh)
	}
	for _, it := range added {
		h, err := r.meshes.Add(it.Mesh)
		if err != nil {
			return err
		}
		d := &draw{mesh: h, texture: r.textures.White()}
		if it.Pixels != nil {
			if d.texture, err = r.textures.Register(it.ID, TextureKey, it.Pixels); err != nil {
				return err
			}
		}
		r.draws[it], r.byHandle[h] = d, d
		r.fresh = append(r.fresh, d)
	}
	// Place and upload this frame's meshes (each slab grows at most once),
	// then compact a little.
	if err := r.meshes.Flush(); err != nil {
		return err
	}
	if err := r.meshes.Sweep(sweepLimits); err != nil {
		return err
	}
	// Draw data: new meshes have none yet; moved meshes have stale
	// offsets; a replaced slab buffer (growth, shrink) is a new buffer
	// under every mesh in it.
	r.changes = r.meshes.Changes(r.changes[:0])
	all := false
	for _, c := range r.changes {
		all = all || c.Kind == memory.Replaced || c.Kind == memory.Overflowed
	}
	if all {
		for _, d := range r.draws {
			if err := r.refresh(d); err != nil {
				return err
			}
		}
		r.stats.Rebuilt += len(r.draws) - len(r.fresh)
	} else {
		for _, c := range r.changes {
			// A mesh moves in two arrays: rebuild it once.
			if d := r.byHandle[mesh.HandleOf(c)]; c.Kind == memory.Moved && d != nil && d.moved != r.stats.Frames+1 {
				d.moved = r.stats.Frames + 1
				if err := r.refresh(d); err != nil {
					return err
				}
				r.stats.Rebuilt++
			}
		}
		for _, d := range r.fresh {
			if err := r.refresh(d); err != nil {
				return err
			}
		}
	}
	r.fresh = r.fresh[:0]
	r.stats.Frames++
	r.stats.Added += len(added)
	r.stats.Removed += len(removed)
	return nil
}

// refresh rebuilds d's draw data from where its mesh is now.
func (r *Renderer) refresh(d *draw) error {
	v, i, err := r.meshes.Slices(d.mesh)
	if err != nil {
		return err
	}
	if d.vbuf, err = r.dev.RawBuffer(v.Buffer); err != nil {
		return err
	}
	if d.ibuf, err = r.dev.RawBuffer(i.Buffer); err != nil {
		return err
	}
	d.baseVertex, d.firstIndex, d.indexCount = v.StartElem, i.StartElem, i.Len()
	return nil
}

// Render draws the scene as the last Update left it into view, a target
// of width x height pixels, and submits it.
func (r *Renderer) Render(view *wgpu.TextureView, width, height uint32) error {
	items := r.scene.Items()

	// Per-frame constants, through the ring.
	frame, err := r.consts.Write(FrameConstants(r.scene.Frame(), width, height))
	if err != nil {
		return err
	}
	r.table = r.table[:0]
	for _, it := range items {
		r.table = AppendDraw(r.table, it, uint32(r.draws[it].texture))
	}
	if len(r.table) == 0 {
		r.table = AppendDraw(r.table, &Item{}, 0) // a binding is never empty
	}
	table, err := r.consts.Write(r.table)
	if err != nil {
		return err
	}
	constants, err := r.constantsGroup(frame, table)
	if err != nil {
		return err
	}
	defer constants.Release()
	if r.pages == nil || r.pagesVersion != r.textures.Version() {
		if err := r.buildPages(); err != nil {
			return err
		}
	}

	// gpumem's uploads, growth copies and sweep moves reach the queue
	// before the command buffer that draws from them.
	if err := r.dev.Submit(); err != nil {
		return err
	}
	enc, err := r.wd.TryCreateCommandEncoder(&wgpu.CommandEncoderDescriptor{Label: "scene"})
	if err != nil {
		return err
	}
	defer enc.Release()
	pass := enc.BeginRenderPass(&wgpu.RenderPassDescriptor{ColorAttachments: []wgpu.RenderPassColorAttachment{{
		View: view, LoadOp: wgpu.LoadOpClear, StoreOp: wgpu.StoreOpStore, ClearValue: ClearColor,
	}}})
	pass.SetPipeline(r.pipeline)
	pass.SetBindGroup(0, constants, nil)
	pass.SetBindGroup(1, r.pages, nil)
	var vbuf, ibuf *wgpu.Buffer
	for k, it := range items {
		d := r.draws[it]
		if d.vbuf != vbuf {
			vbuf = d.vbuf
			pass.SetVertexBuffer(0, vbuf, 0, wgpu.WholeSize)
		}
		if d.ibuf != ibuf {
			ibuf = d.ibuf
			pass.SetIndexBuffer(ibuf, wgpu.IndexFormatUint16, 0, wgpu.WholeSize)
		}
		// The item's Draw is entry k of the table: its first instance.
		pass.DrawIndexed(d.indexCount, 1, d.firstIndex, int32(d.baseVertex), uint32(k))
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

	// The fence of this submit ends the ring's and the belt's frame: its
	// constants and staging chunks are reused once the GPU has finished it.
	fence, err := r.dev.Fence()
	if err != nil {
		return err
	}
	r.stats.Drawn = len(items)
	if err := r.belt.EndFrame(fence); err != nil {
		return err
	}
	return r.consts.EndFrame(fence)
}

// constantsGroup binds this frame's Frame and Draw array where the ring
// put them.
func (r *Renderer) constantsGroup(frame, table ring.Slice) (*wgpu.BindGroup, error) {
	fb, err := r.dev.RawBuffer(frame.Buffer)
	if err != nil {
		return nil, err
	}
	tb, err := r.dev.RawBuffer(table.Buffer)
	if err != nil {
		return nil, err
	}
	return r.wd.TryCreateBindGroup(&wgpu.BindGroupDescriptor{
		Label:  "scene constants",
		Layout: r.pipeline.GetBindGroupLayout(0),
		Entries: []wgpu.BindGroupEntry{
			{Binding: 0, Buffer: fb, Offset: frame.OffsetBytes, Size: frame.SizeBytes},
			{Binding: 1, Buffer: tb, Offset: table.OffsetBytes, Size: table.SizeBytes},
		},
	})
}

// buildPages binds a 2D-array view of every bindless page, page i at
// binding i+1, and page 0 again in the slots past the last page and in
// those of vacant pages (nil in Pages: Shrink released their textures, and
// no handle names them).
func (r *Renderer) buildPages() error {
	r.releasePages()
	pages := r.textures.Pages()
	if len(pages) > MaxPages {
		return fmt.Errorf("scene: %d bindless pages, the shader binds %d", len(pages), MaxPages)
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
		v, err := raw.TryCreateView(&wgpu.TextureViewDescriptor{
			Dimension:       wgpu.TextureViewDimension2DArray,
			MipLevelCount:   p.Desc().Mips,
			ArrayLayerCount: p.Desc().Layers,
			Aspect:          wgpu.TextureAspectAll,
		})
		if err != nil {
			return err
		}
		r.pageViews = append(r.pageViews, v)
	}
	entries := []wgpu.BindGroupEntry{{Binding: 0, Sampler: r.sampler}}
	for i := range MaxPages {
		v := r.pageViews[0]
		if i < len(r.pageViews) && r.pageViews[i] != nil {
			v = r.pageViews[i]
		}
		entries = append(entries, wgpu.BindGroupEntry{Binding: uint32(i + 1), TextureView: v})
	}
	g, err := r.wd.TryCreateBindGroup(&wgpu.BindGroupDescriptor{Label: "bindless pages", Layout: r.pipeline.GetBindGroupLayout(1), Entries: entries})
	if err != nil {
		return err
	}
	r.pages, r.pagesVersion = g, r.textures.Version()
	r.stats.PageRebuilds++
	return nil
}

func (r *Renderer) releasePages() {
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

// Stats returns what the renderer and its managers did so far.
func (r *Renderer) Stats() Stats {
	s := r.stats
	s.Mesh, s.Bindless, s.Ring = r.meshes.Stats(), r.textures.Stats(), r.consts.Stats()
	return s
}

// Release releases the renderer's objects and gpumem's managers; the
// device stays the caller's. Idempotent.
func (r *Renderer) Release() {
	r.releasePages()
	if r.sampler != nil {
		r.sampler.Release()
		r.sampler = nil
	}
	if r.pipeline != nil {
		r.pipeline.Release()
		r.pipeline = nil
	}
	r.consts.Release()
	r.textures.Release()
	r.meshes.Release()
	r.belt.Release()
}
