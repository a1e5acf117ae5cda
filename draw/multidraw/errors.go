//go:build cgo || js

package multidraw

import "errors"

// Errors returned by a Drawer, each wrapped with context. Errors of package
// draw (draw.ErrInvalidOptions, draw.ErrFull, those of List.Pack) and of the
// device come wrapped as they are.
var (
	// ErrUnsupported is returned by New for a mode the device cannot draw
	// in (see Best), and by PrepareCulled in Direct mode, which has no
	// arguments on the device to cull.
	ErrUnsupported = errors.New("multidraw: mode not supported by the device")

	// ErrNotApplied is returned by Prepare and PrepareCulled for a draw
	// whose record is not on the device yet: a mesh tracked since the
	// table's last Apply.
	ErrNotApplied = errors.New("multidraw: table not applied")

	// ErrNoBounds is returned by PrepareCulled for a draw whose object has
	// no sphere in the bounds buffer: an object index at or past the
	// buffer's Size()/SphereBytes, whether the index is wrong or the
	// buffer too small.
	ErrNoBounds = errors.New("multidraw: object without bounds")
)
