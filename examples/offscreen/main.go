//go:build !js

// Command offscreen is a small WebGPU renderer that owns its device and
// lets gpumem manage the memory on it, rendering to a texture and writing
// the last frame as a PNG.
//
// The program creates its instance, adapter and device through
// github.com/oliverbestmann/webgpu and hands the device to gpumem with
// webgpu.Wrap. The scene and its renderer are package scene
// (github.com/gpumem/gpumem/scene): meshes stream in and out of gpumem's
// mesh slabs, textures of its bindless pages, constants go through its
// ring, every frame sweeps, and gpumem's draw table keeps every mesh's
// draw arguments where the sweep put it, drawn as one multi-draw per slab
// group. examples/window draws the same scene in a window.
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

	"github.com/gpumem/gpumem/device"
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
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		os.Remove(out)
		return err
	}
	fmt.Printf("%d frames: %d meshes and textures in, %d out, %d drawn in the last frame in %d %v draw calls; %d slab growths, %d ranges moved; wrote %s\n",
		st.Frames, st.Added, st.Removed, st.Drawn, st.DrawCalls, st.DrawMode, st.Mesh.Growths, st.Mesh.Moves, out)
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
	// Rendering offscreen, the program has no display to pick a GPU for.
	// Mesa's device-select Vulkan layer would ask Wayland and X11 which
	// GPU drives the screen, and without a login session (no
	// XDG_RUNTIME_DIR) libwayland prints an error at each adapter
	// request; WebGPU picks among all adapters without the layer.
	if _, set := os.LookupEnv("NODEVICE_SELECT"); !set {
		os.Setenv("NODEVICE_SELECT", "1")
	}
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

// render renders cfg.frames frames of the scene into a texture on wd and
// returns the last one.
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
	// The target is a texture of gpumem's, so that gpumem reads it back.
	target, err := dev.CreateTexture(device.TextureDesc{
		Label: "offscreen target", Format: device.RGBA8Unorm, Width: cfg.width, Height: cfg.height,
		Layers: 1, Mips: 1, Samples: 1, Usage: device.TextureRenderAttachment | device.TextureCopySrc,
	})
	if err != nil {
		return nil, scene.Stats{}, err
	}
	defer target.Release()
	rt, err := dev.RawTexture(target)
	if err != nil {
		return nil, scene.Stats{}, err
	}
	view, err := rt.TryCreateView(nil)
	if err != nil {
		return nil, scene.Stats{}, err
	}
	defer view.Release()

	for frame := 1; frame <= cfg.frames; frame++ {
		if err := r.Update(); err != nil {
			return nil, scene.Stats{}, fmt.Errorf("frame %d: %w", frame, err)
		}
		if err := r.Render(view, cfg.width, cfg.height); err != nil {
			return nil, scene.Stats{}, fmt.Errorf("frame %d: %w", frame, err)
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
	img := image.NewRGBA(image.Rect(0, 0, int(cfg.width), int(cfg.height)))
	if err := dev.ReadTexture(target, 0, 0, img.Pix); err != nil {
		return nil, scene.Stats{}, err
	}
	return img, r.Stats(), nil
}
