package staging_test

import (
	"fmt"

	"github.com/gpumem/gpumem/device"
)

// tracker wraps a device and records, per source buffer, the ranges that
// copies read and the fence each copy was submitted under. A write to a
// range that a submitted, unfinished copy reads, or to a buffer the GPU
// still reads under a pending fence, is a violation: what the belt must
// never do (on a GPU the first is a race, the second a stall).
type tracker struct {
	device.Device
	reads      map[device.Buffer][]read
	last       uint64 // last fence
	violations []string
}

type read struct {
	off, end uint64
	fence    uint64 // 0: recorded, not yet submitted with a fence
}

func track(dev device.Device) *tracker {
	return &tracker{Device: dev, reads: map[device.Buffer][]read{}}
}

func (t *tracker) CopyBuffer(src device.Buffer, so uint64, dst device.Buffer, do, n uint64) error {
	if err := t.Device.CopyBuffer(src, so, dst, do, n); err != nil {
		return err
	}
	t.reads[src] = append(t.reads[src], read{so, so + n, 0})
	return nil
}

func (t *tracker) CopyBufferToTexture(src device.Buffer, so uint64, bytesPerRow uint32, tex device.Texture, layer, mip uint32) error {
	if err := t.Device.CopyBufferToTexture(src, so, bytesPerRow, tex, layer, mip); err != nil {
		return err
	}
	n, err := device.CheckBufferTexture(src.Size(), so, bytesPerRow, tex.Desc(), layer, mip)
	if err != nil {
		return err
	}
	t.reads[src] = append(t.reads[src], read{so, so + n, 0})
	return nil
}

func (t *tracker) submitted(f uint64) {
	for b, rs := range t.reads {
		for i := range rs {
			if rs[i].fence == 0 {
				rs[i].fence = f
			}
		}
		t.reads[b] = rs
	}
}

func (t *tracker) Fence() (uint64, error) {
	f, err := t.Device.Fence()
	if err == nil {
		t.last = f
		t.submitted(f)
	}
	return f, err
}

func (t *tracker) Submit() error {
	err := t.Device.Submit()
	if err == nil {
		t.submitted(t.last + 1) // known finished with the next fence
	}
	return err
}

func (t *tracker) Wait() error {
	err := t.Device.Wait()
	if err == nil {
		clear(t.reads)
	}
	return err
}

func (t *tracker) WriteBuffer(buf device.Buffer, off uint64, data []byte) error {
	done, err := t.Device.Completed()
	if err != nil {
		return err
	}
	end := off + uint64(len(data))
	keep := t.reads[buf][:0]
	for _, r := range t.reads[buf] {
		switch {
		case r.fence != 0 && r.fence <= done:
			continue // finished: forget it
		case r.fence != 0:
			t.violations = append(t.violations, fmt.Sprintf("write [%d, %d) to a buffer the GPU reads [%d, %d) of under pending fence %d (completed %d)", off, end, r.off, r.end, r.fence, done))
		case off < r.end && r.off < end:
			t.violations = append(t.violations, fmt.Sprintf("write [%d, %d) over [%d, %d) that a recorded copy reads", off, end, r.off, r.end))
		}
		keep = append(keep, r)
	}
	t.reads[buf] = keep
	return t.Device.WriteBuffer(buf, off, data)
}

func (t *tracker) check() error {
	if len(t.violations) > 0 {
		return fmt.Errorf("%d violations, first: %s", len(t.violations), t.violations[0])
	}
	return nil
}
