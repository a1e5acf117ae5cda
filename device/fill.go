package device

// A Filler is a Device that lets a caller write a buffer's bytes in place:
// into a MapWrite buffer's mapping, with no copy of the caller's own. Use
// it through FillBuffer, which serves every device.
type Filler interface {
	// FillBuffer is WriteBuffer with the bytes written by fill instead of
	// copied from a slice; see FillBuffer.
	FillBuffer(buf Buffer, offset, size uint64, fill func(dst []byte)) error
}

// FillBuffer writes size bytes to buf at offset, as fill writes them:
// fill gets a slice of exactly size bytes, must write every byte of it
// (what it holds on entry is unspecified) and must not keep it; it is
// called once, unless size is 0 or the arguments are refused. The rules
// and errors are WriteBuffer's. On a Filler, a MapWrite buffer is written
// in place, saving a copy of size bytes on the upload path (a staging
// belt fills its chunks this way); on other devices, or other buffers,
// fill writes into scratch that WriteBuffer then copies, allocated per
// call.
func FillBuffer(dev Device, buf Buffer, offset, size uint64, fill func(dst []byte)) error {
	if f, ok := dev.(Filler); ok {
		return f.FillBuffer(buf, offset, size, fill)
	}
	if size == 0 {
		return dev.WriteBuffer(buf, offset, nil)
	}
	tmp := make([]byte, size)
	fill(tmp)
	return dev.WriteBuffer(buf, offset, tmp)
}
