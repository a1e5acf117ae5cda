package device

// Alignments fixed by WebGPU, the same on every adapter.
const (
	// CopyAlignment is the alignment in bytes of every buffer offset and
	// size in writes, reads, copies and moves (COPY_BUFFER_ALIGNMENT).
	CopyAlignment = 4

	// MapAlignment is the alignment in bytes of the offset of a buffer
	// mapping (MAP_ALIGNMENT).
	MapAlignment = 8

	// BytesPerRowAlignment is the alignment of a row in a texture copy
	// through a buffer (COPY_BYTES_PER_ROW_ALIGNMENT). The Device interface
	// takes tightly packed rows; backends pad internally.
	BytesPerRowAlignment = 256
)

// Limits are what a device can do, as its adapter reports them. Every
// backend enforces them: a creation that exceeds one returns ErrTooLarge.
type Limits struct {
	// MaxBufferSize is the largest buffer in bytes (WebGPU default 256 MiB).
	MaxBufferSize uint64
	// MaxStorageBufferBindingSize is the largest range of a buffer one
	// storage binding can see, in bytes (WebGPU default 128 MiB).
	MaxStorageBufferBindingSize uint64
	// MaxUniformBufferBindingSize is the largest range of a buffer one
	// uniform binding can see, in bytes (WebGPU default 64 KiB).
	MaxUniformBufferBindingSize uint64
	// UniformOffsetAlignment is the alignment in bytes of a uniform
	// binding's offset, a power of two (WebGPU default 256).
	UniformOffsetAlignment uint32
	// StorageOffsetAlignment is the alignment in bytes of a storage
	// binding's offset, a power of two (WebGPU default 256).
	StorageOffsetAlignment uint32
	// MaxTextureSize2D is the largest width and height of a 2D texture in
	// texels (WebGPU default 8192).
	MaxTextureSize2D uint32
	// MaxArrayLayers is the most layers of a 2D-array texture (WebGPU
	// default 256).
	MaxArrayLayers uint32
	// CopyAlignment is always the constant CopyAlignment (4); it is here so
	// that code handed a Limits value has every number it needs.
	CopyAlignment uint32
	// MapAlignment is always the constant MapAlignment (8).
	MapAlignment uint32
}

// DefaultLimits returns WebGPU's default limits: what every conforming
// adapter supports at least.
func DefaultLimits() Limits {
	return Limits{
		MaxBufferSize:               256 << 20,
		MaxStorageBufferBindingSize: 128 << 20,
		MaxUniformBufferBindingSize: 64 << 10,
		UniformOffsetAlignment:      256,
		StorageOffsetAlignment:      256,
		MaxTextureSize2D:            8192,
		MaxArrayLayers:              256,
		CopyAlignment:               CopyAlignment,
		MapAlignment:                MapAlignment,
	}
}
