//go:build !js

package main

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/mesh"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// The test runs the example's frames, loaders and churn, then draws the
// final scene again the plain way: every mesh's four attribute arrays in
// four buffers of their own and its indices in a fifth, its texture a
// texture of its own of the image's exact size sampled without scale,
// each mesh a DrawIndexed(n, 1, 0, 0, 0). Both go through the same
// shader but for the texel function, and the images must be equal byte
// for byte: a wrong base vertex, first index, stream binding, texture
// layer or scale shows (the package doc says why nothing else may).
func TestMatchesOwnBuffers(t *testing.T) {
	g := testGPU(t)
	cfg := config{frames: 120, loaders: 4, width: 320, height: 320, seed: 1}
	res, err := render(g.device, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := res.stats
	t.Logf("%d frames: %d added, %d modified, %d removed, %d drawn; %d rebuilt, %d rebinds, %d bound; mesh %+v",
		st.Frames, st.Added, st.Modified, st.Removed, st.Drawn, st.Rebuilt, st.Rebinds, st.Bound, st.Mesh)
	t.Logf("bindless %+v", st.Bindless)
	t.Logf("vertex bytes per stream: slabs %v, own buffers %v", res.slabBytes, res.ownBytes)

	// The run must have done what the example is there to show.
	if st.Removed == 0 || st.Modified == 0 || st.Rebuilt == 0 || st.Rebinds == 0 || st.Mesh.Growths == 0 ||
		st.Mesh.Shrinks == 0 || st.Mesh.Moves == 0 || st.Mesh.LoaderOps == 0 || st.TexturesMoved == 0 ||
		res.vertexSlabs < 2*len(strides) || st.Drawn != len(res.items) || st.Drawn < slots/2 {
		t.Fatalf("the run did not churn, grow, shrink, sweep and page as it should: %+v", st)
	}
	// Rebinding is driven by the changes: a frame without a Replaced
	// buffer rebinds nothing.
	replacedFrames := 0
	for f, h := range st.History {
		if h.Replaced == 0 && h.Rebinds != 0 {
			t.Errorf("frame %d: %d rebinds without a Replaced change", f+1, h.Rebinds)
		}
		if h.Replaced > 0 {
			replacedFrames++
		}
	}
	if replacedFrames == 0 || replacedFrames == len(st.History) {
		t.Errorf("%d of %d frames had Replaced changes: the test shows nothing", replacedFrames, len(st.History))
	}
	// Stream slabs take each stream's bytes as buffers of their own do
	// (every stride here is a multiple of 4: slots are one vertex).
	if res.slabBytes != res.ownBytes {
		t.Errorf("vertex bytes per stream: slabs %v, own buffers %v", res.slabBytes, res.ownBytes)
	}
	// Textures of mixed sizes: labels and squares, in several classes.
	sizes := map[[2]int]bool{}
	classes := map[[2]int]bool{}
	for _, it := range res.items {
		sizes[[2]int{it.image.width, it.image.height}] = true
		classes[[2]int{pow2(it.image.width), pow2(it.image.height)}] = true
	}
	if len(classes) < 6 || len(sizes) < len(res.items)/2 {
		t.Errorf("%d texture sizes in %d classes: not mixed enough", len(sizes), len(classes))
	}

	want := renderOwnBuffers(t, g.device, res.items, cfg)
	if !bytes.Equal(want.Pix, res.image.Pix) {
		diff := 0
		for p := 0; p < len(want.Pix); p += 4 {
			if !bytes.Equal(want.Pix[p:p+4], res.image.Pix[p:p+4]) {
				diff++
			}
		}
		dir, err := os.MkdirTemp("", "streams-test-")
		if err == nil {
			err = errors.Join(os.WriteFile(filepath.Join(dir, "got.png"), encodePNG(t, res.image), 0o644),
				os.WriteFile(filepath.Join(dir, "want.png"), encodePNG(t, want), 0o644))
		}
		t.Fatalf("%d of %d pixels differ from the reference (got.png and want.png in %s: %v)", diff, len(want.Pix)/4, dir, err)
	}
	// And the picture is no blank: most meshes show.
	if bg := background(want); bg > len(want.Pix)/4*95/100 {
		t.Fatalf("%d of %d pixels are background", bg, len(want.Pix)/4)
	}
}

// texelOwnWGSL loads from the one texture bound for the draw, unscaled.
const texelOwnWGSL = `
@group(1) @binding(1) var tex: texture_2d<f32>;

fn texel(uv: vec2f) -> vec4f {
	return textureLoad(tex, at(uv, vec2f(textureDimensions(tex))), 0);
}
`

// renderOwnBuffers draws items at the run's last frame from buffers and
// textures of their own and returns the image.
func renderOwnBuffers(t *testing.T, wd *wgpu.Device, items []*item, cfg config) *image.RGBA {
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
	pipe, err := newPipeline(wd, texelOwnWGSL, []wgpu.BindGroupLayoutEntry{{Binding: 1, Visibility: wgpu.ShaderStageFragment,
		Texture: wgpu.TextureBindingLayout{SampleType: wgpu.TextureSampleTypeFloat, ViewDimension: wgpu.TextureViewDimension2D}}})
	must(err)
	defer pipe.release()
	q := wd.GetQueue()
	rel = append(rel, q)
	buffer := func(data []byte, usage wgpu.BufferUsage) *wgpu.Buffer {
		padded := make([]byte, (len(data)+3)&^3)
		copy(padded, data)
		b, err := wd.TryCreateBufferInit(&wgpu.BufferInitDescriptor{Contents: padded, Usage: usage})
		must(err)
		rel = append(rel, b)
		return b
	}
	const stride = 256 // the largest uniform offset alignment WebGPU allows
	var draws []byte
	for _, it := range items {
		draws = appendDraw(draws, it.slot, cfg.frames-1, cfg.width, cfg.height, 0, 1, 1)
		draws = append(draws, make([]byte, stride-drawBytes)...)
	}
	uniforms := buffer(draws, wgpu.BufferUsageUniform)
	group0, err := wd.TryCreateBindGroup(&wgpu.BindGroupDescriptor{Layout: pipe.draws, Entries: []wgpu.BindGroupEntry{{Binding: 0, Buffer: uniforms, Size: drawBytes}}})
	must(err)
	rel = append(rel, group0)

	dev, err := webgpu.Wrap(wd) // for the targets and the read-back only
	must(err)
	defer dev.Release()
	tg, err := newTargets(dev, cfg.width, cfg.height)
	must(err)
	defer tg.release()
	enc, err := wd.TryCreateCommandEncoder(nil)
	must(err)
	rel = append(rel, enc)
	pass := enc.BeginRenderPass(passDesc(tg.colorView, tg.depthView))
	pass.SetPipeline(pipe.pipeline)
	for k, it := range items {
		im := it.image
		extent := wgpu.Extent3D{Width: uint32(im.width), Height: uint32(im.height), DepthOrArrayLayers: 1}
		tex, err := wd.TryCreateTexture(&wgpu.TextureDescriptor{Size: extent, MipLevelCount: 1, SampleCount: 1, Dimension: wgpu.TextureDimension2D,
			Format: colorFormat, Usage: wgpu.TextureUsageTextureBinding | wgpu.TextureUsageCopyDst})
		must(err)
		must(q.TryWriteTexture(tex.AsImageCopy(), im.pixels, &wgpu.TexelCopyBufferLayout{BytesPerRow: uint32(4 * im.width), RowsPerImage: uint32(im.height)}, &extent))
		view, err := tex.TryCreateView(nil)
		must(err)
		group1, err := wd.TryCreateBindGroup(&wgpu.BindGroupDescriptor{Layout: pipe.textures, Entries: []wgpu.BindGroupEntry{
			{Binding: 0, Sampler: pipe.sampler}, {Binding: 1, TextureView: view}}})
		must(err)
		rel = append(rel, tex, view, group1)

		pass.SetBindGroup(0, group0, []uint32{uint32(k * stride)})
		pass.SetBindGroup(1, group1, nil)
		for i, s := range it.shape.streams {
			pass.SetVertexBuffer(uint32(i), buffer(s, wgpu.BufferUsageVertex), 0, wgpu.WholeSize)
		}
		format := wgpu.IndexFormatUint16
		if it.shape.format == mesh.Uint32 {
			format = wgpu.IndexFormatUint32
		}
		pass.SetIndexBuffer(buffer(it.shape.indices, wgpu.BufferUsageIndex), format, 0, wgpu.WholeSize)
		pass.DrawIndexed(uint32(it.shape.indexCount()), 1, 0, 0, 0)
	}
	must(pass.TryEnd())
	pass.Release()
	cb, err := enc.TryFinish(nil)
	must(err)
	q.Submit(cb)
	cb.Release()
	img, err := tg.readPixels()
	must(err)
	return img
}

// pow2 returns the least power of two at or above n.
func pow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// background counts the pixels of the clear colour.
func background(img *image.RGBA) int {
	n := 0
	first := img.Pix[:4]
	for p := 0; p < len(img.Pix); p += 4 {
		if bytes.Equal(img.Pix[p:p+4], first) {
			n++
		}
	}
	return n
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
	if err := run(config{frames: 10, loaders: 2, width: 96, height: 64, seed: 7}, out); err != nil {
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
}

func TestBadFlags(t *testing.T) {
	for _, c := range []struct {
		frames, loaders int
		size            string
		args            []string
	}{
		{0, 4, "64x64", nil},
		{10, 0, "64x64", nil},
		{10, slots + 1, "64x64", nil},
		{10, 4, "64", nil},
		{10, 4, "0x64", nil},
		{10, 4, "99999x64", nil},
		{10, 4, "64x64", []string{"extra"}},
	} {
		cfg := config{frames: c.frames, loaders: c.loaders}
		if err := cfg.parse(c.size, c.args); err == nil {
			t.Errorf("-frames %d -loaders %d -size %q %q: no error", c.frames, c.loaders, c.size, c.args)
		}
	}
	cfg := config{frames: 1, loaders: 4}
	if err := cfg.parse("640x480", nil); err != nil || cfg.width != 640 || cfg.height != 480 {
		t.Errorf("-size 640x480: %v, %dx%d", err, cfg.width, cfg.height)
	}
}
