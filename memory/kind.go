package memory

import "fmt"

// Kind is what a buffer is: which manager holds it and the part it plays
// there. Each manager sets the kinds of the buffers it shows; a program
// decides what to do with a buffer by its Kind and the properties below,
// never by its name. The zero Kind, Other, is a buffer that says nothing:
// built by hand or shown by a holder outside gpumem.
type Kind uint8

// The kinds of buffers, and the managers that show them. Their String is
// their name in inspect's JSON dump.
const (
	Other        Kind = iota // "": built by hand, or by a holder outside gpumem
	ArenaBuffer              // "arena": an arena.Arena shown through its Holder or Snapshot
	VertexSlab               // "vertex slab": mesh.Allocator's slab of vertex arrays of one stride
	IndexSlab                // "index slab": mesh.Allocator's slab of index arrays of one format
	VertexBuffer             // "vertex buffer": one mesh's vertex array in a buffer of its own
	IndexBuffer              // "index buffer": one mesh's index array in a buffer of its own
	MeshletArena             // "meshlet arena": one of meshlet.Manager's two arenas (data words, rows)
	TexturePage              // "texture page": a bindless.Registry page, a texture array
	RingBuffer               // "ring buffer": ring.Buffer's buffer, or one it grew out of
	FrameBlock               // "frame block": a block of ring.Frame
	StagingChunk             // "staging chunk": a chunk of staging.Belt
	PoolBuffer               // "pool buffer": a buffer of pool.Pool, leased or idle
	// "prepared buffer": a buffer made ahead of an arena's next growth
	// (arena.Options.GrowAhead), all free: the growth makes it the arena's
	// buffer, or gives it up.
	PreparedBuffer
	numKinds
)

var kindNames = [numKinds]string{"", "arena", "vertex slab", "index slab", "vertex buffer", "index buffer",
	"meshlet arena", "texture page", "ring buffer", "frame block", "staging chunk", "pool buffer", "prepared buffer"}

// String returns the kind's name ("vertex slab"); "" for Other.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Compacts reports whether the manager of a buffer of kind k moves the
// allocations in it to pack its free space (sweeps, compaction): their
// offsets change, and the buffer's fragmentation is the manager's to
// bound. True for slabs and arenas.
func (k Kind) Compacts() bool {
	switch k {
	case ArenaBuffer, VertexSlab, IndexSlab, MeshletArena:
		return true
	}
	return false
}

// Rebinds reports whether a buffer of kind k that is new or was replaced
// (grown) means rebuilding what binds it (bind groups, vertex and index
// bindings). False for buffers lent for one frame or one lease (frame
// blocks, staging chunks, pool buffers), which a renderer binds afresh
// each time it gets one, and for prepared buffers, bound by nothing until
// a growth takes them (then the grown buffer rebinds); true for the rest,
// Other included.
func (k Kind) Rebinds() bool {
	switch k {
	case FrameBlock, StagingChunk, PoolBuffer, PreparedBuffer:
		return false
	}
	return true
}

// MarshalText returns the kind's String; a kind outside the constants
// above is an error.
func (k Kind) MarshalText() ([]byte, error) {
	if k >= numKinds {
		return nil, fmt.Errorf("%w: %v", ErrInvalidBuffer, k)
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText sets k to the kind whose String is text; any other text
// is an error wrapping ErrInvalidBuffer.
func (k *Kind) UnmarshalText(text []byte) error {
	for i, n := range kindNames {
		if n == string(text) {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown buffer kind %q", ErrInvalidBuffer, text)
}
