package device

// Views. A layer over a device (a budget's account, say) may hand out its
// own Buffer and Texture values that stand for the backend's: it gives
// them an Unwrap method returning what they stand for. Backends resolve
// every buffer and texture argument through UnwrapBuffer and
// UnwrapTexture, so a view can be passed wherever its object can, to the
// layer or straight to the backend (a renderer asking webgpu.Device for
// the binding's buffer behind a manager's view, for one).

// UnwrapBuffer returns the buffer b stands for: b itself unless b has an
// Unwrap() Buffer method, in which case what Unwrap returns, unwrapped in
// turn. A nil from Unwrap ends the walk with nil.
func UnwrapBuffer(b Buffer) Buffer {
	for {
		v, ok := b.(interface{ Unwrap() Buffer })
		if !ok {
			return b
		}
		if b = v.Unwrap(); b == nil {
			return nil
		}
	}
}

// UnwrapTexture is UnwrapBuffer for textures: Unwrap() Texture.
func UnwrapTexture(t Texture) Texture {
	for {
		v, ok := t.(interface{ Unwrap() Texture })
		if !ok {
			return t
		}
		if t = v.Unwrap(); t == nil {
			return nil
		}
	}
}
