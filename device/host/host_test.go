package host_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/devicetest"
	"github.com/gpumem/gpumem/device/host"
)

func open(opts host.Options) func(t *testing.T) device.Device {
	return func(t *testing.T) device.Device {
		d, err := host.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
}

func TestConformance(t *testing.T) {
	devicetest.Run(t, open(host.Options{}))
}

// TestConformanceSmallLimits runs the suite on limits below WebGPU's, as a
// test of a growing manager would set them: the suite skips what does not
// fit and tests the limits at their values.
func TestConformanceSmallLimits(t *testing.T) {
	devicetest.Run(t, open(host.Options{Limits: device.Limits{
		MaxBufferSize:               8 << 20,
		MaxStorageBufferBindingSize: 4 << 20,
		MaxTextureSize2D:            64,
		MaxArrayLayers:              16,
	}}))
}

// TestReleasedErrorText: an error after Release names the sentinel once
// ("host.Fence: device: used after release", not "device: device: ...").
func TestReleasedErrorText(t *testing.T) {
	d, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Release()
	_, err = d.Fence()
	if !errors.Is(err, device.ErrReleased) || strings.Count(err.Error(), "device:") != 1 {
		t.Errorf("Fence after Release: %q, want device.ErrReleased named once", err)
	}
}
