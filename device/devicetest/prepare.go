package devicetest

import (
	"fmt"
	"testing"

	"github.com/gpumem/gpumem/device"
)

// testPrepare checks device.Prepare on the device, whether or not it is
// a Preparer: buffers prepared while other work goes on are taken zeroed
// and work, in any order, MapWrite ones included; a Take after a Take or
// a Release is refused; an invalid desc fails at Take with CreateBuffer's
// error; and one released, or left pending at the device's Release,
// costs nothing more.
func testPrepare(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	sizes := []uint64{256, 64 << 10, 1 << 20}
	var pend []*device.Pending
	for _, n := range sizes {
		pend = append(pend, device.Prepare(d, device.BufferDesc{Label: "prepared", Size: n, Usage: rw}))
	}
	// Work on the device while they are made.
	other, data := filled(t, d, r, 4096, rw)
	check(t, d, other, data)
	for i := len(pend) - 1; i >= 0; i-- {
		b, err := pend[i].Take()
		must(t, err)
		if b.Size() != sizes[i] {
			t.Fatalf("prepared buffer of %d bytes: Size %d", sizes[i], b.Size())
		}
		check(t, d, b, make([]byte, sizes[i]))
		want := randBytes(r, sizes[i])
		must(t, d.WriteBuffer(b, 0, want))
		must(t, d.CopyBuffer(other, 0, b, 0, 256))
		copy(want, data[:256])
		check(t, d, b, want)
		_, err = pend[i].Take()
		wantErr(t, "second Take", err, device.ErrInvalidObject)
		b.Release()
	}

	staging := device.Prepare(d, device.BufferDesc{Label: "prepared staging", Size: 4096, Usage: device.MapWrite | device.CopySrc})
	sb, err := staging.Take()
	must(t, err)
	want := randBytes(r, 4096)
	must(t, d.WriteBuffer(sb, 0, want))
	must(t, d.CopyBuffer(sb, 0, other, 0, 4096))
	check(t, d, other, want)
	sb.Release()

	bad := device.Prepare(d, device.BufferDesc{Label: "prepared, zero bytes", Usage: rw})
	_, err = bad.Take()
	wantErr(t, "Take of a zero-byte buffer", err, device.ErrInvalidDescriptor)
	odd := device.Prepare(d, device.BufferDesc{Label: "prepared, odd size", Size: 6, Usage: rw})
	_, err = odd.Take()
	wantErr(t, "Take of a 6-byte buffer", err, device.ErrInvalidAlignment)

	dropped := device.Prepare(d, device.BufferDesc{Label: "prepared, dropped", Size: 1 << 20, Usage: rw})
	dropped.Release()
	dropped.Release()
	_, err = dropped.Take()
	wantErr(t, "Take after Release", err, device.ErrInvalidObject)
	var none *device.Pending
	none.Release()

	// Left pending when the device goes: its Release waits and frees it,
	// and a Take after that is refused.
	late := device.Prepare(d, device.BufferDesc{Label: "prepared, never taken", Size: 1 << 20, Usage: rw})
	d.Release()
	if b, err := late.Take(); err == nil {
		b.Release()
		t.Fatal("Take after the device's Release: no error")
	}
}

// testPrepareTexture checks device.PrepareTexture as testPrepare checks
// Prepare: textures prepared while other work goes on are taken zeroed,
// with the desc asked (normalized), and take writes and copies; a second
// Take, or one after Release, is refused; an invalid desc fails at Take
// with CreateTexture's error; and one left pending at the device's
// Release is freed by it.
func testPrepareTexture(t *testing.T, s *suite) {
	d := s.device(t)
	r := newRand(t.Name())
	descs := []device.TextureDesc{
		{Label: "prepared page", Format: device.RGBA8Unorm, Width: 64, Height: 64, Layers: 8, Usage: texRW},
		{Label: "prepared, mips", Format: device.R32Float, Width: 16, Height: 8, Layers: 2, Mips: 3, Usage: texRW},
	}
	var pend []*device.PendingTexture
	for _, desc := range descs {
		pend = append(pend, device.PrepareTexture(d, desc))
	}
	// Work on the device while they are made.
	other, data := filled(t, d, r, 4096, rw)
	check(t, d, other, data)
	for i := len(pend) - 1; i >= 0; i-- {
		tex, err := pend[i].Take()
		must(t, err)
		if got, want := tex.Desc(), descs[i].Normalize(); got != want {
			t.Fatalf("prepared texture: Desc %+v, want %+v", got, want)
		}
		desc := tex.Desc()
		last := desc.Layers - 1
		equal(t, "prepared texture, last layer", readTex(t, d, tex, last, 0), make([]byte, desc.MipBytes(0)))
		src := mustTexture(t, d, device.TextureDesc{Format: desc.Format, Width: desc.Width, Height: desc.Height, Mips: desc.Mips, Usage: texRW})
		want := fillTex(t, d, r, src)
		must(t, d.CopyTextureLayer(src, 0, tex, last))
		for m := range desc.Mips {
			equal(t, fmt.Sprintf("copied into the prepared texture, mip %d", m), readTex(t, d, tex, last, m), want[0][m])
		}
		_, err = pend[i].Take()
		wantErr(t, "second Take", err, device.ErrInvalidObject)
		src.Release()
		tex.Release()
	}

	bad := device.PrepareTexture(d, device.TextureDesc{Label: "prepared, zero width", Format: device.RGBA8Unorm, Height: 4, Usage: texRW})
	_, err := bad.Take()
	wantErr(t, "Take of a texture of zero width", err, device.ErrInvalidDescriptor)

	dropped := device.PrepareTexture(d, descs[0])
	dropped.Release()
	dropped.Release()
	_, err = dropped.Take()
	wantErr(t, "Take after Release", err, device.ErrInvalidObject)
	var none *device.PendingTexture
	none.Release()

	late := device.PrepareTexture(d, descs[0])
	d.Release()
	if tex, err := late.Take(); err == nil {
		tex.Release()
		t.Fatal("Take after the device's Release: no error")
	}
}
