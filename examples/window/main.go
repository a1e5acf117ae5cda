// Command window draws the scene of examples/offscreen in a window: a
// renderer that owns its WebGPU instance, surface, adapter, device and
// frame loop, with gpumem managing the memory on that device.
//
// The program opens a GLFW window, creates a surface for it and a device
// that can present to it, and hands the device to gpumem with
// webgpu.Wrap. Every frame a dozen meshes and textures stream out of and
// into gpumem's mesh slabs and bindless pages, the slabs are swept within
// a budget, the constants go through gpumem's ring, and the frame is
// drawn from the slabs (base vertex, first index) and the pages (the
// handle in each draw) into the surface's texture and presented. The
// scene and the renderer are in package scene
// (github.com/gpumem/gpumem/scene).
//
//	go run . -frames 300            # 300 frames, then exit
//	go run . -frames 300 -hold 10s  # then show the last frame 10 s more
//	go run . -check shot.png        # exit 1 if a screenshot looks blank
//
// It is a module of its own, so that gpumem's tests need no windowing
// headers. It needs cgo, a WebGPU adapter that can present (any Vulkan,
// Metal or DX12 GPU; on Linux without one, Mesa's lavapipe) and a display.
// On Debian, GLFW builds against
//
//	apt-get install libx11-dev libxrandr-dev libxinerama-dev libxcursor-dev \
//		libxi-dev libxxf86vm-dev libgl-dev libwayland-dev libxkbcommon-dev
//
// (with -tags x11, the X11 ones alone). examples/window/ci.sh runs it
// under Xvfb and checks a screenshot of the window.
package main

import (
	"errors"
	"flag"
	"fmt"
	"image/png"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/go-gl/glfw/v3.4/glfw"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/scene"
	"github.com/oliverbestmann/webgpu/wgpu"
	"github.com/oliverbestmann/webgpu/wgpuglfw"
)

// GLFW must be called from the main thread.
func init() { runtime.LockOSThread() }

// config is what the flags ask for.
type config struct {
	frames        int           // 0: until the window closes
	hold          time.Duration // after frames, the last frame stays this long
	width, height int
	seed          uint64
}

func main() {
	var cfg config
	flag.IntVar(&cfg.frames, "frames", 0, "frames to render, then exit (0: until the window is closed)")
	flag.DurationVar(&cfg.hold, "hold", 0, "after -frames, keep showing the last frame this long (for a screenshot)")
	size := flag.String("size", "640x480", "window size, WIDTHxHEIGHT pixels")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the scene")
	check := flag.String("check", "", "check that this PNG (a screenshot) shows the scene, not a blank window, and exit")
	flag.Parse()
	var err error
	switch {
	case *check != "":
		err = checkPNG(*check)
	default:
		if err = cfg.parse(*size, flag.Args()); err == nil {
			err = run(cfg)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "window:", err)
		os.Exit(1)
	}
}

// parse checks the flags and fills in the size.
func (c *config) parse(size string, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q (see -help)", args)
	}
	if c.frames < 0 {
		return fmt.Errorf("-frames %d: want 0 (until closed) or more", c.frames)
	}
	if c.hold < 0 || (c.hold > 0 && c.frames == 0) {
		return fmt.Errorf("-hold %v: want a positive duration, after -frames", c.hold)
	}
	w, h, ok := strings.Cut(size, "x")
	wi, errw := strconv.Atoi(w)
	hi, errh := strconv.Atoi(h)
	if !ok || errw != nil || errh != nil || wi < 1 || hi < 1 || wi > 8192 || hi > 8192 {
		return fmt.Errorf("-size %q: want WIDTHxHEIGHT, each 1 to 8192", size)
	}
	c.width, c.height = wi, hi
	return nil
}

// checkPNG reads a screenshot and reports whether it shows the scene.
func checkPNG(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := scene.CheckImage(img); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Printf("%s: shows the scene\n", path)
	return nil
}

