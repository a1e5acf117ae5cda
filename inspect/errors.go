package inspect

import "errors"

var (
	// ErrVersion is returned by ReadJSON for a dump of a schema version
	// this package does not read.
	ErrVersion = errors.New("inspect: unsupported dump version")
	// ErrInvalidDump is returned by ReadJSON, Check and the renderers for
	// a dump that is not well formed: not JSON, regions that do not tile
	// their buffer, unknown states, used above size, too many buffers or
	// regions to draw.
	ErrInvalidDump = errors.New("inspect: invalid dump")
)
