package handle

// SetRingMin sets the slots of o's stripes' first rings, for tests outside
// the package that need rings to grow and wrap often. Call it before o's
// first flush.
func SetRingMin(o *Owner, slots uint64) { o.sh.ringMin = slots }
