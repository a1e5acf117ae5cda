// Package host is a pure-Go device.Device: buffers and textures are byte
// slices, and every operation runs at once, on the calling goroutine.
//
// It is a faithful model of WebGPU's rules (see package device): it rejects
// every call a GPU backend would reject, with the same sentinel error, so
// code that passes its tests on host does not fail on a GPU. Limits are
// configurable (a test can make MaxBufferSize 1 MiB to exercise growth).
//
// # Fault injection
//
// Tests prove that nothing is lost when the GPU says no. Faults are
// deterministic: [Options] arms them at creation (fail the Nth creation, a
// byte budget, loss after N submits), and [Device.FailNextCreates],
// [Device.SetByteBudget] and [Device.Lose] arm them mid-test. A failed
// creation returns device.ErrOutOfMemory and leaves the device usable; a
// lost device returns device.ErrDeviceLost from every later device.Device
// call except Limits and Release.
//
// # Statistics
//
// [Device.Stats] reports live buffers, textures and bytes (a leak check:
// after every owner released what it made, Buffers, Textures and Bytes are
// zero) and counts of operations and bytes moved.
//
// # Concurrency
//
// A Device and its objects are not safe for concurrent use, as the
// device.Device contract says; host takes no locks, so the race detector
// flags callers that break the contract.
package host
