package scene

import (
	"fmt"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/draw"
	"github.com/gpumem/gpumem/draw/multidraw"
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
//     the scene fills), their draw arguments in a draw.Table kept in step
//     with the slabs' changes, and drawn each frame from a draw.List: one
//     MultiDrawIndexedIndirect per slab group where the device has
//     indirect first instance, else a DrawIndexed per item (package
//     draw/multidraw; the item's index in the Draw array is the draw's
//     first instance);
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
	table    *draw.Table // the meshes' draw arguments
	list     *draw.List  // the frame's draws, reused
	drawer   *multidraw.Drawer
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

	draws    map[*Item]*itemDraw
	fresh    []*itemDraw     // added this frame: tracked after the Flush
	changes  []memory.Change // the meshes' Changes, reused
	drawData []byte          // the Draw array, reused
	stats    Stats
}

// itemDraw is what the renderer keeps per item to draw it: its mesh, the
// mesh's record in the draw table, and its texture's handle.
type itemDraw struct {
	mesh    mesh.Handle
	id      draw.ID
	texture bindless.Handle
}

// Stats counts what a Renderer did.
type Stats struct {
	Frames       int // Updates
	Added        int // items streamed in
	Removed      int // items streamed out
	Rebuilt      int // draw records refreshed because their mesh moved (draw.Stats.Moved)
	PageRebuilds int // page bind groups built (bindless Version changes)
	Mesh         mesh.Stats
	Bindless     bindless.Stats
	Ring         ring.BufferStats
	Drawn        int // items drawn by the last Render
	DrawCalls    int // draw calls of the last Render: one a slab group with multi-draw
	DrawMode     multidraw.Mode
}

// NewRenderer returns a renderer of a new Scene from seed, drawing to
// targets of format. dev is gpumem's device on the renderer's own WebGPU
// device (webgpu.Wrap).
func NewRenderer(dev *webgpu.Device, format wgpu.TextureFormat, seed uint64) (_ *Renderer, err error) {
	wd, queue := dev.Raw()
	r := &Renderer{dev: dev, wd: wd, queue: queue, scene: New(seed),
		draws: map[*Item]*itemDraw{}}
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
	if r.table, err = draw.NewTable(dev, r.meshes, "scene"); err != nil {
		return nil, err
	}
	if r.list, err = draw.NewList(r.table, Grid*Grid); err != nil {
		return nil, err
	}
	// Multi-draw where the device has indirect first instance (the
	// caller requests it), a DrawIndexed per item where not.
	if r.drawer, err = multidraw.New(dev, r.table, multidraw.Best(wd)); err != nil {
		return nil, err
	}
	r.stats.DrawMode = r.drawer.Mode()
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
// budget, and the draw table is brought up to date with what moved.
func (r *Renderer) Update() error {
	added, removed := r.scene.Step()
	for _, it := range removed {
		d := r.draws[it]
		if err := r.table.Remove(d.id); err != nil {
			return err
		}
		if err := r.meshes.Remove(d.mesh); err != nil {
			return err
		}
		if it.Pixels != nil {
			if err := r.textures.Unregister(it.ID); err != nil {
				return err
			}
		}
		delete(r.draws, it)
	}
	for _, it := range added {
		h, err := r.meshes.Add(it.Mesh)
		if err != nil {
			return err
		}
		d := &itemDraw{mesh: h, texture: r.textures.White()}
		if it.Pixels != nil {
			if d.texture, err = r.textures.Register(it.ID, TextureKey, it.Pixels); err != nil {
				return err
			}
		}
		r.draws[it] = d
		r.fresh = append(r.fresh, d)
	}
	// Place and upload this frame's meshes (each slab grows at most once),
	// then compact a little.
	if err := r.meshes.Flush(); err != nil {
		return err
	}
	for _, d := range r.fresh {
		var err error
		if d.id, err = r.table.Track(d.mesh, mesh.Uint16); err != nil {
			return err
		}
	}
	if err := r.meshes.Sweep(sweepLimits); err != nil {
		return err
	}
	// The draw table takes what moved: records of meshes a sweep moved
	// are patched on the GPU, new ones written; a replaced slab buffer
	// is a new buffer under its group.
	moved := r.table.Stats().Moved
	r.changes = r.meshes.Changes(r.changes[:0])
	if err := r.table.Apply(r.changes); err != nil {
		return err
	}
	r.stats.Rebuilt += int(r.table.Stats().Moved - moved)
	r.fresh = r.fresh[:0]
	r.stats.Frames++
	r.stats.Added += len(added)
	r.stats.Removed += len(removed)
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
	r.drawData = r.drawData[:0]
	r.list.Reset()
	for k, it := range items {
		d := r.draws[it]
		r.drawData = AppendDraw(r.drawData, it, uint32(d.texture))
		// The item's Draw is entry k of the array: its first instance.
		if err := r.list.Add(d.id, 1, uint32(k)); err != nil {
			return err
		}
	}
	if len(r.drawData) == 0 {
		r.drawData = AppendDraw(r.drawData, &Item{}, 0) // a binding is never empty
	}
	table, err := r.consts.Write(r.drawData)
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
	// The list's arguments, expanded on the GPU before the pass.
	if _, err := r.drawer.Prepare(enc, r.list); err != nil {
		return err
	}
	pass := enc.BeginRenderPass(&wgpu.RenderPassDescriptor{ColorAttachments: []wgpu.RenderPassColorAttachment{{
		View: view, LoadOp: wgpu.LoadOpClear, StoreOp: wgpu.StoreOpStore, ClearValue: ClearColor,
	}}})
	pass.SetPipeline(r.pipeline)
	pass.SetBindGroup(0, constants, nil)
	pass.SetBindGroup(1, r.pages, nil)
	calls, err := r.drawer.Draw(pass)
	if err != nil {
		pass.TryEnd()
		return err
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
	r.stats.Drawn, r.stats.DrawCalls = len(items), calls
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

// CheckDraws verifies the draw table: every item's draw arguments, read
// back from the device, are where its mesh is (draw.Table.Check). It
// waits for the GPU.
func (r *Renderer) CheckDraws() error { return r.table.Check() }

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
	r.drawer.Release()
	r.table.Release()
	r.meshes.Release()
	r.belt.Release()
}
