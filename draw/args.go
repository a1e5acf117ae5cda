package draw

import "encoding/binary"

// ArgsBytes is the size of one Args on the device.
const ArgsBytes = 20

// Args are the arguments of one DrawIndexedIndirect, as the device reads
// them: five little-endian 32-bit words in this order.
type Args struct {
	IndexCount    uint32
	InstanceCount uint32
	FirstIndex    uint32
	BaseVertex    int32
	FirstInstance uint32
}

// Word indices of the fields a move changes, within a record.
const (
	wordFirstIndex = 2
	wordBaseVertex = 3
)

// Append appends a's ArgsBytes bytes to b.
func (a Args) Append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, a.IndexCount)
	b = binary.LittleEndian.AppendUint32(b, a.InstanceCount)
	b = binary.LittleEndian.AppendUint32(b, a.FirstIndex)
	b = binary.LittleEndian.AppendUint32(b, uint32(a.BaseVertex))
	return binary.LittleEndian.AppendUint32(b, a.FirstInstance)
}

// ParseArgs returns the Args in b's first ArgsBytes bytes; b must hold
// them.
func ParseArgs(b []byte) Args {
	_ = b[ArgsBytes-1]
	return Args{
		IndexCount:    binary.LittleEndian.Uint32(b),
		InstanceCount: binary.LittleEndian.Uint32(b[4:]),
		FirstIndex:    binary.LittleEndian.Uint32(b[8:]),
		BaseVertex:    int32(binary.LittleEndian.Uint32(b[12:])),
		FirstInstance: binary.LittleEndian.Uint32(b[16:]),
	}
}
