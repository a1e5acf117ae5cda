package memory_test

import (
	"slices"
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/memory"
)

func buffers(t *testing.T, n int) []device.Buffer {
	t.Helper()
	dev, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dev.Release)
	bs := make([]device.Buffer, n)
	for i := range bs {
		if bs[i], err = dev.CreateBuffer(device.BufferDesc{Size: 64, Usage: device.CopyDst}); err != nil {
			t.Fatal(err)
		}
	}
	return bs
}

func TestChangeLogCoalesces(t *testing.T) {
	b := buffers(t, 4)
	var l memory.ChangeLog
	l.Moved(1, memory.Change{Owner: 10, Old: b[0], Buffer: b[0], FromBytes: 64, ToBytes: 32, SizeBytes: 8})
	l.Moved(1, memory.Change{Owner: 10, Old: b[0], Buffer: b[0], FromBytes: 32, ToBytes: 0, SizeBytes: 8})
	l.Moved(2, memory.Change{Owner: 20, Old: b[0], Buffer: b[0], FromBytes: 16, ToBytes: 8, SizeBytes: 4})
	l.Forget(2)
	l.Replaced(b[0], b[1], nil, nil)
	l.Replaced(b[1], b[2], nil, nil)
	l.Replaced(b[3], b[1], nil, nil) // another lineage: its own entry
	l.Released(b[1], nil)            // released the buffer that replaced b[3]
	got := l.Take(make([]memory.Change, 0, 8))
	want := []memory.Change{
		{Kind: memory.Moved, Owner: 10, Old: b[0], Buffer: b[2], FromBytes: 64, ToBytes: 0, SizeBytes: 8},
		{Kind: memory.Replaced, Old: b[0], Buffer: b[2]},
		{Kind: memory.Released, Old: b[3]},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d changes %+v, want %+v", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("change %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if n := l.Len(); n != 0 {
		t.Errorf("Len after Take = %d, want 0", n)
	}
	if got := l.Take(nil); len(got) != 0 {
		t.Errorf("second Take: %+v, want nothing", got)
	}
}

func TestChangeLogBound(t *testing.T) {
	b := buffers(t, 1)
	var l memory.ChangeLog
	for k := range uint64(3 * memory.MaxPendingChanges) {
		l.Moved(k, memory.Change{Owner: k, Old: b[0], Buffer: b[0]})
		if l.Len() > memory.MaxPendingChanges {
			t.Fatalf("after %d moves the list holds %d, over the bound %d", k+1, l.Len(), memory.MaxPendingChanges)
		}
	}
	l.Released(b[0], nil)
	got := l.Take(nil)
	if len(got) != 1 || got[0].Kind != memory.Overflowed {
		t.Fatalf("after the bound: %d changes (first %+v), want one Overflowed", len(got), got[0])
	}
	l.Moved(1, memory.Change{Owner: 1, Old: b[0], Buffer: b[0]})
	if got := l.Take(got[:0]); len(got) != 1 || got[0].Kind != memory.Moved {
		t.Fatalf("after Take, recording resumes: got %+v", got)
	}
}

func TestChangeLogTakeAllocs(t *testing.T) {
	b := buffers(t, 1)
	var l memory.ChangeLog
	dst := make([]memory.Change, 0, 16)
	for k := range uint64(16) { // warm the map and the list
		l.Moved(k, memory.Change{Old: b[0], Buffer: b[0]})
	}
	dst = l.Take(dst)
	allocs := testing.AllocsPerRun(100, func() {
		for k := range uint64(16) {
			l.Moved(k, memory.Change{Old: b[0], Buffer: b[0]})
		}
		dst = l.Take(dst[:0])
	})
	if allocs != 0 || len(dst) != 16 {
		t.Errorf("steady state: %v allocations a round, %d changes; want 0 and 16", allocs, len(dst))
	}
}

// TestChangeLogMovedAt: moves recorded with the caller's index coalesce
// as Moved's do, a forgotten one is dropped, and an index left from
// before a Take names nothing.
func TestChangeLogMovedAt(t *testing.T) {
	b := buffers(t, 1)
	var l memory.ChangeLog
	at := []int32{-1, -1, -1}
	l.MovedAt(&at[1], 1, memory.Change{Owner: 10, Old: b[0], Buffer: b[0], FromBytes: 64, ToBytes: 32, SizeBytes: 8})
	l.MovedAt(&at[2], 2, memory.Change{Owner: 20, Old: b[0], Buffer: b[0], FromBytes: 16, ToBytes: 8, SizeBytes: 4})
	l.MovedAt(&at[1], 1, memory.Change{Owner: 10, Old: b[0], Buffer: b[0], FromBytes: 32, ToBytes: 0, SizeBytes: 8})
	l.ForgetAt(&at[2], 2)
	got := l.Take(nil)
	want := memory.Change{Kind: memory.Moved, Owner: 10, Old: b[0], Buffer: b[0], FromBytes: 64, ToBytes: 0, SizeBytes: 8}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %+v, want [%+v]", got, want)
	}
	// at[1] still holds 0, now another key's entry: it must not coalesce.
	l.MovedAt(&at[2], 2, memory.Change{Owner: 20, Old: b[0], Buffer: b[0], FromBytes: 8, ToBytes: 4, SizeBytes: 4})
	l.MovedAt(&at[1], 1, memory.Change{Owner: 10, Old: b[0], Buffer: b[0], FromBytes: 0, ToBytes: 16, SizeBytes: 8})
	if got := l.Take(nil); len(got) != 2 || got[0].Owner != 20 || got[1].Owner != 10 || got[1].FromBytes != 0 {
		t.Fatalf("after a Take: got %+v, want one move of each key", got)
	}
}

// TestChangeLogWithin: moves recorded within a named buffer coalesce with
// MovedAt's, follow a later replacement of that buffer, and Grow leaves
// the list as it was.
func TestChangeLogWithin(t *testing.T) {
	b := buffers(t, 2)
	var l memory.ChangeLog
	at := []int32{-1, -1}
	l.Grow(-1)
	l.Grow(2 * memory.MaxPendingChanges)
	in := l.Within(b[0], nil)
	l.MovedWithin(&at[0], 1, in, 10, 0, 64, 32, 8)
	l.MovedAt(&at[0], 1, memory.Change{Owner: 10, Old: b[0], Buffer: b[0], FromBytes: 32, ToBytes: 0, SizeBytes: 8})
	l.MovedWithin(&at[1], 2, in, 20, 1, 16, 8, 4)
	l.Replaced(b[0], b[1], nil, nil)
	got := l.Take(nil)
	want := []memory.Change{
		{Kind: memory.Moved, Owner: 10, Old: b[0], Buffer: b[1], FromBytes: 64, ToBytes: 0, SizeBytes: 8},
		{Kind: memory.Moved, Owner: 20, Part: 1, Old: b[0], Buffer: b[1], FromBytes: 16, ToBytes: 8, SizeBytes: 4},
		{Kind: memory.Replaced, Old: b[0], Buffer: b[1]},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}
