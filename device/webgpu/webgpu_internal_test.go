//go:build cgo

package webgpu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
	"reflect"
	"unsafe"
)

// TestMoveChains runs batches of chains of overlapping moves (sweeps,
// chains, slides over themselves, random moves), and every other batch a
// whole compaction sweep (levels, blocks over themselves, sources and
// destinations off 16-byte alignment), through both paths and compares
// every byte with the moves done one by one in Go.
func TestMoveChains(t *testing.T) {
	small := device.Limits{MaxStorageBufferBindingSize: 64 << 10}
	for _, c := range []struct {
		name string
		opts Options
		size uint64
	}{
		{"compute", Options{Moves: MoveCompute}, 256 << 10},
		{"copy", Options{Moves: MoveCopy}, 256 << 10},
		// Small bindings: windows, and passes cut by the scratch size;
		// a size no multiple of the offset alignment has a tail window.
		{"compute/windows", Options{Moves: MoveCompute, Limits: small}, 256 << 10},
		{"compute/windows/tail", Options{Moves: MoveCompute, Limits: small}, 256<<10 + 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newTestDevice(t, c.opts)
			r := rand.New(rand.NewPCG(3, 4))
			size := c.size
			b, err := d.CreateBuffer(device.BufferDesc{Label: "chains", Size: size, Usage: device.CopySrc | device.CopyDst})
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, size)
			for i := range want {
				want[i] = byte(r.Uint32())
			}
			if err := d.WriteBuffer(b, 0, want); err != nil {
				t.Fatal(err)
			}
			for batch := range 20 {
				moves := randomBatch(r, size, 1+r.IntN(200))
				if batch%2 == 1 {
					moves = sweepBatch(r, size-16, 16+r.Uint64N(8192), []uint64{0, 64, 4096}[batch%3])
					srcSkew, dstSkew := uint64(4*r.IntN(2)), uint64(4*r.IntN(3))
					for i := range moves {
						moves[i].Src += srcSkew
						moves[i].Dst += dstSkew
					}
				}
				if err := d.Move(b, moves); err != nil {
					t.Fatal(err)
				}
				refMoves(want, moves)
				if batch%5 == 4 {
					got := make([]byte, size)
					if err := d.ReadBuffer(b, 0, got); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("batch %d: %s", batch, firstDiff(got, want))
					}
				}
			}
		})
	}
}

func firstDiff(got, want []byte) string {
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at byte %d: got % x, want % x", i, got[i:min(i+8, len(got))], want[i:min(i+8, len(want))])
		}
	}
	return "equal"
}

