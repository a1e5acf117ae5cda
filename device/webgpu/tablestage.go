//go:build cgo || js

package webgpu

import (
	"fmt"
	"slices"

	"github.com/gpumem/gpumem/internal/fenced"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// Table staging: where the compute path's move tables are written on their
// way to the table buffer (see moveTableBuffer). A queue write copies its
// data into a staging buffer that wgpu allocates for that one write, and
// the table's bytes are written twice on the CPU (encoded, then copied);
// instead the device keeps MapWrite|CopySrc buffers of its own, encodes
// each batch's table straight into one's mapping, and records a
// copyBufferToBuffer from it into the table buffer in the batch's encoder,
// before the batch's compute pass.
//
// A staging buffer is, at every moment, in exactly one place:
//
//   - pending: mapped, holding tables of the pending encoder (enc), whose
//     recorded copies read it; the last one is being filled (used bytes of
//     it handed out). Nothing else writes it until enc is submitted.
//   - in flight: submitted with enc and unmapped just before, with a
//     mapAsync asked for right after the submit. WebGPU resolves the
//     mapping only once the GPU has finished every submission that reads
//     the buffer, at a device poll (Submit, Completed, Wait): the mapping's
//     callback is the buffer's fence. Oldest first.
//   - free: mapped again (or never submitted: its encoder was dropped),
//     read by no recorded copy, ready to be written from its start.
//
// So a table's bytes are never written while a copy that reads them may
// still run: a buffer is written only while pending (its copies not yet
// submitted) or after its mapping resolved. Reuse costs no wait: when no
// buffer is free, a new one is created (as wgpu's queue write would), and
// at most maxFreeStaging buffers stay free.
//
// In the browser (stagedTables false) tables go up by queue writes: the
// binding's mappings there are Go copies written back at unmap, and the
// compute path does not run there anyway (computeMoves).
type tableStaging struct {
	enc     *wgpu.CommandEncoder // the encoder whose copies read pending
	pending []*stagingBuffer
	used    uint64 // bytes handed out of the last pending buffer
	// encBytes is the bytes of enc's tables so far; high is the most of
	// recent encoders', halved by each encoder that took less. An
	// encoder's first buffer holds high bytes at least, so a steady run of
	// batches settles on one buffer an encoder, and one huge batch does
	// not make every later buffer huge.
	encBytes, high uint64
	inflight       fenced.Queue[*stagingBuffer]
	free           []*stagingBuffer // oldest freed first
	made           int              // staging buffers created so far (tests count them)
	// queue and keep are for benchmarks that look for what changes the
	// GPU's speed on large tables (SetTableUpload): queue sends tables by
	// queue writes natively too, keep destroys no staging buffer before
	// Release.
	queue, keep bool
}

// stagesTables reports whether d's tables go through its table staging.
func (d *Device) stagesTables() bool { return stagedTables && !d.stage.queue }

// maxFreeStaging is the most free staging buffers kept: a frame's tables
// fill one or two, and a few frames are in flight.
const maxFreeStaging = 4

// minStagingBytes is the smallest staging buffer.
const minStagingBytes = 64 << 10

// stagingBuffer is one MapWrite|CopySrc buffer of the table staging.
type stagingBuffer struct {
	buf    *wgpu.Buffer
	size   uint64
	mapped []byte // the whole mapping; nil while unmapped
	// state is where its mapAsync stands while in flight; onMap, made
	// once, is the callback that sets it.
	state mapState
	onMap wgpu.BufferMapCallback
}

// mapState is the progress of a staging buffer's mapAsync.
type mapState uint8

const (
	mapWaiting mapState = iota // asked for, not resolved
	mapReady                   // resolved: the GPU is done with the buffer
	mapFailed                  // refused or aborted: the buffer is unusable
)

// reserve returns n bytes of a mapped staging buffer for a table of the
// pending encoder, which the caller writes and then copies from buf at off
// in that encoder. off is a multiple of 16; n is a multiple of 4.
func (s *tableStaging) reserve(d *Device, n uint64) (dst []byte, buf *wgpu.Buffer, off uint64, err error) {
	if s.enc != d.enc {
		// Submitted encoders' buffers went in flight at the submit
		// (submitted); these were read by an encoder dropped unsubmitted,
		// so nothing will read them: free, still mapped.
		s.free = append(s.free, s.pending...)
		clear(s.pending)
		s.endEncoder()
		s.enc = d.enc
	}
	s.encBytes += n
	if k := len(s.pending); k > 0 {
		cur := s.pending[k-1]
		if off = alignUp(s.used, 16); off+n <= cur.size {
			s.used = off + n
			return cur.mapped[off : off+n : off+n], cur.buf, off, nil
		}
	}
	want := s.high
	if k := len(s.pending); k > 0 {
		// This encoder's tables outgrew its buffer: double.
		want = 2 * s.pending[k-1].size
	}
	// No larger than a buffer may be: an encoder's tables past that (a
	// batch cut into runs, see moveCompute) take several.
	want = max(n, min(want, d.limits.MaxBufferSize))
	sb, err := s.take(d, alignUp(max(want, minStagingBytes), minStagingBytes), want)
	if err != nil {
		return nil, nil, 0, err
	}
	s.pending = append(s.pending, sb)
	s.used = n
	return sb.mapped[:n:n], sb.buf, 0, nil
}

// endEncoder forgets the pending encoder, whose buffers the caller has
// moved on, and raises high to its tables' bytes.
func (s *tableStaging) endEncoder() {
	s.high = max(s.encBytes, s.high/2)
	s.pending, s.enc, s.used, s.encBytes = s.pending[:0], nil, 0, 0
}

// take returns a free staging buffer of at least want bytes, or a new one
// of size bytes (want rounded up). Free buffers smaller than want are
// released (the encoders' tables have grown past them), and so are those
// over four times want (left by a batch much larger than the rest).
func (s *tableStaging) take(d *Device, size, want uint64) (*stagingBuffer, error) {
	s.reclaim()
	for i := len(s.free) - 1; i >= 0; i-- {
		sb := s.free[i]
		s.free = slices.Delete(s.free, i, i+1)
		if sb.size >= want && sb.size <= 4*max(want, minStagingBytes) {
			return sb, nil
		}
		if s.keep {
			s.free = append(s.free, sb) // past i: not seen again
			continue
		}
		sb.destroy()
	}
	if size > d.limits.MaxBufferSize {
		size = want
	}
	buf, err := d.dev.TryCreateBuffer(&wgpu.BufferDescriptor{
		Label:            "gpumem move table staging",
		Size:             size,
		Usage:            wgpu.BufferUsageMapWrite | wgpu.BufferUsageCopySrc,
		MappedAtCreation: true,
	})
	if err != nil {
		return nil, d.fail("create move table staging buffer", err)
	}
	sb := &stagingBuffer{buf: buf, size: size}
	sb.onMap = func(st wgpu.MapAsyncStatus) {
		if st == wgpu.MapAsyncStatusSuccess {
			sb.state = mapReady
		} else {
			sb.state = mapFailed
		}
	}
	sb.mapped = buf.GetMappedRange(0, uint(size))
	s.made++
	return sb, nil
}

// reclaim frees the in-flight buffers whose mapping resolved, oldest first
// (mappings resolve in submission order), and releases those whose
// mapping failed and those past maxFreeStaging. It polls nothing: the
// device's own polls (Submit, Completed, Wait) run the callbacks.
func (s *tableStaging) reclaim() {
	for s.inflight.Len() > 0 && (*s.inflight.Front()).state != mapWaiting {
		sb := s.inflight.Pop()
		if sb.state == mapFailed || len(s.free) >= maxFreeStaging && !s.keep {
			sb.destroy()
			continue
		}
		sb.mapped = sb.buf.GetMappedRange(0, uint(sb.size))
		s.free = append(s.free, sb)
	}
}

// unmap unmaps the pending buffers; flush calls it before it submits the
// encoder whose copies read them (WebGPU refuses a submission that uses
// a mapped buffer).
func (s *tableStaging) unmap(d *Device) error {
	var err error
	for _, sb := range s.pending {
		if e := sb.buf.TryUnmap(); e != nil && err == nil {
			err = d.fail("unmap move table staging buffer", e)
		}
		sb.mapped = nil
	}
	return err
}

// submitted puts the pending buffers in flight, each with a mapAsync that
// resolves once the GPU is done with it; flush calls it right after the
// submit of their encoder.
func (s *tableStaging) submitted(d *Device) error {
	var err error
	for i, sb := range s.pending {
		sb.state = mapWaiting
		if e := sb.buf.TryMapAsync(wgpu.MapModeWrite, 0, sb.size, sb.onMap); e != nil {
			sb.destroy()
			if err == nil {
				err = d.fail("map move table staging buffer", e)
			}
		} else {
			s.inflight.Push(sb)
		}
		s.pending[i] = nil
	}
	s.endEncoder()
	return err
}

// release destroys every staging buffer. The GPU must be done with them
// (Release waits for the queue first), so every mapAsync has resolved.
func (s *tableStaging) release() {
	for _, sb := range s.pending {
		sb.destroy()
	}
	for s.inflight.Len() > 0 {
		s.inflight.Pop().destroy()
	}
	for _, sb := range s.free {
		sb.destroy()
	}
	*s = tableStaging{made: s.made, high: s.high, queue: s.queue, keep: s.keep}
}

// counts returns how many staging buffers are pending, in flight and free.
func (s *tableStaging) counts() (pending, inflight, free int) {
	return len(s.pending), s.inflight.Len(), len(s.free)
}

func (sb *stagingBuffer) destroy() {
	sb.buf.Destroy()
	sb.buf.Release()
	sb.buf, sb.mapped = nil, nil
}

// stageTable writes the table of phases, size bytes with segments aligned
// to segAlign, into staging and records its copy into dst at off in enc.
func (d *Device) stageTable(enc *wgpu.CommandEncoder, phases []tableBuilder, size, segAlign uint64, dst *wgpu.Buffer, off uint64) error {
	mem, src, soff, err := d.stage.reserve(d, size)
	if err != nil {
		return err
	}
	d.tables.encodeInto(mem, phases, segAlign)
	if err := enc.TryCopyBufferToBuffer(src, soff, dst, off, size); err != nil {
		return d.fail(fmt.Sprintf("move: copy a table of %d bytes from staging", size), err)
	}
	return nil
}
