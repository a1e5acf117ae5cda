//go:build cgo || js

package multidraw

import "github.com/gpumem/gpumem/device"

// Counts returns the buffer of the visible-draw counts of d's last culled
// Prepare in MultiDrawCount mode, a word a span; nil before one.
func Counts(d *Drawer) device.Buffer { return d.counts }

// Work returns how many times d's Prepares encoded a list, found it held
// already (Drawer.holds), and uploaded one.
func Work(d *Drawer) (encodes, held, uploads int) { return d.encodes, d.held, d.uploads }
