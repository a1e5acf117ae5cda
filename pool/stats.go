package pool

// Stats is a snapshot of a pool's buffers and history. Bytes are the
// buffers' sizes, their classes' sizes, not what the requests asked for.
type Stats struct {
	Buffers     int    // buffers held: Leased + Idle
	Leased      int    // buffers leased to callers
	Idle        int    // buffers waiting for reuse
	BytesHeld   uint64 // BytesLeased + BytesIdle
	BytesLeased uint64 //
	BytesIdle   uint64 //

	Acquires  uint64 // successful Acquire calls: Reuses + Creations
	Reuses    uint64 // acquires served by an idle buffer
	Creations uint64 // buffers created
	Puts      uint64 // successful Put calls
	Evictions uint64 // idle buffers released to the device: by age, budget or Trim (not Release)
	Refusals  uint64 // Acquire calls failed by the budget or the device
}

// ReuseRate returns the share of acquires served by an idle buffer, from 0
// to 1; 0 before any acquire.
func (s Stats) ReuseRate() float64 {
	if s.Acquires == 0 {
		return 0
	}
	return float64(s.Reuses) / float64(s.Acquires)
}

// Sub returns the counters of s minus those of old: what happened between
// two snapshots. The buffer counts and bytes are s's own.
func (s Stats) Sub(old Stats) Stats {
	s.Acquires -= old.Acquires
	s.Reuses -= old.Reuses
	s.Creations -= old.Creations
	s.Puts -= old.Puts
	s.Evictions -= old.Evictions
	s.Refusals -= old.Refusals
	return s
}
