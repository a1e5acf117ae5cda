package device

import "strings"

// Usage is a set of buffer usage flags, with WebGPU's numeric values
// (GPUBufferUsage). A buffer may only be used as its flags allow.
type Usage uint32

// Buffer usage flags.
const (
	MapRead      Usage = 0x0001 // mappable for reading; combines only with CopyDst
	MapWrite     Usage = 0x0002 // mappable for writing; combines only with CopySrc
	CopySrc      Usage = 0x0004 // source of copies, moves and read-back
	CopyDst      Usage = 0x0008 // destination of writes, copies and moves
	Index        Usage = 0x0010 // index buffer
	Vertex       Usage = 0x0020 // vertex buffer
	Uniform      Usage = 0x0040 // uniform buffer
	Storage      Usage = 0x0080 // storage buffer; needed by Patch
	Indirect     Usage = 0x0100 // indirect draw and dispatch arguments
	QueryResolve Usage = 0x0200 // destination of query resolution

	// AllUsage is every flag defined above; any other bit is invalid.
	AllUsage = MapRead | MapWrite | CopySrc | CopyDst | Index | Vertex |
		Uniform | Storage | Indirect | QueryResolve
)

// Has reports whether u contains every flag of want.
func (u Usage) Has(want Usage) bool { return u&want == want }

// String returns the flags joined by "|", for example "CopySrc|Storage".
func (u Usage) String() string {
	return flagString(uint64(u), uint64(AllUsage), "MapRead", "MapWrite", "CopySrc", "CopyDst", "Index",
		"Vertex", "Uniform", "Storage", "Indirect", "QueryResolve")
}

// flagString joins the names of the bits set in v (names[i] for bit i),
// then any bits outside known in hex; "0" for none.
func flagString(v, known uint64, names ...string) string {
	if v == 0 {
		return "0"
	}
	var parts []string
	for i, n := range names {
		if v&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if rest := v &^ known; rest != 0 {
		parts = append(parts, "0x"+hex(rest))
	}
	return strings.Join(parts, "|")
}

// Validate reports whether u is a usage WebGPU accepts for a buffer: not
// empty, no unknown bits, MapRead only with CopyDst, MapWrite only with
// CopySrc. The error wraps ErrInvalidUsage.
func (u Usage) Validate() error {
	switch {
	case u == 0:
		return wrap(ErrInvalidUsage, "empty buffer usage")
	case u&^AllUsage != 0:
		return wrap(ErrInvalidUsage, "unknown buffer usage bits in "+u.String())
	case u.Has(MapRead) && u&^(MapRead|CopyDst) != 0:
		return wrap(ErrInvalidUsage, "MapRead combined with more than CopyDst: "+u.String())
	case u.Has(MapWrite) && u&^(MapWrite|CopySrc) != 0:
		return wrap(ErrInvalidUsage, "MapWrite combined with more than CopySrc: "+u.String())
	}
	return nil
}

// BufferDesc describes a buffer to create.
type BufferDesc struct {
	// Label names the buffer in errors and debuggers; it may be empty.
	Label string
	// Size in bytes: nonzero, a multiple of CopyAlignment, at most
	// Limits.MaxBufferSize.
	Size uint64
	// Usage says what the buffer may be used for; see Usage.Validate.
	Usage Usage
}

// Buffer is a range of device memory created by Device.CreateBuffer. Its
// contents start zeroed. A Buffer belongs to its device and is used through
// the device's methods.
type Buffer interface {
	// Desc returns the descriptor the buffer was created with.
	Desc() BufferDesc
	// Size returns the buffer's size in bytes: Desc().Size.
	Size() uint64
	// Release ends gpumem's use of the buffer: later use through the
	// device returns ErrReleased. A backend whose objects a renderer can
	// name (webgpu) frees the memory only once a fence marked after the
	// call (Device.Fence) has completed, so that work recorded in the
	// frame that released it, by gpumem or by the renderer, may still
	// name it; the host backend frees it at once. It is idempotent and
	// never fails, even on a lost device.
	Release()
}
