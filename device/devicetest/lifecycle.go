package devicetest

import (
	"testing"

	"github.com/gpumem/gpumem/device"
)

func testRelease(t *testing.T, s *suite) {
	d := s.device(t)
	a := mustBuffer(t, d, 256, rwStore)
	b := mustBuffer(t, d, 256, rwStore)
	tex := mustTexture(t, d, device.TextureDesc{Format: device.RGBA8Unorm, Width: 4, Height: 4, Layers: 2, Mips: 3, Usage: texRW})
	tex2 := mustTexture(t, d, tex.Desc())
	four := make([]byte, 4)
	mip := make([]byte, 64)
	must(t, d.WriteBuffer(a, 0, four))
	must(t, d.CopyBuffer(a, 0, b, 0, 4))
	a.Release()
	a.Release() // idempotent
	tex.Release()
	tex.Release()
	for _, c := range []struct {
		what string
		err  error
	}{
		{"WriteBuffer", d.WriteBuffer(a, 0, four)},
		{"ReadBuffer", d.ReadBuffer(a, 0, four)},
		{"CopyBuffer from", d.CopyBuffer(a, 0, b, 0, 4)},
		{"CopyBuffer to", d.CopyBuffer(b, 0, a, 0, 4)},
		{"Move", d.Move(a, []device.Move{{Src: 0, Dst: 4, Size: 4}})},
		{"Patch", d.Patch(a, []device.Patch{{Index: 0, Delta: 1}})},
		{"WriteTexture", d.WriteTexture(tex, 0, 0, mip)},
		{"ReadTexture", d.ReadTexture(tex, 0, 0, mip)},
		{"CopyTextureLayer from", d.CopyTextureLayer(tex, 0, tex2, 0)},
		{"CopyTextureLayer to", d.CopyTextureLayer(tex2, 0, tex, 0)},
		{"GenerateMips", d.GenerateMips(tex, 0)},
	} {
		wantErr(t, c.what+" after Release", c.err, device.ErrReleased)
	}
	// Work recorded before a release is not lost by it.
	must(t, d.Wait())
	equal(t, "copy recorded before the source's release", read(t, d, b, 0, 4), four)

	d.Release()
	d.Release()
	b.Release() // after the device: still a no-op
	tex2.Release()
	_, err := d.CreateBuffer(device.BufferDesc{Size: 4, Usage: rw})
	wantErr(t, "CreateBuffer after device Release", err, device.ErrReleased)
	_, err = d.CreateTexture(tex2.Desc())
	wantErr(t, "CreateTexture after device Release", err, device.ErrReleased)
	wantErr(t, "Submit after device Release", d.Submit(), device.ErrReleased)
	wantErr(t, "Wait after device Release", d.Wait(), device.ErrReleased)
	wantErr(t, "WriteBuffer after device Release", d.WriteBuffer(b, 0, four), device.ErrReleased)
}

func testForeignAndNil(t *testing.T, s *suite) {
	d, e := s.device(t), s.device(t)
	mine := mustBuffer(t, d, 256, rwStore)
	theirs := mustBuffer(t, e, 256, rwStore)
	tex := mustTexture(t, d, device.TextureDesc{Format: device.RGBA8Unorm, Width: 4, Height: 4, Usage: texRW})
	foreignTex := mustTexture(t, e, tex.Desc())
	four := make([]byte, 4)
	mip := make([]byte, 64)
	for _, c := range []struct {
		what string
		err  error
	}{
		{"WriteBuffer foreign", d.WriteBuffer(theirs, 0, four)},
		{"WriteBuffer nil", d.WriteBuffer(nil, 0, four)},
		{"ReadBuffer foreign", d.ReadBuffer(theirs, 0, four)},
		{"ReadBuffer nil", d.ReadBuffer(nil, 0, four)},
		{"CopyBuffer from foreign", d.CopyBuffer(theirs, 0, mine, 0, 4)},
		{"CopyBuffer to foreign", d.CopyBuffer(mine, 0, theirs, 0, 4)},
		{"CopyBuffer nil", d.CopyBuffer(nil, 0, mine, 0, 4)},
		{"Move foreign", d.Move(theirs, nil)},
		{"Move nil", d.Move(nil, nil)},
		{"Patch foreign", d.Patch(theirs, nil)},
		{"Patch nil", d.Patch(nil, nil)},
		{"WriteTexture foreign", d.WriteTexture(foreignTex, 0, 0, mip)},
		{"WriteTexture nil", d.WriteTexture(nil, 0, 0, mip)},
		{"ReadTexture nil", d.ReadTexture(nil, 0, 0, mip)},
		{"CopyTextureLayer from foreign", d.CopyTextureLayer(foreignTex, 0, tex, 0)},
		{"CopyTextureLayer nil", d.CopyTextureLayer(tex, 0, nil, 0)},
		{"GenerateMips foreign", d.GenerateMips(foreignTex, 0)},
		{"GenerateMips nil", d.GenerateMips(nil, 0)},
	} {
		wantErr(t, c.what, c.err, device.ErrInvalidObject)
	}
}
