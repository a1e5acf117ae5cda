package inspect_test

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/arena"
	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/inspect"
	"github.com/gpumem/gpumem/internal/testdevice"
	"github.com/gpumem/gpumem/memory"
	"github.com/gpumem/gpumem/offset"
)

// sample returns a dump of an arena with bin rounding, churn and a moving
// allocation, a raw offset allocator, and a buffer built from regions.
func sample(t testing.TB) inspect.Dump {
	t.Helper()
	dev := testdevice.Host(t, host.Options{})
	a, err := arena.New(dev, arena.Options{Label: "vertex", ElemSize: 32, InitialElems: 4096, RoundToBins: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Release)
	names := map[arena.Handle]string{}
	var hs []arena.Handle
	for i := range 40 {
		h, err := a.Allocate(uint32(17 + 13*i))
		if err != nil {
			t.Fatal(err)
		}
		names[h] = fmt.Sprintf("mesh%d", i)
		hs = append(hs, h)
	}
	for i := 0; i < len(hs); i += 3 {
		if err := a.Free(hs[i]); err != nil {
			t.Fatal(err)
		}
	}
	owner := func(r arena.Region) memory.Owner { return memory.Owner{Kind: "vertex", Name: names[r.Handle]} }
	vb := a.Snapshot("meshes/vertex", owner)
	for i := range vb.Regions {
		if vb.Regions[i].Name == "mesh7" {
			vb.Regions[i].State = memory.StateMoving
		}
	}
	vb.Measure()

	o, err := offset.New(1<<16, 1024)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		h, err := o.Allocate(uint32(500 + 97*i))
		if err != nil {
			t.Fatal(err)
		}
		if i%4 == 1 {
			o.Free(h)
		}
	}
	var frames []memory.Region
	for r := range o.Regions() {
		if r.Used {
			frames = append(frames, memory.Region{Offset: 4 * uint64(r.Offset), Size: 4 * uint64(r.Size), Kind: "ring",
				Name: fmt.Sprintf("frame@%d", r.Offset)})
		}
	}
	ob, err := memory.NewBuffer("constants", memory.RingBuffer, 4*uint64(o.Capacity()), frames)
	if err != nil {
		t.Fatal(err)
	}
	ob.ElemBytes, ob.Usage = 4, device.Uniform|device.CopyDst

	mb, err := memory.NewBuffer("meshlets/data", memory.MeshletArena, 1<<20, []memory.Region{
		{Offset: 300 << 10, Size: 200 << 10, Used: 180 << 10, Kind: "meshlet-data", Name: "zone1/batch2"},
		{Offset: 0, Size: 100 << 10, Kind: "meshlet-data", Name: "zone1/batch1"},
		{Offset: 600 << 10, Size: 64 << 10, Kind: "index", Name: "zone2/mesh1", State: memory.StateMoving},
	})
	if err != nil {
		t.Fatal(err)
	}
	mb.Stats.FrameMoves, mb.Stats.FrameBytesMoved = 1, 64<<10
	mb.Usage = device.Storage | device.CopySrc | device.CopyDst
	tb, err := memory.NewBuffer("textures/page 0", memory.TexturePage, 12*4096, []memory.Region{
		{Offset: 0, Size: 4096, Kind: "texture", Name: "white"},
		{Offset: 5 * 4096, Size: 4096, Kind: "texture", Name: "zone1/albedo", State: memory.StateMoving},
		{Offset: 6 * 4096, Size: 4096, Kind: "texture", Name: "zone1/normal"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tb.ElemBytes, tb.Layers, tb.TextureUsage = 4096, 12, device.TextureBinding|device.TextureCopyDst
	return inspect.New("host", "sample", vb, ob, mb, tb)
}

// TestSampleGolden keeps testdata/sample.json (a fuzz seed) in step with
// sample: -update rewrites it.
func TestSampleGolden(t *testing.T) {
	d := sample(t)
	var b bytes.Buffer
	d.WriteJSON(&b)
	if os.Getenv("GPUMEM_UPDATE") != "" {
		os.WriteFile("testdata/sample.json", b.Bytes(), 0o644)
	}
	want, err := os.ReadFile("testdata/sample.json")
	if err != nil || !bytes.Equal(want, b.Bytes()) {
		t.Errorf("testdata/sample.json is not the sample dump (GPUMEM_UPDATE=1 rewrites it): %v", err)
	}
}

func TestDumpRoundTrip(t *testing.T) {
	d := sample(t)
	if err := d.Check(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := d.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := inspect.ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	got.WriteJSON(&again)
	var first bytes.Buffer
	d.WriteJSON(&first)
	if first.String() != again.String() {
		t.Error("dump changed through JSON")
	}
	tot := got.Totals
	if tot.Buffers != 4 || tot.Moving != 3 || tot.FrameMoves != 1 || !tot.History || tot.CapacityBytes != tot.ReservedBytes+tot.FreeBytes ||
		tot.SlackBytes == 0 || tot.Fragmentation <= 0 || tot.Fragmentation >= 1 {
		t.Errorf("totals %+v", tot)
	}
}

func TestReadJSONRejects(t *testing.T) {
	tests := []struct {
		name, json string
		want       error
	}{
		{"not json", `{`, inspect.ErrInvalidDump},
		{"version", `{"version":2,"buffers":[]}`, inspect.ErrVersion},
		{"no version", `{"buffers":[]}`, inspect.ErrVersion},
		{"zero capacity", `{"version":1,"buffers":[{"name":"a","capacity_bytes":0,"regions":[]}]}`, inspect.ErrInvalidDump},
		{"gap", `{"version":1,"buffers":[{"capacity_bytes":8,"regions":[{"offset":4,"size":4,"state":"free"}]}]}`, inspect.ErrInvalidDump},
		{"short", `{"version":1,"buffers":[{"capacity_bytes":8,"regions":[{"offset":0,"size":4,"state":"free"}]}]}`, inspect.ErrInvalidDump},
		{"past end", `{"version":1,"buffers":[{"capacity_bytes":8,"regions":[{"offset":0,"size":18446744073709551615,"state":"free"}]}]}`, inspect.ErrInvalidDump},
		{"state", `{"version":1,"buffers":[{"capacity_bytes":8,"regions":[{"offset":0,"size":8,"state":"lost"}]}]}`, inspect.ErrInvalidDump},
		{"used above size", `{"version":1,"buffers":[{"capacity_bytes":8,"regions":[{"offset":0,"size":8,"used":9,"state":"used"}]}]}`, inspect.ErrInvalidDump},
		{"trailing", `{"version":1,"buffers":[]} {}`, inspect.ErrInvalidDump},
		{"wrong type", `{"version":"1"}`, inspect.ErrInvalidDump},
		{"layers", `{"version":1,"buffers":[{"capacity_bytes":8,"elem_bytes":4,"layers":3,"regions":[{"offset":0,"size":8,"state":"free"}]}]}`, inspect.ErrInvalidDump},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := inspect.ReadJSON(strings.NewReader(tt.json))
			if !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
		})
	}
}

// TestRender draws the sample in every format and checks the output is
// deterministic and well formed. GPUMEM_INSPECT_OUT=dir keeps the files.
func TestRender(t *testing.T) {
	d := sample(t)
	out := os.Getenv("GPUMEM_INSPECT_OUT")
	for _, f := range []struct {
		ext   string
		write func(*bytes.Buffer, *inspect.Dump) error
	}{
		{"svg", func(b *bytes.Buffer, d *inspect.Dump) error { return inspect.WriteSVG(b, d) }},
		{"html", func(b *bytes.Buffer, d *inspect.Dump) error { return inspect.WriteHTML(b, d) }},
		{"png", func(b *bytes.Buffer, d *inspect.Dump) error { return inspect.WritePNG(b, d) }},
	} {
		var b1, b2 bytes.Buffer
		if err := f.write(&b1, &d); err != nil {
			t.Fatalf("%s: %v", f.ext, err)
		}
		f.write(&b2, &d)
		if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Errorf("%s: output not deterministic", f.ext)
		}
		s := b1.String()
		switch f.ext {
		case "svg", "html":
			for _, want := range []string{"<svg", "</svg>", inspect.KindColor("vertex"), "zone1/batch2 (meshlet-data)", "slack 20.0 KiB", "moving"} {
				if !strings.Contains(s, want) {
					t.Errorf("%s lacks %q", f.ext, want)
				}
			}
			if f.ext == "html" && (strings.Contains(s, "http://") && !strings.Contains(s, `xmlns="http://www.w3.org/2000/svg"`) || strings.Contains(s, "src=")) {
				t.Errorf("html refers to external assets")
			}
		case "png":
			img, err := png.Decode(bytes.NewReader(b1.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if img.Bounds().Dx() != 1100 {
				t.Errorf("png %v", img.Bounds())
			}
		}
		if out != "" {
			os.WriteFile(filepath.Join(out, "sample."+f.ext), b1.Bytes(), 0o644)
		}
	}
	bad := d
	bad.Version = 9
	if err := inspect.WritePNG(&bytes.Buffer{}, &bad); !errors.Is(err, inspect.ErrVersion) {
		t.Errorf("bad dump drawn: %v", err)
	}
}

// TestRenderOdd draws valid but odd dumps in every format: extreme
// capacities, one-byte regions, no buffers, empty names, unknown kinds.
func TestRenderOdd(t *testing.T) {
	for _, js := range []string{
		`{"version":1,"buffers":[]}`,
		`{"version":1,"buffers":[{"capacity_bytes":18446744073709551615,"regions":[{"offset":0,"size":1,"used":1,"state":"moving"},{"offset":1,"size":18446744073709551614,"state":"free"}]}]}`,
		`{"version":1,"buffers":[{"capacity_bytes":3,"regions":[{"offset":0,"size":1,"state":"used","kind":"\u00e9\u0000<&>"},{"offset":1,"size":1,"state":"free"},{"offset":2,"size":1,"used":0,"state":"used"}]}]}`,
	} {
		d, err := inspect.ReadJSON(strings.NewReader(js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		for _, w := range []func(*bytes.Buffer, *inspect.Dump) error{
			func(b *bytes.Buffer, d *inspect.Dump) error { return inspect.WriteSVG(b, d) },
			func(b *bytes.Buffer, d *inspect.Dump) error { return inspect.WriteHTML(b, d) },
			func(b *bytes.Buffer, d *inspect.Dump) error { return inspect.WritePNG(b, d) },
		} {
			if err := w(&bytes.Buffer{}, &d); err != nil {
				t.Errorf("%s: %v", js, err)
			}
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for _, tt := range []struct {
		n    uint64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {10 << 20, "10.0 MiB"},
		{3 << 20, "3.0 MiB"}, {5 << 30, "5.00 GiB"}, {^uint64(0), "16.0 EiB"},
	} {
		if got := inspect.FormatBytes(tt.n); got != tt.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestPlot(t *testing.T) {
	p := inspect.Plot{Title: "Memory <bytes>", Unit: inspect.UnitBytes, FirstX: 1, XLabel: "frame", Series: []inspect.Series{
		{Name: "occupied", Color: inspect.KindColor("vertex"), Fill: true, Values: []float64{0, 3 << 20, 11 << 20, math.NaN()}},
		{Name: "empty", Color: "#000000"},
	}}
	var a, b bytes.Buffer
	p.WriteSVG(&a)
	p.WriteSVG(&b)
	s := a.String()
	if s != b.String() {
		t.Error("plot not deterministic")
	}
	for _, want := range []string{"<polyline", "<polygon", "Memory &lt;bytes&gt;", "12.0 MiB", "occupied", ">4<"} {
		if !strings.Contains(s, want) {
			t.Errorf("plot lacks %q", want)
		}
	}
	var empty inspect.Plot
	if err := empty.WriteSVG(io.Discard); err != nil {
		t.Error(err)
	}
}
