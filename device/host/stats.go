package host

// Stats is a snapshot of a host device's counters; see Device.Stats.
type Stats struct {
	// Live objects and their bytes: zero once every owner released what it
	// created (a leak check).
	Buffers, Textures int
	Bytes             uint64
	PeakBytes         uint64 // the most Bytes ever were

	Creates       int // successful CreateBuffer and CreateTexture calls
	FailedCreates int // creations failed by injected faults

	Writes     int    // WriteBuffer and WriteTexture calls
	WriteBytes uint64 //
	Copies     int    // CopyBuffer and CopyTextureLayer calls
	CopyBytes  uint64 //
	Moves      int    // moves done by Move (entries, not calls)
	MoveBytes  uint64 //
	Patches    int    // patches applied (entries, not calls)
	Submits    int    // Submit calls that returned nil
	Waits      int    // Wait calls that returned nil
}

// Sub returns the counters of s minus those of old: what happened between
// two snapshots. Live counts and PeakBytes are s's own.
func (s Stats) Sub(old Stats) Stats {
	s.Creates -= old.Creates
	s.FailedCreates -= old.FailedCreates
	s.Writes -= old.Writes
	s.WriteBytes -= old.WriteBytes
	s.Copies -= old.Copies
	s.CopyBytes -= old.CopyBytes
	s.Moves -= old.Moves
	s.MoveBytes -= old.MoveBytes
	s.Patches -= old.Patches
	s.Submits -= old.Submits
	s.Waits -= old.Waits
	return s
}

// Stats returns a snapshot of the device's counters. It works on a released
// or lost device.
func (d *Device) Stats() Stats { return d.stats }
