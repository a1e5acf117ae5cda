//go:build cgo || js

package webgpu

import (
	"bytes"
	"testing"

	"github.com/gpumem/gpumem/device"
)

// TestTexCopyJoins checks that copies into consecutive layers from
// consecutive stretches of one buffer go into the encoder as one command,
// that a copy out of turn starts another, and that any other recording
// (a buffer copy here) puts the held copy in first: the texture reads
// back what each call copied.
func TestTexCopyJoins(t *testing.T) {
	d := newTestDevice(t, Options{})
	desc := device.TextureDesc{Format: device.RGBA8Unorm, Width: 8, Height: 4, Layers: 16, Usage: device.TextureCopySrc | device.TextureCopyDst}
	tex, err := d.CreateTexture(desc)
	if err != nil {
		t.Fatal(err)
	}
	const pitch, layerBytes = 256, 256 * 4
	src, err := d.CreateBuffer(device.BufferDesc{Label: "layers", Size: 16 * layerBytes, Usage: device.MapWrite | device.CopySrc})
	if err != nil {
		t.Fatal(err)
	}
	side, err := d.CreateBuffer(device.BufferDesc{Label: "side", Size: 256, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]byte, 16)
	fill := func(slot uint64, layer uint32) {
		t.Helper()
		px := make([]byte, desc.MipBytes(0))
		for i := range px {
			px[i] = byte(int(layer)*13 + i)
		}
		want[layer] = px
		if err := device.FillBuffer(d, src, slot*layerBytes, layerBytes, func(dst []byte) {
			clear(dst)
			for y := range 4 {
				copy(dst[y*pitch:], px[y*32:(y+1)*32])
			}
		}); err != nil {
			t.Fatal(err)
		}
		if err := d.CopyBufferToTexture(src, slot*layerBytes, pitch, tex, layer, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	before := d.texCopies
	for l := range uint32(6) { // one run: layers 0..5
		fill(uint64(l), l)
	}
	if d.texCopies != before {
		t.Fatalf("%d copies recorded while the run goes on", d.texCopies-before)
	}
	fill(6, 8) // out of turn: the run is recorded, another starts
	if d.texCopies != before+1 {
		t.Fatalf("%d copies recorded after a copy out of turn, want 1", d.texCopies-before)
	}
	fill(7, 9)
	if err := d.CopyBuffer(src, 0, side, 0, 256); err != nil { // recorded after the held copy
		t.Fatal(err)
	}
	if d.texCopies != before+2 {
		t.Fatalf("%d copies recorded after a buffer copy, want 2", d.texCopies-before)
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, l := range []uint32{0, 1, 2, 3, 4, 5, 8, 9} {
		got := make([]byte, desc.MipBytes(0))
		if err := d.ReadTexture(tex, l, 0, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[l]) {
			t.Fatalf("layer %d: read back %v, want %v", l, got[:8], want[l][:8])
		}
	}
}
