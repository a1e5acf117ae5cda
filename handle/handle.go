package handle

import "strconv"

// Handle names one live object: an index in its low 32 bits and the index's
// generation in its high 32 bits. The zero Handle is never live. Handles are
// comparable and may be used as map keys.
type Handle uint64

// Pack returns the Handle of index and generation.
func Pack(index, generation uint32) Handle {
	return Handle(uint64(generation)<<32 | uint64(index))
}

// Index returns h's index.
func (h Handle) Index() uint32 { return uint32(h) }

// Generation returns h's generation.
func (h Handle) Generation() uint32 { return uint32(h >> 32) }

// String returns h as index.generation, for example "7.2".
func (h Handle) String() string {
	return strconv.FormatUint(uint64(h.Index()), 10) + "." + strconv.FormatUint(uint64(h.Generation()), 10)
}
