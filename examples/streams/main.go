//go:build !js

// Command streams is an example renderer of the kind that keeps each
// vertex attribute in a buffer of its own (position, normal, texture
// coordinate, colour) and draws each mesh with DrawIndexed, as Cogent
// Core's phong renderer does, with gpumem managing its memory.
//
// Loading goroutines, each with its own mesh.Loader, add, reshape and
// remove meshes (boxes, grids, spheres) whose four attribute arrays go to
// the mesh allocator as separate streams (mesh.Mesh.Streams): placed in
// lockstep stream slabs, so one base vertex draws all four. The render
// loop flushes, sweeps within a budget (now and then compacts and shrinks),
// takes the allocator's Changes once a frame and rebuilds or rebinds only
// the draws they name. Each mesh samples a texture of its own size (labels
// from 64x16 to 1024x64, squares) that bindless.Registry.RegisterSized
// keeps in power-of-two size-class pages; the shader scales the mesh's
// texture coordinates by the Region's Scale. Draws are sorted by slab and
// bind the four stream buffers and the index buffer only when the slab
// changes.
//
//	go run ./examples/streams -frames 300 -size 640x640 -o streams.png
//
// Its test draws the final scene again from buffers and textures of its
// own and checks the images are equal byte for byte. They can be: the
// draw of a mesh reads the same vertices and indices from its slab ranges
// as from its own buffers, and both shaders load one texel by integer
// coordinates: floor(uv * size), clamped to the image, where size is the
// image's size in texels (in a size-class layer, the layer's size times
// the Scale: a power of two over a power of two, exact in floating
// point). The image fills the layer's top-left corner, so the same
// coordinates name the same texel on any GPU; a sampler would not promise
// that, since samplers may round coordinates in fixed point.
//
// It needs cgo and a WebGPU adapter: any Vulkan, Metal or DX12 GPU, or on
// Linux without one Mesa's software Vulkan driver (Debian: apt-get install
// mesa-vulkan-drivers).
package main

import (
	"flag"
	"fmt"
	"image"
	"os"
	"slices"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/bindless"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/mesh"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// config is what the flags ask for.
type config struct {
	frames, loaders int
	width, height   uint32
	seed            uint64
}

func main() {
	var cfg config
	flag.IntVar(&cfg.frames, "frames", 300, "frames to render")
	flag.IntVar(&cfg.loaders, "loaders", 4, "loading goroutines")
	size := flag.String("size", "640x640", "image size, WIDTHxHEIGHT pixels")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the loaders' meshes and textures")
	out := flag.String("o", "streams.png", "PNG file to write the last frame to")
	flag.Parse()
	err := cfg.parse(*size, flag.Args())
	if err == nil {
		err = run(cfg, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "streams:", err)
		os.Exit(1)
	}
}

// The memory settings: small slabs, so that they grow (Replaced), fill
// (more slabs to sort draws by) and move; a sweep budget per frame; a
// full compaction and a shrink now and then.
var (
	meshOptions = mesh.Options{Label: "streams", MinSlabBytes: 16 << 10, MaxSlabBytes: 256 << 10}
	sweepLimits = arena.SweepLimits{Moves: 16, Bytes: 64 << 10}
)

const compactEvery = 50 // frames

// result is what a run leaves: the last frame and the scene it shows.
type result struct {
	image *image.RGBA
	items []*item // the live meshes, by slot
	stats Stats
	// slabBytes is, per stream, what the mesh slabs hold for the live
	// meshes (whole slots), ownBytes what their arrays take.
	slabBytes, ownBytes [4]uint64
	// vertexSlabs counts the vertex slabs' buffers (one per stream),
	// indexSlabs the index slabs.
	vertexSlabs, indexSlabs int
}

// render runs cfg.frames frames of loading and drawing on wd.
func render(wd *wgpu.Device, cfg config) (*result, error) {
	dev, err := webgpu.Wrap(wd)
	if err != nil {
		return nil, err
	}
	defer dev.Release() // gpumem's objects only: wd stays ours
	meshes, err := mesh.New(dev, meshOptions)
	if err != nil {
		return nil, err
	}
	defer meshes.Release()
	textures, err := bindless.New[uint64](dev, bindless.Options{Label: "streams/", MaxPages: maxPages})
	if err != nil {
		return nil, err
	}
	defer textures.Release()
	r, err := newRenderer(dev, meshes, textures)
	if err != nil {
		return nil, err
	}
	defer r.release()
	t, err := newTargets(dev, cfg.width, cfg.height)
	if err != nil {
		return nil, err
	}
	defer t.release()
	ls := startLoaders(meshes, cfg.loaders, slots, cfg.seed)
	defer ls.stop()

	var events []event
	var changes []memory.Change
	frame := func(f int) error {
		// 1. What the loaders did last tick: their meshes are staged for
		// this Flush; their textures are registered here.
		var err error
		if f > 0 {
			if events, err = ls.collect(events[:0]); err != nil {
				return err
			}
		}
		for _, ev := range events {
			switch ev.op {
			case added:
				var h bindless.Handle
				if h, err = textures.RegisterSized(ev.texID, imageKey(ev.image), ev.image.pixels); err == nil {
					err = r.add(ev, h)
				}
			case modified:
				r.modify(ev)
			case removed:
				r.remove(ev) // no longer drawn: its texture may go
				err = textures.Unregister(ev.texID)
			}
			if err != nil {
				return err
			}
		}
		// 2. Place and upload everything staged, then compact a little,
		// and now and then all and give memory back.
		if err := meshes.Flush(); err != nil {
			return err
		}
		if err := meshes.Sweep(sweepLimits); err != nil {
			return err
		}
		switch f % compactEvery {
		case compactEvery / 2:
			err = meshes.Compact()
		case compactEvery - 1:
			_, err = meshes.Shrink()
			if err == nil {
				_, _, err = textures.Compact()
			}
		}
		if err != nil {
			return err
		}
		// 3. Rebuild and rebind only what moved, was replaced or released.
		changes = meshes.Changes(changes[:0])
		if err := r.apply(changes); err != nil {
			return err
		}
		changes = textures.Changes(changes[:0])
		r.applyTextures(changes)
		// 4. The loaders' next tick runs while this frame draws.
		if f+1 < cfg.frames {
			ls.tick()
		}
		return r.draw(f, t.colorView, t.depthView, cfg.width, cfg.height)
	}
	for f := range cfg.frames {
		if err := frame(f); err != nil {
			return nil, fmt.Errorf("frame %d: %w", f+1, err)
		}
	}
	ls.stop()

	res := &result{stats: r.Stats()}
	for _, it := range r.items {
		res.items = append(res.items, it)
		for i, s := range it.shape.streams {
			res.ownBytes[i] += uint64(len(s))
		}
	}
	slices.SortFunc(res.items, func(a, b *item) int { return a.slot - b.slot })
	res.slabBytes, res.vertexSlabs, res.indexSlabs = slabBytes(meshes.Memory())
	res.image, err = t.readPixels()
	return res, err
}
