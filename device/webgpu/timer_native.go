//go:build cgo

package webgpu

/*
#include <stdint.h>

// The declarations of webgpu.h and wgpu.h (wgpu-native, linked in by the
// binding) that timestamps need and the binding does not wrap, with void
// pointers for the handles. wgpuCommandEncoderWriteTimestamp needs
// WGPUNativeFeature_TimestampQueryInsideEncoders on the device.
void wgpuCommandEncoderWriteTimestamp(void *commandEncoder, void *querySet, uint32_t queryIndex);
float wgpuQueueGetTimestampPeriod(void *queue);
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// GPU timestamps natively (see device.Timer for the contract).
//
// Stamps go into blocks of stampBlockQueries timestamp queries. Stamp
// writes the next query of the block being filled into the pending
// command encoder (wgpuCommandEncoderWriteTimestamp, between passes:
// gpumem never leaves a pass open across calls). When the encoder is
// submitted (flush), or the block is full, the block is closed: its
// queries are resolved into the resolve buffer, one for all blocks since
// the queue runs each resolve and its copy in order, and copied into the
// block's own MapRead buffer. After the submit each closed block's buffer
// is mapped asynchronously: wgpu-native completes the mapping once the
// submission has finished, during a device poll (ours, or the owner's on
// a wrapped device, hence the atomic status). StampTime harvests mapped
// blocks: it reads the ticks into the window of results, unmaps the
// buffer and puts the block back on the free list.
//
// Every command is valid by construction, since wgpu-native aborts the
// process on an invalid submission: the device has both features (checked
// at attach), query indices stay below the block's count, the resolve
// offset is 0 (QueryResolveBufferAlignment), and a block's buffer is never
// named by a command while it is mapped or being mapped.

// stampBlockQueries is the number of queries in a block: 64 stamps, 512
// bytes of results, enough for a frame's spans in one block.
const stampBlockQueries = 64

// Block states, in stampBlock.status.
const (
	blockMapping int32 = iota // mapAsync requested, not yet done
	blockMapped               // mapped: results readable
	blockFailed               // the mapping failed (device lost, buffer destroyed)
)

// stampBlock is one query set and the buffer its results come back in.
type stampBlock struct {
	qs   *wgpu.QuerySet
	read *wgpu.Buffer // MapRead | CopyDst, stampBlockQueries*8 bytes
	// first is the stamp of query 0; n queries are written.
	first device.Stamp
	n     uint32
	// status is written by the map callback, possibly during the owner's
	// poll on another goroutine.
	status atomic.Int32
}

// stampResult is one slot of the window: the ticks of stamp id.
type stampResult struct {
	id    device.Stamp
	ticks uint64
}

// timer is a Device's device.Timer; nil where the device has none.
type timer struct {
	d      *Device
	period float64 // nanoseconds per tick (wgpuQueueGetTimestampPeriod)
	// resolve is where every block's queries are resolved before their
	// copy into the block's buffer; created with the first block.
	resolve *wgpu.Buffer
	filling *stampBlock   // the pending encoder's block; nil when none
	closed  []*stampBlock // resolved in the pending encoder, to map after its submit
	mapping []*stampBlock // submitted and being mapped, oldest first
	free    []*stampBlock
	last    device.Stamp // the newest stamp returned
	window  [device.StampWindow]stampResult
}

var _ device.Timer = (*timer)(nil)

// timestampFeatures returns the features timestamps need, for New to
// request where the adapter offers both: queries, and writing them
// between passes.
func timestampFeatures(a *wgpu.Adapter) []wgpu.FeatureName {
	if a.HasFeature(wgpu.FeatureNameTimestampQuery) && a.HasFeature(wgpu.NativeFeatureTimestampQueryInsideEncoders) {
		return []wgpu.FeatureName{wgpu.FeatureNameTimestampQuery, wgpu.NativeFeatureTimestampQueryInsideEncoders}
	}
	return nil
}

// newTimer returns d's timer, or nil when d's device was not created with
// both timestamp features or reports no timestamp period.
func newTimer(d *Device) *timer {
	if !d.dev.HasFeature(wgpu.FeatureNameTimestampQuery) || !d.dev.HasFeature(wgpu.NativeFeatureTimestampQueryInsideEncoders) {
		return nil
	}
	period := float64(C.wgpuQueueGetTimestampPeriod(rawQueue(d.queue)))
	if !(period > 0) || period > 1e9 {
		return nil
	}
	return &timer{d: d, period: period}
}

// Timer returns the device's timer: where the device has timestamp
// queries and may write them between passes. New requests both features
// where the adapter offers them; a wrapped device has a timer only if
// its owner requested both (wgpu.FeatureNameTimestampQuery and
// wgpu.NativeFeatureTimestampQueryInsideEncoders).
func (d *Device) Timer() (device.Timer, bool) {
	if d == nil || d.timer == nil {
		return nil, false
	}
	return d.timer, true
}

// rawEncoder and rawQuerySet return the C handles of the binding's
// objects: their first field, as rawQueue does.
func rawEncoder(e *wgpu.CommandEncoder) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(e)) }
func rawQuerySet(q *wgpu.QuerySet) unsafe.Pointer      { return *(*unsafe.Pointer)(unsafe.Pointer(q)) }

// Stamp writes a timestamp into the pending encoder; see device.Timer.
func (t *timer) Stamp() (device.Stamp, error) {
	d := t.d
	if err := d.usable(); err != nil {
		return 0, err
	}
	enc, err := d.encoder()
	if err != nil {
		return 0, err
	}
	if t.filling != nil && t.filling.n == stampBlockQueries {
		if err := t.close(enc); err != nil {
			return 0, err
		}
	}
	if t.filling == nil {
		b, err := t.block()
		if err != nil {
			return 0, err
		}
		b.first, b.n = t.last+1, 0
		t.filling = b
	}
	b := t.filling
	C.wgpuCommandEncoderWriteTimestamp(rawEncoder(enc), rawQuerySet(b.qs), C.uint32_t(b.n))
	b.n++
	d.encUsed = true
	t.last++
	return t.last, nil
}

// block returns a free block, or a new one.
func (t *timer) block() (*stampBlock, error) {
	if n := len(t.free); n > 0 {
		b := t.free[n-1]
		t.free = t.free[:n-1]
		return b, nil
	}
	d := t.d
	b := &stampBlock{}
	var r *wgpu.Buffer
	oom, err := d.withOOMScope(func() (err error) {
		if t.resolve == nil {
			r, err = d.dev.TryCreateBuffer(&wgpu.BufferDescriptor{
				Label: "gpumem timestamps resolve",
				Size:  stampBlockQueries * 8,
				Usage: wgpu.BufferUsageQueryResolve | wgpu.BufferUsageCopySrc,
			})
			if err != nil {
				return err
			}
		}
		b.qs, err = d.dev.TryCreateQuerySet(&wgpu.QuerySetDescriptor{
			Label: "gpumem timestamps",
			Type:  wgpu.QueryTypeTimestamp,
			Count: stampBlockQueries,
		})
		if err != nil {
			return err
		}
		b.read, err = d.dev.TryCreateBuffer(&wgpu.BufferDescriptor{
			Label: "gpumem timestamps read-back",
			Size:  stampBlockQueries * 8,
			Usage: wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst,
		})
		return err
	})
	if err != nil || oom {
		for _, x := range []*wgpu.Buffer{r, b.read} {
			if x != nil {
				x.Destroy()
				x.Release()
			}
		}
		if b.qs != nil {
			b.qs.Release()
		}
		if err != nil {
			return nil, d.fail("timer: create queries", err)
		}
		return nil, fmt.Errorf("webgpu: timer: create queries: %w", device.ErrOutOfMemory)
	}
	if r != nil {
		t.resolve = r
	}
	return b, nil
}

// close resolves the filling block's queries into its buffer, recorded on
// enc, and files it to be mapped after the submit.
func (t *timer) close(enc *wgpu.CommandEncoder) error {
	b := t.filling
	if b == nil {
		return nil
	}
	t.filling = nil
	if err := enc.TryResolveQuerySet(b.qs, 0, b.n, t.resolve, 0); err != nil {
		t.free = append(t.free, b)
		return t.d.fail("timer: resolve queries", err)
	}
	if err := enc.TryCopyBufferToBuffer(t.resolve, 0, b.read, 0, uint64(b.n)*8); err != nil {
		t.free = append(t.free, b)
		return t.d.fail("timer: copy results", err)
	}
	t.closed = append(t.closed, b)
	return nil
}

// finish closes the filling block on enc, which is about to be finished
// and submitted. Nil-safe.
func (t *timer) finish(enc *wgpu.CommandEncoder) error {
	if t == nil {
		return nil
	}
	return t.close(enc)
}

// submitted maps the blocks closed in the encoder just submitted.
// Nil-safe.
func (t *timer) submitted() error {
	if t == nil {
		return nil
	}
	for i, b := range t.closed {
		b.status.Store(blockMapping)
		err := b.read.TryMapAsync(wgpu.MapModeRead, 0, uint64(b.n)*8, func(s wgpu.MapAsyncStatus) {
			if s == wgpu.MapAsyncStatusSuccess {
				b.status.Store(blockMapped)
			} else {
				b.status.Store(blockFailed)
			}
		})
		if err != nil {
			// Its stamps never read; the rest are not mapped either.
			t.free = append(t.free, t.closed[i:]...)
			clear(t.closed)
			t.closed = t.closed[:0]
			return t.d.fail("timer: map results", err)
		}
		t.mapping = append(t.mapping, b)
	}
	clear(t.closed)
	t.closed = t.closed[:0]
	return nil
}

// abandon drops the stamps of an encoder that was not submitted: their
// blocks go back to the free list, unread. Nil-safe.
func (t *timer) abandon() {
	if t == nil {
		return
	}
	if t.filling != nil {
		t.free = append(t.free, t.filling)
		t.filling = nil
	}
	t.free = append(t.free, t.closed...)
	clear(t.closed)
	t.closed = t.closed[:0]
}

// StampTime returns s's time; see device.Timer.
func (t *timer) StampTime(s device.Stamp) (uint64, bool, error) {
	d := t.d
	if err := d.usable(); err != nil {
		return 0, false, err
	}
	switch {
	case s == 0 || s > t.last:
		return 0, false, fmt.Errorf("webgpu: timer: stamp %d: not written (the newest is %d): %w", s, t.last, device.ErrInvalidObject)
	case t.last-s >= device.StampWindow:
		return 0, false, fmt.Errorf("webgpu: timer: stamp %d: older than the newest %d stamps: %w", s, device.StampWindow, device.ErrOutOfBounds)
	}
	r := &t.window[s%device.StampWindow]
	if r.id != s && len(t.mapping) > 0 {
		if err := t.harvest(); err != nil {
			return 0, false, err
		}
		if r.id != s {
			if d.poll() {
				d.lost = true
				return 0, false, fmt.Errorf("webgpu: queue work failed: %w", device.ErrDeviceLost)
			}
			if err := t.harvest(); err != nil {
				return 0, false, err
			}
		}
	}
	if r.id != s {
		return 0, false, nil
	}
	return uint64(float64(r.ticks) * t.period), true, nil
}

// harvest reads every mapped block's results into the window, unmaps it
// and frees it.
func (t *timer) harvest() error {
	keep := t.mapping[:0]
	var failed error
	for _, b := range t.mapping {
		switch b.status.Load() {
		case blockMapping:
			keep = append(keep, b)
			continue
		case blockFailed:
			if failed == nil {
				failed = fmt.Errorf("webgpu: timer: map results: %w", device.ErrDeviceLost)
			}
			t.free = append(t.free, b)
			continue
		}
		raw := b.read.GetMappedRange(0, uint(b.n)*8)
		for i := range b.n {
			id := b.first + device.Stamp(i)
			if t.last-id >= device.StampWindow {
				continue
			}
			t.window[id%device.StampWindow] = stampResult{id: id, ticks: binary.LittleEndian.Uint64(raw[8*i:])}
		}
		if err := b.read.TryUnmap(); err != nil {
			failed = t.d.fail("timer: unmap results", err)
			continue // not reused: it may still be mapped
		}
		t.free = append(t.free, b)
	}
	clear(t.mapping[len(keep):])
	t.mapping = keep
	if failed != nil {
		t.d.lost = true
	}
	return failed
}

// release destroys the timer's objects. The queue is idle (Release waited
// for it), so every mapping has completed or failed. Nil-safe.
func (t *timer) release() {
	if t == nil {
		return
	}
	t.abandon()
	for _, b := range t.mapping {
		if b.status.Load() == blockMapped {
			_ = b.read.TryUnmap()
		}
		t.free = append(t.free, b)
	}
	t.mapping = nil
	for _, b := range t.free {
		b.read.Destroy()
		b.read.Release()
		b.qs.Release()
	}
	t.free = nil
	if t.resolve != nil {
		t.resolve.Destroy()
		t.resolve.Release()
		t.resolve = nil
	}
}
