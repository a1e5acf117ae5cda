package devicetest

import (
	"testing"

	"github.com/gpumem/gpumem/device"
)

// testTimer checks the device.Timer contract where the device has a
// timer, and logs its absence elsewhere: stamps read back after Wait and,
// without Wait, by polling alone; their times never decrease in the order
// written, across submissions; a span around a real move takes time and
// leaves the moved bytes right; the zero, unwritten and expired stamps
// are refused; and Stamp and StampTime fail after Release.
func testTimer(t *testing.T, s *suite) {
	d := s.device(t)
	tm, ok := device.TimerOf(d)
	if !ok {
		t.Log("the device has no GPU timer (device.TimerOf is false): nothing to check")
		return
	}
	stamp := func() device.Stamp {
		t.Helper()
		st, err := tm.Stamp()
		must(t, err)
		return st
	}
	_, _, err := tm.StampTime(0)
	wantErr(t, "StampTime(0)", err, device.ErrInvalidObject)

	// A move of 8 MiB within a 16 MiB buffer (smaller where the limits
	// say so), then a copy, in two submissions; stamps around and
	// between them.
	half := min(uint64(8<<20), d.Limits().MaxBufferSize/2&^255)
	r := newRand(t.Name())
	buf, data := filled(t, d, r, 2*half, rw|device.Storage)
	dst := mustBuffer(t, d, half, rw)
	var stamps []device.Stamp
	stamps = append(stamps, stamp())
	must(t, d.Move(buf, []device.Move{{Src: half, Dst: 0, Size: half}}))
	stamps = append(stamps, stamp())
	stamps = append(stamps, stamp()) // an empty span
	_, _, err = tm.StampTime(stamps[2] + 1)
	wantErr(t, "StampTime of a stamp not yet written", err, device.ErrInvalidObject)
	if _, ok, err := tm.StampTime(stamps[0]); err != nil || ok {
		t.Fatalf("StampTime before the submit: ok %v, error %v; want false, nil", ok, err)
	}
	_, err = d.Fence()
	must(t, err)
	stamps = append(stamps, stamp())
	must(t, d.CopyBuffer(buf, 0, dst, 0, half))
	stamps = append(stamps, stamp())
	must(t, d.Wait())

	var times []uint64
	for i, st := range stamps {
		ns, ok, err := tm.StampTime(st)
		if err != nil || !ok {
			t.Fatalf("stamp %d (%d) after Wait: ok %v, error %v; want its time", i, st, ok, err)
		}
		if i > 0 && ns < times[i-1] {
			t.Errorf("stamp %d at %d ns, before stamp %d at %d ns", i, ns, i-1, times[i-1])
		}
		times = append(times, ns)
	}
	move, ok, err := device.Elapsed(tm, device.Span{Begin: stamps[0], End: stamps[1]})
	if err != nil || !ok || move <= 0 {
		t.Errorf("span of a move of %d bytes: %v (ok %v, error %v); want time > 0", half, move, ok, err)
	}
	copied, _, _ := device.Elapsed(tm, device.Span{Begin: stamps[3], End: stamps[4]})
	t.Logf("GPU time: move of %d KiB %v, copy of %d KiB %v, empty span %d ns, between submissions %d ns",
		half>>10, move, half>>10, copied, times[2]-times[1], times[3]-times[2])
	_, _, err = device.Elapsed(tm, device.Span{Begin: stamps[1], End: stamps[0]})
	wantErr(t, "Elapsed of a span ending before it begins", err, device.ErrInvalidObject)
	moved := append([]byte(nil), data...)
	copy(moved[:half], data[half:])
	check(t, d, buf, moved)
	check(t, d, dst, moved[:half])

	// Polling alone brings results back: no Wait.
	begin := stamp()
	must(t, d.Move(buf, []device.Move{{Src: 0, Dst: half, Size: half}}))
	end := stamp()
	_, err = d.Fence()
	must(t, err)
	for i := 0; ; i++ {
		_, ok, err := device.Elapsed(tm, device.Span{Begin: begin, End: end})
		must(t, err)
		if ok {
			break
		}
		if i == 1e7 {
			t.Fatalf("span %d..%d not back after %d polls", begin, end, i)
		}
	}

	// More stamps in one submission than a block of queries holds, and
	// more in all than the window keeps.
	first := stamp()
	for range device.StampWindow {
		stamp()
	}
	last := stamp()
	must(t, d.Wait())
	_, _, err = tm.StampTime(first)
	wantErr(t, "StampTime of a stamp older than the window", err, device.ErrOutOfBounds)
	prev := uint64(0)
	for st := last - device.StampWindow + 1; st <= last; st++ {
		ns, ok, err := tm.StampTime(st)
		if err != nil || !ok {
			t.Fatalf("stamp %d of the window after Wait: ok %v, error %v", st, ok, err)
		}
		if ns < prev {
			t.Fatalf("stamp %d at %d ns, before the one before it (%d ns)", st, ns, prev)
		}
		prev = ns
	}

	d.Release()
	_, err = tm.Stamp()
	wantErr(t, "Stamp after Release", err, device.ErrReleased)
	_, _, err = tm.StampTime(last)
	wantErr(t, "StampTime after Release", err, device.ErrReleased)
}
