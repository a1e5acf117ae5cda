//go:build cgo

package webgpu

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// A device from New has a timer exactly where its adapter offers
// timestamp queries inside encoders. In CI (lavapipe offers both) the
// timer must be there, so the conformance suite's Timer case runs.
func TestTimerWhereOffered(t *testing.T) {
	d := newTestDevice(t, Options{}.FromEnv())
	offered := timestampFeatures(d.own.adapter) != nil
	_, has := d.Timer()
	if has != offered {
		t.Fatalf("adapter %v offers timestamps inside encoders: %v; device has a timer: %v", d.Info(), offered, has)
	}
	if !offered {
		if os.Getenv("CI") == "true" && strings.Contains(d.Info().Name, "llvmpipe") {
			t.Fatalf("lavapipe (%v) offers no timestamps inside encoders: CI would not run the Timer cases", d.Info())
		}
		t.Logf("adapter %v has no timestamps inside encoders: no timer", d.Info())
		return
	}
	t.Logf("adapter %v: timer, %g ns per tick", d.Info(), d.timer.period)
}

// A wrapped device has a timer only when its owner requested both
// features, and then it times work as New's does.
func TestTimerWrapped(t *testing.T) {
	for _, request := range []bool{false, true} {
		inst := wgpu.CreateInstance(nil)
		ad, err := inst.RequestAdapter(&wgpu.RequestAdapterOptions{})
		if err != nil || ad == nil {
			inst.Release()
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI must run the webgpu tests: no adapter: %v", err)
			}
			t.Skipf("no WebGPU adapter: %v", err)
		}
		features := timestampFeatures(ad)
		if features == nil {
			ad.Release()
			inst.Release()
			t.Skip("the adapter has no timestamps inside encoders")
		}
		if !request {
			features = nil
		}
		raw, err := ad.RequestDevice(&wgpu.DeviceDescriptor{RequiredFeatures: features})
		if err != nil {
			t.Fatal(err)
		}
		d, err := Wrap(raw)
		if err != nil {
			t.Fatal(err)
		}
		tm, has := device.TimerOf(d)
		if has != request {
			t.Errorf("owner requested timestamps: %v; wrapped device has a timer: %v", request, has)
		}
		if has {
			buf, err := d.CreateBuffer(device.BufferDesc{Size: 1 << 20, Usage: device.CopySrc | device.CopyDst})
			if err != nil {
				t.Fatal(err)
			}
			begin, err1 := tm.Stamp()
			err2 := d.Move(buf, []device.Move{{Src: 1 << 19, Dst: 0, Size: 1 << 19}})
			end, err3 := tm.Stamp()
			if err1 != nil || err2 != nil || err3 != nil {
				t.Fatal(err1, err2, err3)
			}
			if err := d.Wait(); err != nil {
				t.Fatal(err)
			}
			if el, ok, err := device.Elapsed(tm, device.Span{Begin: begin, End: end}); err != nil || !ok || el <= 0 {
				t.Errorf("span of a move on a wrapped device: %v (ok %v, error %v)", el, ok, err)
			}
		}
		d.Release()
		raw.Release()
		ad.Release()
		inst.Release()
	}
}

// rawEncoder and rawQuerySet read the binding's C handles as the first
// field of wgpu.CommandEncoder and wgpu.QuerySet: pin that layout, as
// TestRawHandleLayout does for the device and the queue.
func TestRawTimerHandleLayout(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[wgpu.CommandEncoder](), reflect.TypeFor[wgpu.QuerySet]()} {
		f := typ.Field(0)
		if f.Name != "ref" || f.Offset != 0 || f.Type.Kind() != reflect.Pointer || f.Type.Size() != unsafe.Sizeof(unsafe.Pointer(nil)) {
			t.Errorf("%v's first field is %s %v at %d: rawEncoder and rawQuerySet expect the C handle, ref, at 0", typ, f.Name, f.Type, f.Offset)
		}
	}
}