func run(cfg config) error {
	// Without a Wayland display, ask nothing of Wayland: GLFW would try it
	// before X11, and Mesa's device-select Vulkan layer would ask it which
	// GPU drives the screen; without a login session (no XDG_RUNTIME_DIR)
	// libwayland prints an error for each. The surface picks an adapter
	// that can present.
	if os.Getenv("WAYLAND_DISPLAY") == "" {
		glfw.InitHint(glfw.PlatformHint, int(glfw.PlatformX11))
		if _, set := os.LookupEnv("NODEVICE_SELECT"); !set {
			os.Setenv("NODEVICE_SELECT", "1")
		}
	}
	if err := glfw.Init(); err != nil {
		return fmt.Errorf("no display: %w (a window needs an X11 or Wayland display: set DISPLAY, or run under Xvfb)", err)
	}
	defer glfw.Terminate()
	glfw.WindowHint(glfw.ClientAPI, glfw.NoAPI) // WebGPU draws, not OpenGL
	win, err := glfw.CreateWindow(cfg.width, cfg.height, "gpumem: bring your own device", nil, nil)
	if err != nil {
		return fmt.Errorf("no window: %w", err)
	}
	defer win.Destroy()

	// The program's own WebGPU objects: gpumem sees only the device.
	instance := wgpu.CreateInstance(nil)
	defer instance.Release()
	surface := instance.CreateSurface(wgpuglfw.GetSurfaceDescriptor(win))
	defer surface.Release()
	adapter, err := instance.RequestAdapter(&wgpu.RequestAdapterOptions{CompatibleSurface: surface})
	if err != nil || adapter == nil {
		return fmt.Errorf("no WebGPU adapter that can present to the window (on Linux without a GPU: apt-get install mesa-vulkan-drivers): %v", err)
	}
	defer adapter.Release()
	// Indirect first instance lets gpumem's draw list draw each slab
	// group with one multi-draw (scene.Renderer falls back without it).
	var features []wgpu.FeatureName
	if adapter.HasFeature(wgpu.FeatureNameIndirectFirstInstance) {
		features = append(features, wgpu.FeatureNameIndirectFirstInstance)
	}
	device, err := adapter.RequestDevice(&wgpu.DeviceDescriptor{RequiredFeatures: features})
	if err != nil {
		return fmt.Errorf("request a device: %w", err)
	}
	defer device.Release()

	dev, err := webgpu.Wrap(device)
	if err != nil {
		return err
	}
	defer dev.Release() // gpumem's objects only: device stays ours

	caps := surface.GetCapabilities(adapter)
	if len(caps.Formats) == 0 || len(caps.AlphaModes) == 0 {
		return errors.New("the adapter cannot present to this window")
	}
	config := &wgpu.SurfaceConfiguration{
		Usage:       wgpu.TextureUsageRenderAttachment,
		Format:      surfaceFormat(caps.Formats),
		PresentMode: wgpu.PresentModeFifo,
		AlphaMode:   caps.AlphaModes[0],
	}
	configure := func() bool { // false while the window is minimized
		w, h := win.GetFramebufferSize()
		if w <= 0 || h <= 0 {
			return false
		}
		if config.Width != uint32(w) || config.Height != uint32(h) {
			config.Width, config.Height = uint32(w), uint32(h)
			surface.Configure(device, config)
		}
		return true
	}
	configure()

	r, err := scene.NewRenderer(dev, config.Format, cfg.seed)
	if err != nil {
		return err
	}
	defer r.Release()

	var holdUntil time.Time
	for frame := 0; !win.ShouldClose(); {
		glfw.PollEvents()
		if cfg.frames > 0 && frame == cfg.frames {
			if holdUntil.IsZero() && cfg.hold > 0 {
				fmt.Printf("rendered %d frames; holding the last one for %v\n", frame, cfg.hold)
			}
			if holdUntil.IsZero() {
				holdUntil = time.Now().Add(cfg.hold)
			}
			if !time.Now().Before(holdUntil) {
				break
			}
		}
		if !configure() {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		st, err := surface.TryGetCurrentTexture()
		if err != nil {
			return err
		}
		switch st.Status {
		case wgpu.SurfaceGetCurrentTextureStatusSuccessOptimal, wgpu.SurfaceGetCurrentTextureStatusSuccessSuboptimal:
		case wgpu.SurfaceGetCurrentTextureStatusTimeout, wgpu.SurfaceGetCurrentTextureStatusOutdated,
			wgpu.SurfaceGetCurrentTextureStatusLost, wgpu.SurfaceGetCurrentTextureStatusOccluded:
			config.Width = 0 // configure again, and try the next time round
			continue
		default:
			return fmt.Errorf("surface texture: status %v", st.Status)
		}
		view, err := st.Texture.TryCreateView(nil)
		if err != nil {
			return err
		}
		// A new frame of the scene, until -frames; the last one again
		// while holding.
		if cfg.frames == 0 || frame < cfg.frames {
			if err = r.Update(); err == nil {
				frame++
			}
		}
		if err == nil {
			err = r.Render(view, config.Width, config.Height)
		}
		view.Release()
		if err != nil {
			return fmt.Errorf("frame %d: %w", frame, err)
		}
		surface.Present() // the surface's texture is the surface's: only its view is released
	}
	s := r.Stats()
	fmt.Printf("%d frames: %d meshes and textures in, %d out; %d slab growths, %d ranges moved; %d bindless pages\n",
		s.Frames, s.Added, s.Removed, s.Mesh.Growths, s.Mesh.Moves, s.Bindless.Pages)
	return nil
}

// surfaceFormat picks an 8-bit format without sRGB encoding, as the PNG
// of examples/offscreen has, or else the surface's preferred one.
func surfaceFormat(formats []wgpu.TextureFormat) wgpu.TextureFormat {
	for _, f := range formats {
		if f == wgpu.TextureFormatBGRA8Unorm || f == wgpu.TextureFormatRGBA8Unorm {
			return f
		}
	}
	return formats[0]
}
