package device_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
)

// fakeTimer reads each stamp's time from a map; a stamp missing from it
// is not back yet.
type fakeTimer map[device.Stamp]uint64

func (f fakeTimer) Stamp() (device.Stamp, error) { return 0, errors.New("not for this test") }

func (f fakeTimer) StampTime(s device.Stamp) (uint64, bool, error) {
	ns, ok := f[s]
	return ns, ok, nil
}

// timed is a wrapper that forwards the device's timer, as the contract
// says wrappers do.
type timed struct {
	device.Device
	t device.Timer
}

func (w timed) Timer() (device.Timer, bool) { return w.t, w.t != nil }

func TestTimerOf(t *testing.T) {
	h, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	if _, ok := device.TimerOf(h); ok {
		t.Error("TimerOf(host device) is true; the host has no GPU timer")
	}
	if _, ok := device.TimerOf(timed{Device: h}); ok {
		t.Error("TimerOf(a Timed device without a timer) is true")
	}
	f := fakeTimer{}
	if got, ok := device.TimerOf(timed{Device: h, t: f}); !ok || got == nil {
		t.Error("TimerOf(a Timed device with a timer) is false")
	}
}

func TestElapsed(t *testing.T) {
	f := fakeTimer{1: 1000, 2: 4500, 3: 900}
	for _, c := range []struct {
		span device.Span
		want time.Duration
		ok   bool
		err  error
	}{
		{device.Span{Begin: 1, End: 2}, 3500 * time.Nanosecond, true, nil},
		{device.Span{Begin: 2, End: 2}, 0, true, nil},
		{device.Span{Begin: 1, End: 4}, 0, false, nil}, // End not back
		{device.Span{Begin: 4, End: 5}, 0, false, nil}, // Begin not back
		{device.Span{Begin: 2, End: 3}, 0, true, nil},  // a clock that stepped back
		{device.Span{Begin: 2, End: 1}, 0, false, device.ErrInvalidObject},
	} {
		got, ok, err := device.Elapsed(f, c.span)
		if got != c.want || ok != c.ok || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("Elapsed(%v) = %v, %v, %v; want %v, %v, %v", c.span, got, ok, err, c.want, c.ok, c.err)
		}
	}
}
