package devicetest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpumem/gpumem/device"
)

// Run runs the conformance suite: one subtest per area, each on a fresh
// device from open. Run releases every device open returns when its subtest
// ends; open may register its own cleanup too (Release is idempotent), and
// may call t.Skip when no device is available.
func Run(t *testing.T, open func(t *testing.T) device.Device) {
	s := &suite{open: open}
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, s *suite)
	}{
		{"Limits", testLimits},
		{"CreateBuffer", testCreateBuffer},
		{"Prepare", testPrepare},
		{"PrepareTexture", testPrepareTexture},
		{"WriteRead", testWriteRead},
		{"CopyBuffer", testCopyBuffer},
		{"MapWrite", testMapWrite},
		{"FillBuffer", testFillBuffer},
		{"CheckGuards", testCheckGuards},
		{"MoveSizeClasses", testMoveSizeClasses},
		{"MoveLarge", testMoveLarge},
		{"MoveSweep", testMoveSweep},
		{"MoveRandomBatch", testMoveRandomBatch},
		{"MoveManySmall", testMoveManySmall},
		{"MoveErrors", testMoveErrors},
		{"MoveBeyondStorageBinding", testMoveBeyondStorageBinding},
		{"Patch", testPatch},
		{"PatchErrors", testPatchErrors},
		{"Order", testOrder},
		{"CreateTexture", testCreateTexture},
		{"WriteReadTexture", testWriteReadTexture},
		{"TextureErrors", testTextureErrors},
		{"CopyTextureLayer", testCopyTextureLayer},
		{"CopyBufferToTexture", testCopyBufferToTexture},
		{"CopyBufferToTextureLayers", testCopyBufferToTextureLayers},
		{"CopyBufferToTextureRandom", testCopyBufferToTextureRandom},
		{"GenerateMips", testGenerateMips},
		{"TextureOrder", testTextureOrder},
		{"Multisampled", testMultisampled},
		{"Fences", testFences},
		{"FenceAfterRelease", testFenceAfterRelease},
		{"Timer", testTimer},
		{"Release", testRelease},
		{"ForeignAndNil", testForeignAndNil},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, s) })
	}
}

type suite struct {
	open func(t *testing.T) device.Device
}

// device opens a device released when t ends.
func (s *suite) device(t *testing.T) device.Device {
	t.Helper()
	d := s.open(t)
	if d == nil {
		t.Fatal("open returned a nil device")
	}
	t.Cleanup(d.Release)
	return d
}

// Usage sets the suite's buffers use.
const (
	rw      = device.CopySrc | device.CopyDst
	rwStore = rw | device.Storage
)

// newRand returns a deterministic generator for a named case.
func newRand(name string) *rand.Rand {
	var seed [32]byte
	copy(seed[:], name)
	return rand.New(rand.NewChaCha8(seed))
}

// randBytes returns n pseudo-random bytes.
func randBytes(r *rand.Rand, n uint64) []byte {
	b := make([]byte, n)
	for i := uint64(0); i+8 <= n; i += 8 {
		v := r.Uint64()
		b[i], b[i+1], b[i+2], b[i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		b[i+4], b[i+5], b[i+6], b[i+7] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

func mustBuffer(t *testing.T, d device.Device, size uint64, usage device.Usage) device.Buffer {
	t.Helper()
	b, err := d.CreateBuffer(device.BufferDesc{Label: t.Name(), Size: size, Usage: usage})
	if err != nil {
		t.Fatalf("CreateBuffer(%d, %v): %v", size, usage, err)
	}
	return b
}

// filled creates a buffer of usage holding random bytes, and returns it
// with a copy of its contents.
func filled(t *testing.T, d device.Device, r *rand.Rand, size uint64, usage device.Usage) (device.Buffer, []byte) {
	t.Helper()
	b := mustBuffer(t, d, size, usage)
	data := randBytes(r, size)
	must(t, d.WriteBuffer(b, 0, data))
	return b, data
}

func read(t *testing.T, d device.Device, b device.Buffer, off, n uint64) []byte {
	t.Helper()
	got := make([]byte, n)
	must(t, d.ReadBuffer(b, off, got))
	return got
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantErr fails t unless err wraps want.
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v, want %v", what, err, want)
	}
}

// equal compares got with want and reports the first differing byte.
func equal(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	i := 0
	for got[i] == want[i] {
		i++
	}
	n := 0
	for j := i; j < len(got); j++ {
		if got[j] != want[j] {
			n++
		}
	}
	t.Fatalf("%s: %d bytes differ, first at %d: got % x, want % x", what, n, i,
		got[i:min(i+16, len(got))], want[i:min(i+16, len(want))])
}

// check reads all of b and compares it with want.
func check(t *testing.T, d device.Device, b device.Buffer, want []byte) {
	t.Helper()
	equal(t, fmt.Sprintf("buffer of %d bytes", len(want)), read(t, d, b, 0, uint64(len(want))), want)
}

// needBuffer skips t when the device cannot hold a buffer of size bytes.
func needBuffer(t *testing.T, d device.Device, size uint64) {
	t.Helper()
	if m := d.Limits().MaxBufferSize; size > m {
		t.Skipf("needs a buffer of %d bytes; MaxBufferSize is %d", size, m)
	}
}
