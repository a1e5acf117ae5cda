package memory

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gpumem/gpumem/device"
)

// bufferJSON is a Buffer as JSON: its fields, with the usage flags in
// words under "usage" (device.Usage's or device.TextureUsage's String).
type bufferJSON struct {
	plainBuffer
	Usage string `json:"usage,omitempty"`
}

// plainBuffer is Buffer without its JSON methods.
type plainBuffer Buffer

// MarshalJSON writes b as package inspect's dump schema has it: the
// usage flags in words ("Vertex|CopySrc|CopyDst"), a texture array's
// (Layers set) from TextureUsage, a buffer's from Usage (UsageString);
// none when 0.
func (b Buffer) MarshalJSON() ([]byte, error) {
	j := bufferJSON{plainBuffer: plainBuffer(b), Usage: b.UsageString()}
	return json.Marshal(j)
}

// UsageString returns the usage flags that apply to b in words: a
// texture array's (Layers set) TextureUsage, a buffer's Usage; "" when
// they are 0.
func (b *Buffer) UsageString() string {
	switch {
	case b.Layers != 0 && b.TextureUsage != 0:
		return b.TextureUsage.String()
	case b.Layers == 0 && b.Usage != 0:
		return b.Usage.String()
	}
	return ""
}

// UnmarshalJSON reads what MarshalJSON writes. Usage words that are not
// flags of the buffer's sort (texture flags for a texture array, buffer
// flags else) are an error wrapping ErrInvalidBuffer.
func (b *Buffer) UnmarshalJSON(data []byte) error {
	var j bufferJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*b = Buffer(j.plainBuffer)
	if j.Usage == "" {
		return nil
	}
	var err error
	if b.Layers != 0 {
		b.TextureUsage, err = parseFlags[device.TextureUsage](j.Usage, device.AllTextureUsage)
	} else {
		b.Usage, err = parseFlags[device.Usage](j.Usage, device.AllUsage)
	}
	return err
}

// parseFlags returns the flags named in s, joined by "|" as their String
// joins them: the inverse of String for flags within all.
func parseFlags[F interface {
	~uint32
	fmt.Stringer
}](s string, all F) (F, error) {
	var f F
	if s == "0" {
		return 0, nil
	}
	for name := range strings.SplitSeq(s, "|") {
		found := false
		for bit := F(1); bit != 0 && bit <= all; bit <<= 1 {
			if all&bit != 0 && bit.String() == name {
				f, found = f|bit, true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("%w: unknown usage flag %q in %q", ErrInvalidBuffer, name, s)
		}
	}
	return f, nil
}
