// Package devicetest is the conformance suite for device.Device backends:
// one suite, written once, that every backend runs from its own tests.
//
//	func TestConformance(t *testing.T) {
//		devicetest.Run(t, func(t *testing.T) device.Device {
//			d, err := host.New(host.Options{})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return d
//		})
//	}
//
// The suite covers every operation of device.Device and every error the
// interface documents, checked by sentinel with errors.Is; contents are
// compared byte for byte with a reference computed in Go (moves done one by
// one on a []byte, patches added word by word, mips box-filtered on the
// CPU). Data is pseudo-random from fixed seeds, so a failure repeats.
//
// It adapts to the device's Limits: cases that need a buffer larger than
// MaxBufferSize are skipped, and the limits themselves are tested at their
// values. Fault injection is backend-specific and lives in the backend's own
// tests.
//
// Cost: the largest cases (a 64 MiB move, a buffer just over
// MaxStorageBufferBindingSize) run once each; the whole suite moves a few
// hundred MiB, so a software driver on two cores runs it in well under a
// minute.
package devicetest
