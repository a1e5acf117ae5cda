package memory_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/memory"
)

// TestKindText is a table of kinds, their names and properties; each name
// reads back as its kind.
func TestKindText(t *testing.T) {
	for _, tt := range []struct {
		k                 memory.Kind
		name              string
		compacts, rebinds bool
	}{
		{memory.Other, "", false, true},
		{memory.ArenaBuffer, "arena", true, true},
		{memory.VertexSlab, "vertex slab", true, true},
		{memory.IndexSlab, "index slab", true, true},
		{memory.VertexBuffer, "vertex buffer", false, true},
		{memory.IndexBuffer, "index buffer", false, true},
		{memory.MeshletArena, "meshlet arena", true, true},
		{memory.TexturePage, "texture page", false, true},
		{memory.RingBuffer, "ring buffer", false, true},
		{memory.FrameBlock, "frame block", false, false},
		{memory.StagingChunk, "staging chunk", false, false},
		{memory.PoolBuffer, "pool buffer", false, false},
	} {
		if tt.k.String() != tt.name || tt.k.Compacts() != tt.compacts || tt.k.Rebinds() != tt.rebinds {
			t.Errorf("%d: %q compacts %v rebinds %v, want %q %v %v", tt.k, tt.k, tt.k.Compacts(), tt.k.Rebinds(), tt.name, tt.compacts, tt.rebinds)
		}
		var back memory.Kind
		if err := back.UnmarshalText([]byte(tt.name)); err != nil || back != tt.k {
			t.Errorf("%q reads as %v, %v", tt.name, back, err)
		}
	}
	var k memory.Kind
	if err := k.UnmarshalText([]byte("mesh slab")); !errors.Is(err, memory.ErrInvalidBuffer) {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := memory.Kind(200).MarshalText(); err == nil {
		t.Error("Kind(200) marshals")
	}
	bad := memory.Buffer{Kind: 200, CapacityBytes: 8, Regions: []memory.Region{{Size: 8, State: memory.StateFree}}}
	if err := bad.Check(); !errors.Is(err, memory.ErrInvalidBuffer) {
		t.Errorf("Check of Kind(200): %v", err)
	}
}

// TestBufferJSON writes buffers and reads them back: the kind and the
// usage flags in words, a buffer's or a texture array's.
func TestBufferJSON(t *testing.T) {
	free := []memory.Region{{Size: 64, State: memory.StateFree}}
	for _, b := range []memory.Buffer{
		{Name: "slab", Kind: memory.IndexSlab, CapacityBytes: 64, Usage: device.Index | device.CopyDst | device.Storage, Regions: free},
		{Name: "page", Kind: memory.TexturePage, CapacityBytes: 64, ElemBytes: 16, Layers: 4,
			TextureUsage: device.TextureBinding | device.TextureCopyDst, Regions: free},
		{Name: "hand", CapacityBytes: 64, Regions: free},
	} {
		b.Measure()
		text, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"usage":"` + b.UsageString() + `"`; b.UsageString() != "" && !bytes.Contains(text, []byte(want)) {
			t.Errorf("%s lacks %s", text, want)
		}
		var back memory.Buffer
		if err := json.Unmarshal(text, &back); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if back.Kind != b.Kind || back.Usage != b.Usage || back.TextureUsage != b.TextureUsage || back.Layers != b.Layers {
			t.Errorf("%s read back as %+v", text, back)
		}
	}
	for _, in := range []string{
		`{"kind":"pool"}`,
		`{"kind":7}`,
		`{"usage":"Vertex|Sideways"}`,
		`{"usage":"TextureBinding"}`,
		`{"layers":2,"usage":"Vertex"}`,
	} {
		var b memory.Buffer
		if err := json.Unmarshal([]byte(in), &b); err == nil {
			t.Errorf("%s: read as %+v", in, b)
		}
	}
}
