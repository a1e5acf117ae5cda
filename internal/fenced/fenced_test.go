package fenced_test

import (
	"testing"

	"github.com/gpumem/gpumem/device"
	"github.com/gpumem/gpumem/device/host"
	"github.com/gpumem/gpumem/internal/fenced"
)

// TestBlocks runs buffers through frames with the GPU held behind: a
// buffer is free only once its fence completed, oldest first; Take takes
// the oldest that fits; Reclaim and Trim release what keep refuses;
// every buffer is in one place at every step, and Release frees them all.
func TestBlocks(t *testing.T) {
	dev, err := host.New(host.Options{HoldCompletion: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Release()
	mk := func(size uint64) device.Buffer {
		b, err := dev.CreateBuffer(device.BufferDesc{Size: size, Usage: device.CopyDst})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var b fenced.Blocks
	count := func(wantOpen, wantInflight, wantFree int) {
		t.Helper()
		o, i, f := b.Len()
		var seen [3]int
		b.Each(func(_ fenced.Block, st fenced.State) { seen[st]++ })
		if o != wantOpen || i != wantInflight || f != wantFree || seen != [3]int{o, i, f} {
			t.Fatalf("open %d, in flight %d, free %d (Each %v); want %d, %d, %d", o, i, f, seen, wantOpen, wantInflight, wantFree)
		}
		if live := dev.Stats().Buffers; live != o+i+f {
			t.Fatalf("%d buffers alive on the device, %d in Blocks", live, o+i+f)
		}
	}
	fence := func() uint64 {
		f, err := dev.Fence()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	b.Fill(mk(64), 10)
	b.Fill(mk(128), 20)
	f1 := fence()
	b.EndFrame(f1, nil, 0)
	count(0, 2, 0)
	if _, ok := b.Take(nil); ok {
		t.Fatal("took a buffer in flight")
	}
	f2 := fence()
	b.EndFrame(f2, mk(256), 30)
	if _, err := b.Reclaim(dev, nil); err != nil {
		t.Fatal(err)
	}
	count(0, 3, 0) // nothing completed
	dev.Complete(f1)
	released, err := b.Reclaim(dev, func(buf device.Buffer) bool { return buf.Size() >= 100 })
	if err != nil || released != 1 {
		t.Fatalf("Reclaim released %d, %v; want the 64-byte buffer", released, err)
	}
	count(0, 1, 1)
	if buf, ok := b.Take(func(buf device.Buffer) bool { return buf.Size() >= 200 }); ok {
		t.Fatalf("took %d bytes, want none of 200 free", buf.Size())
	}
	dev.Complete(f2)
	if _, err := b.Reclaim(dev, nil); err != nil {
		t.Fatal(err)
	}
	count(0, 0, 2)
	buf, ok := b.Take(nil)
	if !ok || buf.Size() != 128 {
		t.Fatalf("Take: %v, want the oldest (128 bytes)", buf)
	}
	buf.Release()
	if n := b.Trim(func(device.Buffer) bool { return false }); n != 1 {
		t.Fatalf("Trim released %d, want 1", n)
	}
	count(0, 0, 0)
	b.Fill(mk(32), 4)
	b.EndFrame(fence(), mk(32), 4)
	b.Fill(mk(32), 4)
	b.Release()
	count(0, 0, 0)
}

func TestQueue(t *testing.T) {
	var q fenced.Queue[int]
	next := 0
	for round := range 50 {
		for range round % 7 {
			q.Push(next)
			next++
		}
		for range round % 5 {
			if q.Len() == 0 {
				break
			}
			want := next - q.Len()
			if got := *q.Front(); got != want {
				t.Fatalf("front %d, want %d", got, want)
			}
			if got := *q.At(q.Len() - 1); got != next-1 {
				t.Fatalf("newest %d, want %d", got, next-1)
			}
			if got := q.Pop(); got != want {
				t.Fatalf("pop %d, want %d", got, want)
			}
		}
	}
	q.Clear()
	if q.Len() != 0 {
		t.Fatal("Clear left items")
	}
}
