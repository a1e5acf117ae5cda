//go:build js

package webgpu

import (
	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// In the browser a device has no timer: WebGPU writes timestamps only at
// the start and end of passes (timestampWrites), which the binding's js
// side does not pass, and browsers quantize them. The hooks below do
// nothing.

// timer is never created in the browser.
type timer struct{}

// timestampFeatures requests no features in the browser.
func timestampFeatures(*wgpu.Adapter) []wgpu.FeatureName { return nil }

func newTimer(*Device) *timer { return nil }

// Timer reports that the device has no timer.
func (d *Device) Timer() (device.Timer, bool) { return nil, false }

func (t *timer) finish(*wgpu.CommandEncoder) error { return nil }
func (t *timer) submitted() error                  { return nil }
func (t *timer) abandon()                          {}
func (t *timer) release()                          {}
