package webgpu

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gpumem/gpumem/device"
)

// newTestDevice opens a device or skips t (fails it in CI), as
// webgpu_test.go's openDevice does.
func newTestDevice(t testing.TB, opts Options) *Device {
	t.Helper()
	d, err := New(opts)
	if errors.Is(err, ErrNoAdapter) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must run the webgpu tests: %v", err)
		}
		t.Skipf("no WebGPU adapter (on Debian without a GPU: apt-get install mesa-vulkan-drivers): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Release)
	return d
}

// TestMoveChains runs batches of chains of overlapping moves (sweeps,
// chains, slides over themselves, random moves) through both paths and
// compares every byte with the moves done one by one in Go.
func TestMoveChains(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"compute", Options{Moves: MoveCompute}},
		{"copy", Options{Moves: MoveCopy}},
		// Small bindings: windows, and passes cut by the scratch size.
		{"compute/windows", Options{Moves: MoveCompute, Limits: device.Limits{MaxStorageBufferBindingSize: 64 << 10}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newTestDevice(t, c.opts)
			r := rand.New(rand.NewPCG(3, 4))
			const size = 256 << 10
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
// still uses it is destroyed only at the next Wait, and that the work runs.
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
	if err := d.Move(a, []device.Move{{Src: 0, Dst: 4096, Size: 1<<20 - 4096}}); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyBuffer(a, 0, b, 0, 1<<20); err != nil {
		t.Fatal(err)
	}
	a.Release()
	if len(d.graveBuffers) == 0 {
		t.Fatal("released buffer not kept for the recorded work")
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(d.graveBuffers) != 0 {
		t.Fatalf("%d buffers left to destroy after Wait", len(d.graveBuffers))
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
