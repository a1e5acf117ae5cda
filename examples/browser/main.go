//go:build js

// Command browser is gpumem in a web page: the examples' scene streams
// through gpumem on the browser's WebGPU, rendered every frame, while
// gpumem's memory map (inspect.MapSVG of the renderer's managers) redraws
// beside it, with the frame copied into a 2D canvas at each redraw.
// Meshes and textures stream in and out of the mesh slabs and bindless
// pages, every frame sweeps within a budget, and at the end every live
// mesh is read back from where gpumem moved it and compared with its data.
//
// Build it, serve it and print its URL with one command, from gpumem's
// module (the build goes to a temporary folder):
//
//	go run ./cmd/gpumem serve   # then open http://127.0.0.1:8080/
//
// The page's query sets the flags (?frames=60&size=256); at the end it
// posts its status line and the canvas to the server it came from, which
// gpumem serve prints (and its test checks).
// The browser needs WebGPU (Chromium: on Linux without a GPU, start it with
// --enable-unsafe-webgpu; it runs on SwiftShader). The page's #status line
// says how far it got and ends "every mesh byte intact" or with the error;
// the program exits 0 or 1 accordingly, so internal/wasmbrowser runs it as
// a test (main_test.go, in CI).
package main

import (
	"flag"
	"fmt"
	"os"
	"syscall/js"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/scene"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// config is what the flags (the page's query has none: the defaults) ask
// for.
type config struct {
	frames   int    // frames to stream and draw
	mapEvery int    // redraw the memory map every this many frames
	size     uint32 // canvas width and height in pixels
	seed     uint64
}

func main() {
	var cfg config
	flag.IntVar(&cfg.frames, "frames", 300, "frames to stream and draw")
	flag.IntVar(&cfg.mapEvery, "map-every", 10, "redraw the memory map every N frames")
	size := flag.Uint("size", 512, "canvas width and height, pixels")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the scene")
	flag.Parse()
	cfg.size = uint32(*size)
	res, err := run(cfg)
	if err != nil {
		setStatus("error: " + err.Error())
		fmt.Fprintln(os.Stderr, "browser:", err)
		os.Exit(1)
	}
	fmt.Println(res)
}

// result is what a run did.
type result struct {
	frames     int
	mapDraws   int // memory maps drawn
	mapChanges int // maps that differed from the one before
	stats      scene.Stats
}

func (r result) String() string {
	return fmt.Sprintf("%d frames: %d meshes and textures in, %d out; %d ranges moved, %d growths; memory map drawn %d times, changed %d times; every mesh byte intact",
		r.frames, r.stats.Added, r.stats.Removed, r.stats.Mesh.Moves, r.stats.Mesh.Growths, r.mapDraws, r.mapChanges)
}

// run streams cfg.frames frames of the scene on the page's canvas.
func run(cfg config) (result, error) {
	var res result
	if cfg.frames < 1 || cfg.mapEvery < 1 || cfg.size < 1 || cfg.size > 4096 {
		return res, fmt.Errorf("bad flags: %d frames, a map every %d, size %d", cfg.frames, cfg.mapEvery, cfg.size)
	}
	canvas := element("scene", "canvas")
	canvas.Set("width", cfg.size)
	canvas.Set("height", cfg.size)
	mapDiv := element("map", "div")

	instance := wgpu.CreateInstance(nil)
	if instance == nil {
		return res, fmt.Errorf("this browser has no WebGPU (navigator.gpu)")
	}
	adapter, err := instance.RequestAdapter(&wgpu.RequestAdapterOptions{})
	if err != nil {
		return res, err
	}
	wd, err := adapter.RequestDevice(nil)
	if err != nil {
		return res, err
	}
	dev, err := webgpu.Wrap(wd)
	if err != nil {
		return res, err
	}
	defer dev.Release()
	// The scene renders into a texture of gpumem's, and each time the map
	// redraws the frame is read back into the 2D canvas: headless Chromium
	// on SwiftShader cannot present a WebGPU canvas (its GPU process has
	// no shared image backing for the swap chain and drops the device).
	const format = wgpu.TextureFormatRGBA8Unorm
	target, err := dev.CreateTexture(device.TextureDesc{
		Label: "browser target", Format: device.RGBA8Unorm, Width: cfg.size, Height: cfg.size,
		Layers: 1, Mips: 1, Samples: 1, Usage: device.TextureRenderAttachment | device.TextureCopySrc,
	})
	if err != nil {
		return res, err
	}
	defer target.Release()
	rt, err := dev.RawTexture(target)
	if err != nil {
		return res, err
	}
	view, err := rt.TryCreateView(nil)
	if err != nil {
		return res, err
	}
	defer view.Release()
	pixels := make([]byte, 4*int(cfg.size)*int(cfg.size))
	ctx2d := canvas.Call("getContext", "2d")
	image := ctx2d.Call("createImageData", cfg.size, cfg.size)
	r, err := scene.NewRenderer(dev, format, cfg.seed)
	if err != nil {
		return res, err
	}
	defer r.Release()

	var prev *inspect.Dump
	var prevSVG string
	for frame := 1; frame <= cfg.frames; frame++ {
		if err := r.Update(); err != nil {
			return res, fmt.Errorf("frame %d: %w", frame, err)
		}
		if err := r.Render(view, cfg.size, cfg.size); err != nil {
			return res, fmt.Errorf("frame %d: %w", frame, err)
		}
		if frame%cfg.mapEvery == 0 || frame == cfg.frames {
			d := inspect.Snapshot("the browser's WebGPU", fmt.Sprintf("frame %d", frame), r.Memory()...)
			if prev != nil {
				d.MarkMoved(prev)
			}
			svg, err := inspect.MapSVG(&d)
			if err != nil {
				return res, fmt.Errorf("frame %d: memory map: %w", frame, err)
			}
			mapDiv.Set("innerHTML", string(svg))
			res.mapDraws++
			if string(svg) != prevSVG && prevSVG != "" {
				res.mapChanges++
			}
			prev, prevSVG = &d, string(svg)
			if err := dev.ReadTexture(target, 0, 0, pixels); err != nil {
				return res, fmt.Errorf("frame %d: read the frame back: %w", frame, err)
			}
			js.CopyBytesToJS(image.Get("data"), pixels)
			ctx2d.Call("putImageData", image, 0, 0)
		}
		res.frames = frame
		setStatus(fmt.Sprintf("frame %d of %d", frame, cfg.frames))
		nextFrame() // the browser shows the page when the task ends
	}
	res.stats = r.Stats()
	if err := r.CheckMeshes(); err != nil {
		return res, err
	}
	if err := dev.Wait(); err != nil {
		return res, err
	}
	setStatus(res.String())
	return res, nil
}

// element returns the page's element of id, making one of tag at the end
// of the body where there is none (as on internal/wasmbrowser's page).
func element(id, tag string) js.Value {
	doc := js.Global().Get("document")
	e := doc.Call("getElementById", id)
	if !e.Truthy() {
		e = doc.Call("createElement", tag)
		e.Set("id", id)
		doc.Get("body").Call("appendChild", e)
	}
	return e
}

// setStatus shows s in the page's #status line.
func setStatus(s string) { element("status", "p").Set("textContent", s) }

// frameDone receives once the browser runs the next animation frame.
var frameDone = make(chan struct{}, 1)

var onFrame = js.FuncOf(func(js.Value, []js.Value) any {
	select {
	case frameDone <- struct{}{}:
	default:
	}
	return nil
})

// nextFrame blocks until the browser's next animation frame: the event
// loop runs meanwhile, presents the canvas and settles gpumem's promises.
func nextFrame() {
	js.Global().Call("requestAnimationFrame", onFrame)
	<-frameDone
}
