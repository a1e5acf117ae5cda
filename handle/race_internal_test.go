//go:build race

package handle

// raceEnabled skips the largest interleaving case under the race detector:
// its goroutines run one at a time, so the detector has nothing to find
// there, and it makes the case ten times slower.
const raceEnabled = true
