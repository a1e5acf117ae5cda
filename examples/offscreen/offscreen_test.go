//go:build !js

package main

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/draw/multidraw"
	"github.com/gpumem/gpumem/scene"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// The test renders 300 frames of the scene through gpumem, then the same
// final scene again from resources of its own, without gpumem: a vertex
// and an index buffer and a texture per mesh, and plain buffers for the
// constants. Both go through the same vertex stage and pipeline state;
// only where the data comes from differs. The images must be equal pixel
// for pixel (nearest sampling: a texel from the wrong layer or a vertex
// from the wrong range shows).
//
// The example's device has indirect first instance where the adapter
// does, and the renderer draws with one multi-draw per slab group;
// TestMatchesOwnBuffers/direct runs the same on a device without it, where
// the renderer draws a DrawIndexed per item.
func TestMatchesOwnBuffers(t *testing.T) {
	g := testGPU(t)
	t.Run("best", func(t *testing.T) { matchOwnBuffers(t, g.device) })
	t.Run("direct", func(t *testing.T) {
		wd, err := g.adapter.RequestDevice(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer wd.Release()
		matchOwnBuffers(t, wd)
	})
}

func matchOwnBuffers(t *testing.T, wd *wgpu.Device) {
	cfg := config{frames: 300, width: 256, height: 256, seed: 1}
	got, st, err := render(wd, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", st)
	if want := multidraw.Best(wd); st.DrawMode != want {
		t.Fatalf("drawn in mode %v, the device allows %v", st.DrawMode, want)
	}
	// The run must have done what the example is there to show.
	if st.Removed == 0 || st.Mesh.Growths == 0 || st.Mesh.Moves == 0 || st.Rebuilt == 0 ||
		st.Bindless.Pages < 3 || st.PageRebuilds < 2 || st.Bindless.FreeLayers+st.Bindless.Registered < st.Drawn/2 {
		t.Fatalf("the run did not stream, grow, sweep and page as it should: %+v", st)
	}

	// The same final scene, replayed without a GPU.
	sc := scene.New(cfg.seed)
	for range cfg.frames {
		sc.Step()
	}
	want := renderReference(t, wd, sc, cfg)
	if err := scene.CheckImage(want); err != nil {
		t.Fatalf("reference: %v", err)
	}
	if err := scene.CheckImage(got); err != nil {
		t.Fatal(err)
	}
	diff := 0
	for p := 0; p < len(want.Pix); p += 4 {
		if [4]byte(want.Pix[p:p+4]) != [4]byte(got.Pix[p:p+4]) {
			diff++
		}
	}
	if diff > 0 {
		dir, err := os.MkdirTemp("", "offscreen-test-")
		if err == nil {
			err = errors.Join(os.WriteFile(filepath.Join(dir, "got.png"), encodePNG(t, got), 0o644),
				os.WriteFile(filepath.Join(dir, "want.png"), encodePNG(t, want), 0o644))
		}
		t.Fatalf("%d of %d pixels differ from the reference (got.png and want.png in %s: %v)", diff, len(want.Pix)/4, dir, err)
	}
}

// referenceWGSL samples the one texture bound for the draw.
const referenceWGSL = `
@group(1) @binding(0) var samp: sampler;
@group(1) @binding(1) var tex: texture_2d<f32>;

@fragment fn fs(in: VOut) -> @location(0) vec4f {
	return textureSampleLevel(tex, samp, in.uv, 0.0) * in.tint;
}
`

// renderReference draws sc's live items from buffers and textures of
// their own and returns the image.
func renderReference(t *testing.T, wd *wgpu.Device, sc *scene.Scene, cfg config) *image.RGBA {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var rel []interface{ Release() }
	defer func() {
		for _, o := range rel {
			o.Release()
		}
	}()
	pipeline, err := scene.NewPipeline(wd, wgpu.TextureFormatRGBA8Unorm, referenceWGSL)
	must(err)
	sampler, err := scene.NewSampler(wd)
	must(err)
	rel = append(rel, pipeline, sampler)
	buffer := func(data []byte, usage wgpu.BufferUsage) *wgpu.Buffer {
		padded := make([]byte, (len(data)+3)&^3)
		copy(padded, data)
		b, err := wd.TryCreateBufferInit(&wgpu.BufferInitDescriptor{Contents: padded, Usage: usage})
		must(err)
		rel = append(rel, b)
		return b
	}
	q := wd.GetQueue()
	rel = append(rel, q)
	texture := func(size uint32, pixels []byte) *wgpu.TextureView {
		extent := wgpu.Extent3D{Width: size, Height: size, DepthOrArrayLayers: 1}
		tex, err := wd.TryCreateTexture(&wgpu.TextureDescriptor{
			Size: extent, MipLevelCount: 1, SampleCount: 1, Dimension: wgpu.TextureDimension2D,
			Format: wgpu.TextureFormatRGBA8Unorm, Usage: wgpu.TextureUsageTextureBinding | wgpu.TextureUsageCopyDst,
		})
		must(err)
		must(q.TryWriteTexture(tex.AsImageCopy(), pixels, &wgpu.TexelCopyBufferLayout{BytesPerRow: 4 * size, RowsPerImage: size}, &extent))
		v, err := tex.TryCreateView(nil)
		must(err)
		rel = append(rel, tex, v)
		return v
	}
	white := texture(1, []byte{255, 255, 255, 255})

	items := sc.Items()
	var table []byte
	for _, it := range items {
		table = scene.AppendDraw(table, it, 0) // no bindless handle: each draw binds its texture
	}
	frame := buffer(scene.FrameConstants(sc.Frame(), cfg.width, cfg.height), wgpu.BufferUsageUniform)
	draws := buffer(table, wgpu.BufferUsageStorage)
	constants, err := wd.TryCreateBindGroup(&wgpu.BindGroupDescriptor{Layout: pipeline.GetBindGroupLayout(0), Entries: []wgpu.BindGroupEntry{
		{Binding: 0, Buffer: frame, Size: wgpu.WholeSize},
		{Binding: 1, Buffer: draws, Size: wgpu.WholeSize},
	}})
	must(err)
	rel = append(rel, constants)

	target, err := wd.TryCreateTexture(&wgpu.TextureDescriptor{
		Size:          wgpu.Extent3D{Width: cfg.width, Height: cfg.height, DepthOrArrayLayers: 1},
		MipLevelCount: 1, SampleCount: 1, Dimension: wgpu.TextureDimension2D,
		Format: wgpu.TextureFormatRGBA8Unorm, Usage: wgpu.TextureUsageRenderAttachment | wgpu.TextureUsageCopySrc,
	})
	must(err)
	view, err := target.TryCreateView(nil)
	must(err)
	rel = append(rel, target, view)
	enc, err := wd.TryCreateCommandEncoder(nil)
	must(err)
	rel = append(rel, enc)
	pass := enc.BeginRenderPass(&wgpu.RenderPassDescriptor{ColorAttachments: []wgpu.RenderPassColorAttachment{{
		View: view, LoadOp: wgpu.LoadOpClear, StoreOp: wgpu.StoreOpStore, ClearValue: scene.ClearColor,
	}}})
	pass.SetPipeline(pipeline)
	pass.SetBindGroup(0, constants, nil)
	for k, it := range items {
		tex := white
		if it.Pixels != nil {
			tex = texture(scene.TextureSize, it.Pixels)
		}
		group, err := wd.TryCreateBindGroup(&wgpu.BindGroupDescriptor{Layout: pipeline.GetBindGroupLayout(1), Entries: []wgpu.BindGroupEntry{
			{Binding: 0, Sampler: sampler},
			{Binding: 1, TextureView: tex},
		}})
		must(err)
		rel = append(rel, group)
		pass.SetBindGroup(1, group, nil)
		pass.SetVertexBuffer(0, buffer(it.Mesh.Vertices, wgpu.BufferUsageVertex), 0, wgpu.WholeSize)
		pass.SetIndexBuffer(buffer(it.Mesh.Indices, wgpu.BufferUsageIndex), wgpu.IndexFormatUint16, 0, wgpu.WholeSize)
		pass.DrawIndexed(uint32(len(it.Mesh.Indices)/2), 1, 0, 0, uint32(k))
	}
	must(pass.TryEnd())
	pass.Release()
	cb, err := enc.TryFinish(nil)
	must(err)
	q.Submit(cb)
	cb.Release()
	img, err := readPixels(wd, target, cfg.width, cfg.height)
	must(err)
	return img
}

func encodePNG(t *testing.T, img image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testGPU opens the example's GPU, or skips t where there is no adapter
// (fails it when CI=true: CI must run it).
func testGPU(t *testing.T) *gpu {
	t.Helper()
	g, err := openGPU()
	if errors.Is(err, errNoAdapter) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must run the webgpu tests: %v", err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.release)
	return g
}

// TestRun runs the command's path end to end, a short run to a PNG file.
func TestRun(t *testing.T) {
	testGPU(t).release() // skip where there is no adapter
	out := filepath.Join(t.TempDir(), "out.png")
	if err := run(config{frames: 20, width: 96, height: 64, seed: 7}, out); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 96 || b.Dy() != 64 {
		t.Fatalf("image of %v, want 96x64", b)
	}
	if err := scene.CheckImage(img); err != nil {
		t.Fatal(err)
	}
}

func TestBadFlags(t *testing.T) {
	for _, c := range []struct {
		frames int
		size   string
		args   []string
	}{
		{0, "64x64", nil},
		{-3, "64x64", nil},
		{10, "64", nil},
		{10, "0x64", nil},
		{10, "64x-1", nil},
		{10, "99999x64", nil},
		{10, "axb", nil},
		{10, "64x64", []string{"extra"}},
	} {
		cfg := config{frames: c.frames}
		if err := cfg.parse(c.size, c.args); err == nil {
			t.Errorf("-frames %d -size %q %q: no error", c.frames, c.size, c.args)
		}
	}
	cfg := config{frames: 1}
	if err := cfg.parse("640x480", nil); err != nil || cfg.width != 640 || cfg.height != 480 {
		t.Errorf("-size 640x480: %v, %dx%d", err, cfg.width, cfg.height)
	}
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

// TestMain runs the command itself where the environment asks
// (OFFSCREEN_MAIN=1), for TestNoDisplayNoise.
func TestMain(m *testing.M) {
	if os.Getenv("OFFSCREEN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestNoDisplayNoise runs the command without a login session (no
// XDG_RUNTIME_DIR) and checks that it prints nothing on stderr: no
// window-system probe complains about a display it does not use.
func TestNoDisplayNoise(t *testing.T) {
	testGPU(t).release() // skip where there is no adapter
	out := filepath.Join(t.TempDir(), "out.png")
	cmd := exec.Command(os.Args[0], "-frames", "3", "-size", "64x64", "-o", out)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "XDG_RUNTIME_DIR" && k != "NODEVICE_SELECT" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "OFFSCREEN_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 || !strings.Contains(stdout.String(), "wrote "+out) {
		t.Fatalf("offscreen without XDG_RUNTIME_DIR: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
}
