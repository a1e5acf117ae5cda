//go:build !race

package handle

const raceEnabled = false