// TestReleaseDeferred checks that a buffer released while recorded work
// still uses it outlives that work and every Wait until a fence marked
// after its release has completed, and that the work runs.
func TestReleaseDeferred(t *testing.T) {
	d := newTestDevice(t, Options{})
	a, err := d.CreateBuffer(device.BufferDesc{Size: 1 << 20, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.CreateBuffer(device.BufferDesc{Size: 1 << 20, Usage: device.CopySrc | device.CopyDst})
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := d.WriteBuffer(a, 0, data); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Fence(); err != nil {
		t.Fatal(err)
	}
	if err := d.Move(a, []device.Move{{Src: 0, Dst: 4096, Size: 1<<20 - 4096}}); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyBuffer(a, 0, b, 0, 1<<20); err != nil {
		t.Fatal(err)
	}
	a.Release()
	if len(d.dead) != 1 {
		t.Fatalf("%d released objects kept, want 1", len(d.dead))
	}
	for range 2 {
		if err := d.Wait(); err != nil {
			t.Fatal(err)
		}
		if err := d.Submit(); err != nil {
			t.Fatal(err)
		}
		if len(d.dead) != 1 {
			t.Fatal("released buffer destroyed before a fence marked after its release completed")
		}
	}
	if _, err := d.Fence(); err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(d.dead) != 0 {
		t.Fatalf("%d objects left to destroy after their fence completed", len(d.dead))
	}
	want := bytes.Clone(data)
	refMoves(want, []device.Move{{Src: 0, Dst: 4096, Size: 1<<20 - 4096}})
	got := make([]byte, 1<<20)
	if err := d.ReadBuffer(b, 0, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal(firstDiff(got, want))
	}
}

// TestGenerateMipsPaths checks that the compute path and the host fallback
// (taken when a layer's levels do not fit one storage binding) give the
// same bytes as hostMip, level by level.
func TestGenerateMipsPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, f := range []device.TextureFormat{device.RGBA8Unorm, device.R8Unorm, device.RGBA16Float, device.RGBA32Float} {
		desc := device.TextureDesc{Label: f.String(), Format: f, Width: 61, Height: 37, Mips: 6, Usage: device.TextureCopySrc | device.TextureCopyDst}
		mip0 := make([]byte, desc.MipBytes(0))
		for i := range mip0 {
			mip0[i] = byte(r.Uint32())
		}
		// Float formats: normal values in [0.25, 64), so no NaN, infinity
		// or denormal (which a GPU may flush) comes up.
		switch f {
		case device.RGBA32Float:
			for i := 0; i < len(mip0); i += 4 {
				binary.LittleEndian.PutUint32(mip0[i:], math.Float32bits(0.25+64*r.Float32()*0.99))
			}
		case device.RGBA16Float:
			for i := 0; i < len(mip0); i += 2 {
				binary.LittleEndian.PutUint16(mip0[i:], device.Float32ToHalf(0.25+64*r.Float32()*0.99))
			}
		}
		want := [][]byte{mip0}
		for m := uint32(1); m < desc.Mips; m++ {
			want = append(want, hostMip(desc, m, want[m-1]))
		}
		for _, c := range []struct {
			name string
			opts Options
		}{
			{"compute", Options{}},
			{"host", Options{Limits: device.Limits{MaxStorageBufferBindingSize: 4096}}},
		} {
			t.Run(f.String()+"/"+c.name, func(t *testing.T) {
				d := newTestDevice(t, c.opts)
				tex, err := d.CreateTexture(desc)
				if err != nil {
					t.Fatal(err)
				}
				if err := d.WriteTexture(tex, 0, 0, mip0); err != nil {
					t.Fatal(err)
				}
				if err := d.GenerateMips(tex, 0); err != nil {
					t.Fatal(err)
				}
				for m := uint32(1); m < desc.Mips; m++ {
					got := make([]byte, desc.MipBytes(m))
					if err := d.ReadTexture(tex, 0, m, got); err != nil {
						t.Fatal(err)
					}
					if f == device.RGBA16Float {
						// A GPU may round to half 1 unit off.
						for i := 0; i < len(got); i += 2 {
							g, w := int(binary.LittleEndian.Uint16(got[i:])), int(binary.LittleEndian.Uint16(want[m][i:]))
							if g-w > 1 || w-g > 1 {
								t.Fatalf("mip %d half %d: got %#04x, want %#04x", m, i/2, g, w)
							}
						}
						continue
					}
					if !bytes.Equal(got, want[m]) {
						t.Fatalf("mip %d: %s", m, firstDiff(got, want[m]))
					}
				}
			})
		}
	}
}

// rawDevice and rawQueue read the binding's C handles through unsafe
// casts, as the first field of wgpu.Device and wgpu.Queue. This pins that
// layout: a binding that moves the field fails here, not in a crash.
func TestRawHandleLayout(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[wgpu.Device](), reflect.TypeFor[wgpu.Queue]()} {
		f := typ.Field(0)
		if f.Name != "ref" || f.Offset != 0 || f.Type.Kind() != reflect.Pointer || f.Type.Size() != unsafe.Sizeof(unsafe.Pointer(nil)) {
			t.Errorf("%v's first field is %s %v at %d: rawDevice and rawQueue expect the C handle, ref, at 0", typ, f.Name, f.Type, f.Offset)
		}
	}
	d := newTestDevice(t, Options{})
	if rawDevice(d.dev) == nil || rawQueue(d.queue) == nil {
		t.Error("nil raw handle of a live device")
	}
}
