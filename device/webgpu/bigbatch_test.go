//go:build cgo || js

package webgpu_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/device/webgpu"
	"github.com/gpumem/gpumem/internal/testdevice"
)

// Batches larger than one storage binding or one buffer holds of their
// work table: Patch, CheckGuards and Move split the table into as many
// bindings, dispatches and table buffers as the limits require, and give
// the host backend's results. Each case runs on a device with small
// limits (quick) and at WebGPU's default limits with the smallest batch
// past them; those that take more than a few seconds on lavapipe are long
// cases.

// smallLimits crosses the table limits with batches of some ten thousand
// entries: 256 KiB bindings, 1 MiB buffers (a move table of 768 KiB).
var smallLimits = device.Limits{MaxBufferSize: 1 << 20, MaxStorageBufferBindingSize: 256 << 10}

// bigCase is one limit setting of a big-batch test: the device's limits
// and a batch size just past them.
type bigCase struct {
	name   string
	limits device.Limits // zero: WebGPU's defaults
	n      int           // the batch's length
	size   uint64        // the buffer's bytes, where the test lets a case choose
	rounds int           // batches recorded before the result is read, where the test lets a case choose
	long   bool          // a long case: see testdevice.Long
}

// bigDevices opens a webgpu device with c's limits and a host device with
// the same limits.
func bigDevices(t *testing.T, c bigCase) (gpu, cpu device.Device) {
	if c.long {
		testdevice.Long(t)
	}
	gpu = testdevice.WebGPU(t, webgpu.Options{Limits: c.limits})
	cpu = testdevice.Host(t, host.Options{Limits: c.limits})
	return gpu, cpu
}

// bigBuffer creates a buffer of size bytes on each device, filled with the
// same pseudo-random bytes.
func bigBuffer(t *testing.T, devs []device.Device, size uint64, usage device.Usage, seed uint64) []device.Buffer {
	data := make([]byte, size)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i < len(data); i += 8 {
		binary.LittleEndian.PutUint64(data[i:], r.Uint64())
	}
	var bufs []device.Buffer
	for _, d := range devs {
		b, err := d.CreateBuffer(device.BufferDesc{Label: "big batch", Size: size, Usage: usage})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.WriteBuffer(b, 0, data); err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
	}
	return bufs
}

// sameBytes reads bufs back and fails t unless the webgpu buffer (first)
// holds the host's bytes (second); it compares checksums and names the
// first word that differs.
func sameBytes(t *testing.T, devs []device.Device, bufs []device.Buffer) {
	t.Helper()
	var got [2][]byte
	for i, d := range devs {
		got[i] = make([]byte, bufs[i].Size())
		if err := d.ReadBuffer(bufs[i], 0, got[i]); err != nil {
			t.Fatal(err)
		}
	}
	if sha256.Sum256(got[0]) == sha256.Sum256(got[1]) {
		return
	}
	for i := 0; i < len(got[0]); i += 4 {
		if !bytes.Equal(got[0][i:i+4], got[1][i:i+4]) {
			t.Fatalf("webgpu and host differ first at byte %d: %x, host %x", i, got[0][i:i+4], got[1][i:i+4])
		}
	}
}

// TestBigPatch patches with more patches than one binding of their table
// (8 bytes a patch) holds: 2^24+1000 at the default 128 MiB; and, with
// small limits, with more than one table buffer holds, in a buffer patched
// through windows.
func TestBigPatch(t *testing.T) {
	for _, c := range []bigCase{
		{name: "small limits", limits: smallLimits, n: 256<<10/8 + 1000, size: 128 << 10},
		{name: "small limits windows", limits: smallLimits, n: 1<<20/8 + 1000, size: 768 << 10},
		{name: "default limits", n: 1<<24 + 1000, size: 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			gpu, cpu := bigDevices(t, c)
			devs := []device.Device{gpu, cpu}
			bufs := bigBuffer(t, devs, c.size, device.Storage|device.CopySrc|device.CopyDst, 1)
			r := rand.New(rand.NewPCG(2, 2))
			patches := make([]device.Patch, c.n)
			for i := range patches {
				patches[i] = device.Patch{Index: r.Uint32N(uint32(c.size / 4)), Delta: r.Uint32()}
			}
			for i, d := range devs {
				if err := d.Patch(bufs[i], patches); err != nil {
					t.Fatalf("%d patches: %v", len(patches), err)
				}
			}
			sameBytes(t, devs, bufs)
		})
	}
}

