package draw

import "errors"

// Errors returned by a Table and a List, each wrapped with context.
// Errors of the mesh allocator (mesh.ErrInvalidHandle, mesh.ErrNotResident)
// and of the device come wrapped as they are.
var (
	// ErrInvalidOptions is returned by NewTable and NewList for options
	// that cannot work: a nil device or allocator, a negative bound.
	ErrInvalidOptions = errors.New("draw: invalid options")

	// ErrInvalidID is returned for an ID that names no tracked mesh: the
	// zero ID, or one removed already. (An ID of another table is caught
	// only where its slot is not live here: use each ID with its table.)
	ErrInvalidID = errors.New("draw: invalid id")

	// ErrTracked is returned by Track for a mesh the table tracks already.
	ErrTracked = errors.New("draw: mesh tracked already")

	// ErrNoIndices is returned by Track and Apply for a mesh without an
	// index array: it has no DrawIndexed arguments.
	ErrNoIndices = errors.New("draw: mesh has no indices")

	// ErrInvalidFormat is returned by Track for an index format other
	// than mesh.Uint16 and mesh.Uint32.
	ErrInvalidFormat = errors.New("draw: invalid index format")

	// ErrFull is returned by Track when the table holds as many records
	// as one storage binding of the device holds (Table.MaxRecords), and
	// by List.Add when the list holds its maxDraws draws.
	ErrFull = errors.New("draw: full")

	// ErrStale is returned by Apply and Check when a tracked mesh is no
	// longer resident in the allocator (removed there but not from the
	// table, or modified and not yet flushed): its record is left as it
	// was.
	ErrStale = errors.New("draw: stale record")
)
