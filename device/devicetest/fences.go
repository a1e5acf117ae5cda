package devicetest

import (
	"testing"

	"github.com/gpumem/gpumem/device"
)

// testFences checks the fence contract: Fence numbers submissions 1, 2,
// 3, ...; Completed never passes the last fence nor goes back; Wait
// completes every fence; a fence's work is done once Completed reaches it.
func testFences(t *testing.T, s *suite) {
	d := s.device(t)
	completed := func() uint64 {
		t.Helper()
		c, err := d.Completed()
		must(t, err)
		return c
	}
	if c := completed(); c != 0 {
		t.Fatalf("Completed before any Fence = %d, want 0", c)
	}
	src, data := filled(t, d, newRand(t.Name()), 1<<16, rw)
	dst := mustBuffer(t, d, 1<<16, rw)
	var prev uint64
	for i := uint64(1); i <= 8; i++ {
		must(t, d.CopyBuffer(src, 0, dst, 0, 1<<16))
		f, err := d.Fence()
		must(t, err)
		if f != i {
			t.Fatalf("Fence %d returned %d", i, f)
		}
		c := completed()
		if c > f || c < prev {
			t.Fatalf("after Fence %d: Completed %d (was %d)", f, c, prev)
		}
		prev = c
	}
	// An empty submission gets a fence too.
	f, err := d.Fence()
	must(t, err)
	if f != 9 {
		t.Fatalf("empty Fence returned %d, want 9", f)
	}
	must(t, d.Wait())
	if c := completed(); c != f {
		t.Fatalf("Completed after Wait = %d, want %d", c, f)
	}
	check(t, d, dst, data)

	// Polling alone gets there too, without Wait: a GPU finishes on its
	// own (the host backend at once). Wait's read-back then proves
	// nothing was lost.
	must(t, d.WriteBuffer(dst, 0, make([]byte, 16)))
	f, err = d.Fence()
	must(t, err)
	for i := 0; completed() < f; i++ {
		if i == 1e7 {
			t.Fatalf("fence %d not completed after %d polls", f, i)
		}
	}
	if err := d.Submit(); err != nil {
		t.Fatal(err)
	}
	if c := completed(); c != f {
		t.Fatalf("Completed = %d after a Submit, want %d (Submit makes no fence)", c, f)
	}
}

// testFenceAfterRelease checks Fence and Completed on a released device.
func testFenceAfterRelease(t *testing.T, s *suite) {
	d := s.device(t)
	d.Release()
	_, err := d.Fence()
	wantErr(t, "Fence after Release", err, device.ErrReleased)
	_, err = d.Completed()
	wantErr(t, "Completed after Release", err, device.ErrReleased)
}
