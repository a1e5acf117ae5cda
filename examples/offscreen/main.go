// Command offscreen is a small WebGPU renderer that owns its device and
// lets gpumem manage the memory on it, rendering to a texture and writing
// the last frame as a PNG.
//
// It shows the whole of "bring your own device": the program creates its
// instance, adapter and device through github.com/oliverbestmann/webgpu
// and hands the device to gpumem with webgpu.Wrap. Over its frames a few
// hundred meshes stream in and out of gpumem's mesh slabs (drawn with base
// vertex and first index), their textures in and out of its bindless pages
// (sampled by the handle each draw carries), the per-frame constants go
// through its ring, and every frame runs a budgeted sweep; gpumem's draw
// table keeps every mesh's draw arguments where the sweep put it, and
// each frame's draws go out as one multi-draw per slab group. The scene and the renderer are in
// package scene (github.com/gpumem/gpumem/scene); examples/window draws the same scene in a
// window.
//
//	go run ./examples/offscreen -frames 300 -size 512x512 -o offscreen.png
//
// It needs cgo and a WebGPU adapter: any Vulkan, Metal or DX12 GPU, or on
// Linux without one Mesa's software Vulkan driver (Debian: apt-get install
// mesa-vulkan-drivers).
package main

import (
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"strconv"
	"strings"

	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/scene"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// config is what the flags ask for.
type config struct {
	frames        int
	width, height uint32
	seed          uint64
}

func main() {
	var cfg config
	flag.IntVar(&cfg.frames, "frames", 300, "frames to render")
	size := flag.String("size", "512x512", "image size, WIDTHxHEIGHT pixels")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the scene")
	out := flag.String("o", "offscreen.png", "PNG file to write the last frame to")
	flag.Parse()
	err := cfg.parse(*size, flag.Args())
	if err == nil {
		err = run(cfg, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "offscreen:", err)
		os.Exit(1)
	}
}

// parse checks the flags and fills in the size.
func (c *config) parse(size string, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q (see -help)", args)
	}
	if c.frames < 1 {
		return fmt.Errorf("-frames %d: render at least one frame", c.frames)
	}
	w, h, ok := strings.Cut(size, "x")
	wi, errw := strconv.ParseUint(w, 10, 32)
	hi, errh := strconv.ParseUint(h, 10, 32)
	if !ok || errw != nil || errh != nil || wi == 0 || hi == 0 || wi > 8192 || hi > 8192 {
		return fmt.Errorf("-size %q: want WIDTHxHEIGHT, each 1 to 8192", size)
	}
	c.width, c.height = uint32(wi), uint32(hi)
	return nil
}

