package host

import (
	"fmt"
	"math/bits"

	"github.com/gpumem/gpumem/device"
)

// Options configure a Device. The zero value is a device with WebGPU's
// default limits and no faults armed.
type Options struct {
	// Limits the device enforces and reports. A zero field takes
	// device.DefaultLimits' value, so a test sets only what it changes:
	// Options{Limits: device.Limits{MaxBufferSize: 1 << 20}}.
	Limits device.Limits

	// FailCreateAt, when positive, makes the FailCreateAt-th creation fail
	// with device.ErrOutOfMemory, counting from 1 every CreateBuffer and
	// CreateTexture call that passes validation.
	FailCreateAt int

	// ByteBudget, when positive, makes any creation fail with
	// device.ErrOutOfMemory that would raise the bytes alive (Stats.Bytes)
	// above it.
	ByteBudget uint64

	// LoseAfterSubmits, when positive, loses the device once that many
	// Submit calls have returned nil: every later call returns
	// device.ErrDeviceLost. Only Submit counts, not Wait or reads.
	LoseAfterSubmits int

	// HoldCompletion, when true, keeps fences from completing until the
	// test lets them through with Device.Complete, or Wait completes them
	// all: the host's stand-in for a GPU still reading a frame's memory.
	// Operations still take effect at once.
	HoldCompletion bool
}

// limits returns o.Limits with zero fields defaulted, or an error wrapping
// ErrInvalidOptions.
func (o Options) limits() (device.Limits, error) {
	l, d := o.Limits, device.DefaultLimits()
	fill64 := func(v *uint64, def uint64) {
		if *v == 0 {
			*v = def
		}
	}
	fill32 := func(v *uint32, def uint32) {
		if *v == 0 {
			*v = def
		}
	}
	fill64(&l.MaxBufferSize, d.MaxBufferSize)
	fill64(&l.MaxStorageBufferBindingSize, d.MaxStorageBufferBindingSize)
	fill64(&l.MaxUniformBufferBindingSize, d.MaxUniformBufferBindingSize)
	fill32(&l.UniformOffsetAlignment, d.UniformOffsetAlignment)
	fill32(&l.StorageOffsetAlignment, d.StorageOffsetAlignment)
	fill32(&l.MaxTextureSize2D, d.MaxTextureSize2D)
	fill32(&l.MaxArrayLayers, d.MaxArrayLayers)
	fill32(&l.CopyAlignment, d.CopyAlignment)
	fill32(&l.MapAlignment, d.MapAlignment)
	switch {
	case l.CopyAlignment != device.CopyAlignment:
		return l, fmt.Errorf("CopyAlignment %d, want %d: %w", l.CopyAlignment, device.CopyAlignment, ErrInvalidOptions)
	case l.MapAlignment != device.MapAlignment:
		return l, fmt.Errorf("MapAlignment %d, want %d: %w", l.MapAlignment, device.MapAlignment, ErrInvalidOptions)
	case bits.OnesCount32(l.UniformOffsetAlignment) != 1 || bits.OnesCount32(l.StorageOffsetAlignment) != 1:
		return l, fmt.Errorf("offset alignments %d, %d not powers of two: %w", l.UniformOffsetAlignment, l.StorageOffsetAlignment, ErrInvalidOptions)
	case l.UniformOffsetAlignment < 4 || l.StorageOffsetAlignment < 4:
		return l, fmt.Errorf("offset alignments %d, %d under 4: %w", l.UniformOffsetAlignment, l.StorageOffsetAlignment, ErrInvalidOptions)
	case l.MaxBufferSize < device.CopyAlignment:
		return l, fmt.Errorf("MaxBufferSize %d: %w", l.MaxBufferSize, ErrInvalidOptions)
	case o.FailCreateAt < 0 || o.LoseAfterSubmits < 0:
		return l, fmt.Errorf("negative fault count: %w", ErrInvalidOptions)
	}
	return l, nil
}