// TestBigCheckGuards checks more guards than one binding of their table
// (8 bytes a guard) holds: 2^24+1000 at the default 128 MiB.
func TestBigCheckGuards(t *testing.T) {
	for _, c := range []bigCase{
		{name: "small limits", limits: smallLimits, n: 256<<10/8 + 1000},
		{name: "default limits", n: 1<<24 + 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			gpu, cpu := bigDevices(t, c)
			devs := []device.Device{gpu, cpu}
			const size = 128 << 10
			const pattern = 0xfdfdfdfd
			fill := bytes.Repeat([]byte{0xfd}, size)
			var bufs []device.Buffer
			for _, d := range devs {
				b, err := d.CreateBuffer(device.BufferDesc{Label: "guarded", Size: size, Usage: device.Storage | device.CopySrc | device.CopyDst})
				if err != nil {
					t.Fatal(err)
				}
				if err := d.WriteBuffer(b, 0, fill); err != nil {
					t.Fatal(err)
				}
				// A few words broken, some in the guards past the
				// first binding's share.
				for _, off := range []uint64{0, 4096, size/2 + 12, size - 4} {
					if err := d.WriteBuffer(b, off, []byte{1, 2, 3, 4}); err != nil {
						t.Fatal(err)
					}
				}
				bufs = append(bufs, b)
			}
			r := rand.New(rand.NewPCG(3, 3))
			guards := make([]device.Guard, c.n)
			for i := range guards {
				words := 1 + r.Uint64N(4)
				guards[i] = device.Guard{Offset: 4 * r.Uint64N(size/4-words+1), Size: 4 * words}
			}
			guards[c.n-1] = device.Guard{Offset: size - 8, Size: 8} // the last guard is bad
			var bad [2][]int
			for i, d := range devs {
				var err error
				bad[i], err = device.CheckGuards(d, bufs[i], guards, pattern, nil)
				if err != nil {
					t.Fatalf("%d guards: %v", len(guards), err)
				}
			}
			if !slices.Equal(bad[0], bad[1]) {
				t.Fatalf("webgpu finds %d bad guards, host %d", len(bad[0]), len(bad[1]))
			}
			if len(bad[0]) == 0 || bad[0][len(bad[0])-1] != c.n-1 {
				t.Fatalf("the last guard, broken, not found bad")
			}
		})
	}
}

// TestBigMove runs a batch of moves whose table (16 bytes a 4-byte move)
// is more than a table buffer holds below its last binding's window: past
// 128 MiB of a 256 MiB buffer at the defaults. The batch
// gathers every fourth word to the buffer's start, a sweep whose levels
// chain (word i's destination is word i/4's source), so the table's cuts
// fall between dependent dispatches; the buffer is larger than a binding,
// so the words are moved through windows. With small limits the batch
// runs twice before the read: the second's tables go where the first's
// were, in one encoder.
func TestBigMove(t *testing.T) {
	for _, c := range []bigCase{
		{name: "small limits", limits: smallLimits, n: 768<<10/16 + 1000, rounds: 2},
		{name: "default limits", n: 128<<20/16 + 1000, rounds: 1, long: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			gpu, cpu := bigDevices(t, c)
			devs := []device.Device{gpu, cpu}
			size := uint64(16 * c.n)
			bufs := bigBuffer(t, devs, size, device.CopySrc|device.CopyDst, 4)
			moves := make([]device.Move, c.n)
			for i := range moves {
				moves[i] = device.Move{Src: 16 * uint64(i), Dst: 4 * uint64(i), Size: 4}
			}
			for range c.rounds {
				for i, d := range devs {
					if err := d.Move(bufs[i], moves); err != nil {
						t.Fatalf("%d moves: %v", len(moves), err)
					}
				}
			}
			sameBytes(t, devs, bufs)
		})
	}
}