func run(cfg config, out string) error {
	f, err := os.Create(out) // before the frames: a bad path fails at once
	if err != nil {
		return err
	}
	defer f.Close()
	g, err := openGPU()
	if err != nil {
		return err
	}
	defer g.release()
	img, st, err := render(g.device, cfg)
	if err == nil {
		err = png.Encode(f, img)
	}
	if err != nil {
		os.Remove(out)
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("%d frames: %d meshes and textures in, %d out, %d drawn in the last frame in %d %v draw calls\n",
		st.Frames, st.Added, st.Removed, st.Drawn, st.DrawCalls, st.DrawMode)
	fmt.Printf("mesh slabs: %d, %d growths, %d ranges moved, %d draw records rebuilt\n",
		st.Mesh.Slabs, st.Mesh.Growths, st.Mesh.Moves, st.Rebuilt)
	fmt.Printf("bindless: %d pages, %d textures, %d free layers; ring: %d KiB, %d growths\n",
		st.Bindless.Pages, st.Bindless.Registered, st.Bindless.FreeLayers, st.Ring.SizeBytes>>10, st.Ring.Growths)
	fmt.Printf("wrote %s (%dx%d)\n", out, cfg.width, cfg.height)
	return nil
}

// errNoAdapter is returned by openGPU when WebGPU finds no adapter.
var errNoAdapter = errors.New("no WebGPU adapter (on Linux without a GPU: apt-get install mesa-vulkan-drivers)")

// gpu is the program's own WebGPU instance, adapter and device: gpumem
// never sees the first two, and never releases the device.
type gpu struct {
	instance *wgpu.Instance
	adapter  *wgpu.Adapter
	device   *wgpu.Device
}

func openGPU() (*gpu, error) {
	g := &gpu{instance: wgpu.CreateInstance(nil)}
	ad, err := g.instance.RequestAdapter(&wgpu.RequestAdapterOptions{})
	if err != nil || ad == nil {
		g.release()
		return nil, fmt.Errorf("%w: %v", errNoAdapter, err)
	}
	g.adapter = ad
	// Indirect first instance lets gpumem's draw list draw each slab
	// group with one multi-draw; without it the renderer draws an item
	// at a time.
	var features []wgpu.FeatureName
	if ad.HasFeature(wgpu.FeatureNameIndirectFirstInstance) {
		features = append(features, wgpu.FeatureNameIndirectFirstInstance)
	}
	if g.device, err = ad.RequestDevice(&wgpu.DeviceDescriptor{RequiredFeatures: features}); err != nil {
		g.release()
		return nil, fmt.Errorf("request a device: %w", err)
	}
	return g, nil
}

func (g *gpu) release() {
	if g.device != nil {
		g.device.Release()
	}
	if g.adapter != nil {
		g.adapter.Release()
	}
	g.instance.Release()
}

// render renders cfg.frames frames of the scene into a texture of its
// own on wd and returns the last one.
func render(wd *wgpu.Device, cfg config) (*image.RGBA, scene.Stats, error) {
	dev, err := webgpu.Wrap(wd)
	if err != nil {
		return nil, scene.Stats{}, err
	}
	defer dev.Release() // gpumem's objects only: wd stays ours
	r, err := scene.NewRenderer(dev, wgpu.TextureFormatRGBA8Unorm, cfg.seed)
	if err != nil {
		return nil, scene.Stats{}, err
	}
	defer r.Release()

	target, err := wd.TryCreateTexture(&wgpu.TextureDescriptor{
		Label:         "offscreen target",
		Size:          wgpu.Extent3D{Width: cfg.width, Height: cfg.height, DepthOrArrayLayers: 1},
		MipLevelCount: 1, SampleCount: 1, Dimension: wgpu.TextureDimension2D,
		Format: wgpu.TextureFormatRGBA8Unorm,
		Usage:  wgpu.TextureUsageRenderAttachment | wgpu.TextureUsageCopySrc,
	})
	if err != nil {
		return nil, scene.Stats{}, err
	}
	defer target.Release()
	view, err := target.TryCreateView(nil)
	if err != nil {
		return nil, scene.Stats{}, err
	}
	defer view.Release()

	for frame := range cfg.frames {
		if err := r.Update(); err != nil {
			return nil, scene.Stats{}, fmt.Errorf("frame %d: %w", frame+1, err)
		}
		if err := r.Render(view, cfg.width, cfg.height); err != nil {
			return nil, scene.Stats{}, fmt.Errorf("frame %d: %w", frame+1, err)
		}
	}
	// Every mesh read back from where gpumem moved it: no byte lost; and
	// every draw's arguments read back: where its mesh is.
	if err := r.CheckMeshes(); err != nil {
		return nil, scene.Stats{}, err
	}
	if err := r.CheckDraws(); err != nil {
		return nil, scene.Stats{}, err
	}
	img, err := readPixels(wd, target, cfg.width, cfg.height)
	return img, r.Stats(), err
}

// readPixels copies tex, an RGBA8 texture of width x height, to a
// mappable buffer and returns its pixels. It waits for the GPU.
func readPixels(wd *wgpu.Device, tex *wgpu.Texture, width, height uint32) (*image.RGBA, error) {
	row := (width*4 + 255) &^ 255 // texture-to-buffer rows are 256-byte aligned
	size := uint64(row) * uint64(height)
	buf, err := wd.TryCreateBuffer(&wgpu.BufferDescriptor{Label: "read back", Size: size, Usage: wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst})
	if err != nil {
		return nil, err
	}
	defer buf.Release()
	enc, err := wd.TryCreateCommandEncoder(nil)
	if err != nil {
		return nil, err
	}
	defer enc.Release()
	if err := enc.TryCopyTextureToBuffer(tex.AsImageCopy(), &wgpu.TexelCopyBufferInfo{
		Buffer: buf,
		Layout: wgpu.TexelCopyBufferLayout{BytesPerRow: row, RowsPerImage: height},
	}, &wgpu.Extent3D{Width: width, Height: height, DepthOrArrayLayers: 1}); err != nil {
		return nil, err
	}
	cb, err := enc.TryFinish(nil)
	if err != nil {
		return nil, err
	}
	q := wd.GetQueue()
	defer q.Release()
	q.Submit(cb)
	cb.Release()
	status := wgpu.MapAsyncStatus(0)
	if err := buf.TryMapAsync(wgpu.MapModeRead, 0, size, func(s wgpu.MapAsyncStatus) { status = s }); err != nil {
		return nil, err
	}
	wd.Poll(true, nil)
	if status != wgpu.MapAsyncStatusSuccess {
		return nil, fmt.Errorf("map the read-back buffer: status %v", status)
	}
	img := image.NewRGBA(image.Rect(0, 0, int(width), int(height)))
	data := buf.GetMappedRange(0, uint(size))
	for y := range int(height) {
		copy(img.Pix[y*img.Stride:(y+1)*img.Stride], data[y*int(row):])
	}
	return img, buf.TryUnmap()
}
