package device

// Move copies Size bytes from offset Src to offset Dst of the same buffer.
// Src, Dst and Size are multiples of CopyAlignment; both ranges lie inside
// the buffer. The ranges may overlap.
type Move struct {
	Src, Dst, Size uint64
}

// Patch adds Delta, modulo 2^32, to the little-endian 32-bit word at word
// index Index (byte offset 4*Index) of a buffer: the GPU-side fix-up of an
// address stored in data that moved.
type Patch struct {
	Index uint32
	Delta uint32
}

// Device creates buffers and textures and runs operations on them, in call
// order. See the package documentation for units, ordering, errors and
// concurrency; every method below returns ErrDeviceLost once the device is
// lost and ErrReleased after Device.Release, and ErrInvalidObject for a nil
// or foreign buffer or texture.
//
// Costs are the host backend's; a GPU backend records commands instead, and
// the cost of the work moves to the GPU.
type Device interface {
	// Limits returns the device's limits. It never fails and does not
	// allocate.
	Limits() Limits

	// CreateBuffer creates a zeroed buffer. It fails with
	// ErrInvalidDescriptor (zero size), ErrInvalidAlignment (size not a
	// multiple of 4), ErrInvalidUsage (see Usage.Validate), ErrTooLarge
	// (size over Limits.MaxBufferSize) or ErrOutOfMemory. It allocates the
	// buffer's memory.
	CreateBuffer(desc BufferDesc) (Buffer, error)

	// CreateTexture creates a zeroed 2D-array texture. It fails with
	// ErrInvalidDescriptor, ErrInvalidUsage, ErrTooLarge or ErrOutOfMemory;
	// see TextureDesc.Validate. It allocates the texture's memory.
	CreateTexture(desc TextureDesc) (Texture, error)

	// WriteBuffer writes data to buf at offset. buf needs CopyDst or
	// MapWrite; offset and len(data) are multiples of 4
	// (ErrInvalidAlignment) and the range lies inside buf
	// (ErrOutOfBounds). The data is copied before the call returns: the
	// caller may reuse data at once. Writing zero bytes is valid and does
	// nothing. O(len(data)).
	//
	// A MapWrite buffer is written through a mapping, straight into the
	// memory the GPU copies from: the upload path without a staging copy
	// (a GPU backend's CopyDst write stages the bytes first). The mapping
	// needs the GPU to have finished every submitted copy from the
	// buffer, so a write to a MapWrite buffer that recorded or submitted
	// work still reads waits for that work (it submits and blocks); a
	// caller that reuses such buffers only after their fence completes
	// never waits.
	WriteBuffer(buf Buffer, offset uint64, data []byte) error

	// ReadBuffer fills dst with buf's bytes from offset, after every
	// earlier call has taken effect: it submits and waits. buf needs
	// CopySrc or MapRead; offset and len(dst) are multiples of 4 and the
	// range lies inside buf. Meant for tests and inspection, not for the
	// frame loop. O(len(dst)).
	ReadBuffer(buf Buffer, offset uint64, dst []byte) error

	// CopyBuffer copies size bytes from src at srcOffset to dst at
	// dstOffset. src needs CopySrc, dst needs CopyDst (ErrInvalidUsage);
	// offsets and size are multiples of 4; both ranges lie inside their
	// buffers. src and dst must differ (ErrSameBuffer): use Move within one
	// buffer. O(size).
	CopyBuffer(src Buffer, srcOffset uint64, dst Buffer, dstOffset, size uint64) error

	// Move applies moves to buf with the exact result of doing them one by
	// one, in order, each as a memmove: moves may overlap each other and
	// themselves, forward or backward. A compaction sweep is such a batch:
	// each block slides down into the space the previous one left. buf
	// needs CopySrc and CopyDst; every move is checked as a Move's doc says
	// before any runs. An empty batch, or a move of zero bytes, does
	// nothing. O(total bytes moved); the host backend does not allocate.
	Move(buf Buffer, moves []Move) error

	// Patch applies patches to buf: the word at each Index gets Delta added
	// modulo 2^32. Several patches of one index add up, in any order. buf
	// needs Storage (backends patch in a compute shader); every Index is
	// below Size/4 (ErrOutOfBounds), checked before any patch runs.
	// O(len(patches)); the host backend does not allocate.
	Patch(buf Buffer, patches []Patch) error

	// WriteTexture writes one layer's mip level mip of tex from data:
	// tightly packed rows, top row first, exactly TextureDesc.MipBytes(mip)
	// bytes (ErrInvalidSize). tex needs TextureCopyDst and one sample;
	// layer and mip exist (ErrOutOfBounds). The data is copied before the
	// call returns.
	WriteTexture(tex Texture, layer, mip uint32, data []byte) error

	// CopyBufferToTexture records a copy of one layer's mip level mip of
	// tex from src: the mip's rows, top row first, the first at srcOffset
	// and each bytesPerRow after the one above it. bytesPerRow is a
	// multiple of BytesPerRowAlignment and at least a row's bytes, and
	// srcOffset a multiple of CopyAlignment and of the format's texel size
	// (ErrInvalidAlignment); the rows lie inside src (ErrOutOfBounds). src needs
	// CopySrc; tex needs TextureCopyDst and one sample, and layer and mip
	// exist (ErrOutOfBounds); see CheckBufferTexture. The bytes between
	// rows are not read. It is how a staging belt uploads a texture
	// (staging.Belt.UploadTexture).
	CopyBufferToTexture(src Buffer, srcOffset uint64, bytesPerRow uint32, tex Texture, layer, mip uint32) error

	// ReadTexture fills dst, laid out as WriteTexture's data, with one
	// layer's mip level of tex, after every earlier call has taken effect:
	// it submits and waits. tex needs TextureCopySrc and one sample. Meant
	// for tests and inspection.
	ReadTexture(tex Texture, layer, mip uint32, dst []byte) error

	// CopyTextureLayer copies layer srcLayer of src, every mip, to layer
	// dstLayer of dst. src needs TextureCopySrc, dst TextureCopyDst; the
	// textures have the same format, width, height, mip count and sample
	// count (ErrIncompatible); both layers exist (ErrOutOfBounds). src and
	// dst may be the same texture with different layers; a layer copied
	// onto itself is ErrInvalidUsage.
	CopyTextureLayer(src Texture, srcLayer uint32, dst Texture, dstLayer uint32) error

	// GenerateMips recomputes mips 1 to Mips-1 of layer of tex, each from
	// the one above it, with a 2x2 box filter every backend computes
	// exactly alike. Texel (x, y) of mip n is the average of texels
	// (2x, 2y), (2x+1, 2y), (2x, 2y+1), (2x+1, 2y+1) of mip n-1 (a, b, c, d
	// in that order), each coordinate clamped to mip n-1's extent; per
	// channel:
	//
	//	8-bit formats (sRGB included, on encoded bytes): (a+b+c+d+2)/4, in integers
	//	R32Float, RGBA32Float: ((a+b)+(c+d))*0.25 in float32
	//	RGBA16Float: as float32, then rounded to the nearest half, ties to even
	//
	// 8-bit results are exact on every backend. Float results may differ
	// from the formula by a unit or two in the last place on a GPU (shader
	// compilers may reassociate the sum, round to half differently, or
	// flush denormals); the conformance suite allows 2 units for float32
	// and 1 for half, and the host backend is exact.
	// tex needs TextureCopySrc and TextureCopyDst and one sample; a texture
	// with one mip is left alone.
	GenerateMips(tex Texture, layer uint32) error

	// Submit hands the work recorded so far to the GPU. It does not wait.
	// It may report an asynchronous failure of earlier work
	// (ErrOutOfMemory, ErrDeviceLost).
	Submit() error

	// Wait submits what is recorded and blocks until everything submitted
	// has finished on the GPU. After it returns nil, Completed reports the
	// last fence, and every object released before that fence was marked
	// has been freed (see Buffer.Release).
	Wait() error

	// Fence submits the work recorded so far, as Submit does, and returns
	// a fence for it: a number one above the previous Fence's (the first
	// is 1). Completed reaches the fence once the GPU has finished that
	// work and everything submitted before it. It does not wait. Per-frame
	// allocators tag what a frame used with the fence that ends the frame.
	Fence() (uint64, error)

	// Completed returns the newest fence whose work the GPU has finished;
	// every lower fence is finished too. It is 0 before the first Fence,
	// never above the last Fence returned, and never decreases. It does
	// not block (a GPU backend polls its queue) and does not allocate.
	Completed() (uint64, error)

	// Release releases every buffer and texture the device still holds,
	// then the device itself. It is idempotent and never fails; later calls
	// return ErrReleased.
	Release()
}
