//go:build cgo || js

package webgpu

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/gpumem/gpumem/device"
	"github.com/oliverbestmann/webgpu/wgpu"
)

// ErrNoAdapter is returned by New when no adapter matches the options: no
// GPU driver is installed (on Linux without a GPU: apt-get install
// mesa-vulkan-drivers), or the requested backend is missing.
var ErrNoAdapter = errors.New("webgpu: no adapter")

// MovePath says how Move runs a batch.
type MovePath uint8

const (
	// MoveAuto runs moves in compute shaders where the adapter allows it
	// and falls back to copies otherwise.
	MoveAuto MovePath = iota
	// MoveCopy runs every move as two copyBufferToBuffer through a scratch
	// buffer.
	MoveCopy
	// MoveCompute runs moves in compute shaders.
	MoveCompute
)

func (p MovePath) String() string {
	switch p {
	case MoveCopy:
		return "copy"
	case MoveCompute:
		return "compute"
	}
	return "auto"
}

// Options choose the adapter and how the device runs. The zero value asks
// for the driver's default adapter; FromEnv fills zero fields from the
// environment (see the package documentation).
type Options struct {
	// Backend is "vulkan", "metal", "dx12" or "gl"; empty lets
	// wgpu-native choose among every backend it has (it prefers Vulkan,
	// Metal and DX12 adapters to GL ones of the same kind).
	Backend string
	// Power is "low" or "high"; empty leaves the choice to the driver.
	Power string
	// Fallback forces the fallback (software) adapter.
	Fallback bool
	// Moves chooses how Move runs.
	Moves MovePath
	// Label names the device in errors.
	Label string
	// AdapterLimits asks for every limit the adapter offers (a GPU's
	// buffers of several GiB, storage bindings of 2 GiB) instead of
	// WebGPU's defaults (256 MiB buffers, 128 MiB storage bindings).
	// Caveat: the binding, at the version gpumem uses, cannot pass two of
	// the limits through (maxColorAttachmentBytesPerSample and
	// maxBindGroupsPlusVertexBuffers reach wgpu-native as 0), so on such a
	// device every render pipeline with a color target is refused. Use it
	// for compute and memory work (devbench does), not for rendering.
	AdapterLimits bool
	// Limits lowers the device's limits: a nonzero field below the
	// device's value replaces it, so tests can exercise large-buffer
	// paths (storage binding windows, scratch limits) on small buffers.
	Limits device.Limits
}

// FromEnv returns o with every zero field filled in from the environment
// variables GPUMEM_WEBGPU_BACKEND, GPUMEM_WEBGPU_POWER,
// GPUMEM_WEBGPU_FALLBACK, GPUMEM_WEBGPU_LIMITS (adapter) and
// GPUMEM_WEBGPU_MOVES.
func (o Options) FromEnv() Options {
	if o.Backend == "" {
		o.Backend = os.Getenv("GPUMEM_WEBGPU_BACKEND")
	}
	if o.Power == "" {
		o.Power = os.Getenv("GPUMEM_WEBGPU_POWER")
	}
	if !o.Fallback {
		switch strings.ToLower(os.Getenv("GPUMEM_WEBGPU_FALLBACK")) {
		case "1", "true", "yes":
			o.Fallback = true
		}
	}
	if !o.AdapterLimits {
		o.AdapterLimits = strings.EqualFold(os.Getenv("GPUMEM_WEBGPU_LIMITS"), "adapter")
	}
	if o.Moves == MoveAuto {
		switch strings.ToLower(os.Getenv("GPUMEM_WEBGPU_MOVES")) {
		case "copy":
			o.Moves = MoveCopy
		case "compute":
			o.Moves = MoveCompute
		}
	}
	return o
}

// adapterOptions returns the adapter request opts make. The backend is
// chosen here, not by the instance: an instance created with a descriptor
// (WGPUInstanceExtras, where backends are chosen) is never fully destroyed
// on NVIDIA's Vulkan driver (580), which refuses a process its 30th
// adapter; the instance New creates has no descriptor.
func (o Options) adapterOptions() (wgpu.RequestAdapterOptions, error) {
	ro := wgpu.RequestAdapterOptions{ForceFallbackAdapter: o.Fallback}
	switch strings.ToLower(o.Backend) {
	case "":
	case "vulkan", "vk":
		ro.BackendType = wgpu.BackendTypeVulkan
	case "metal":
		ro.BackendType = wgpu.BackendTypeMetal
	case "dx12", "d3d12":
		ro.BackendType = wgpu.BackendTypeD3D12
	case "gl", "gles", "opengl":
		ro.BackendType = wgpu.BackendTypeOpenGLES
	default:
		return ro, fmt.Errorf("webgpu: unknown backend %q (want vulkan, metal, dx12 or gl)", o.Backend)
	}
	switch strings.ToLower(o.Power) {
	case "":
	case "low", "low-power":
		ro.PowerPreference = wgpu.PowerPreferenceLowPower
	case "high", "high-performance":
		ro.PowerPreference = wgpu.PowerPreferenceHighPerformance
	default:
		return ro, fmt.Errorf("webgpu: unknown power preference %q (want low or high)", o.Power)
	}
	return ro, nil
}

// AdapterInfo describes the adapter a Device runs on.
type AdapterInfo struct {
	Name        string // device name, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
	Vendor      string
	Description string // driver description
	Backend     string // "vulkan", "metal", "d3d12", "open-gles", ...
	Type        string // "discrete", "integrated", "cpu" or "unknown"
}

func (a AdapterInfo) String() string {
	return fmt.Sprintf("%s (%s, %s, %s)", a.Name, a.Backend, a.Type, a.Description)
}

// Device is a device.Device on a WebGPU adapter. It is not safe for
// concurrent use.
type Device struct {
	opts Options
	// own holds the instance and adapter of a device New opened; nil for
	// a wrapped device, whose dev is the caller's.
	own    *owned
	dev    *wgpu.Device
	queue  *wgpu.Queue // gpumem's own reference to dev's queue
	info   AdapterInfo
	limits device.Limits

	enc     *wgpu.CommandEncoder // pending commands; nil when none
	encUsed bool                 // enc holds at least one command
	// encSerial counts the encoders made: enc's is the latest.
	encSerial uint64
	// queued: a queue write waits for the next submit.
	queued   bool
	released bool
	lost     bool

	buffers  map[*Buffer]struct{}  // live buffers
	textures map[*Texture]struct{} // live textures
	// graveBuffers holds gpumem's internal buffers (scratch, tables,
	// mip work) retired while recorded or submitted work may still use
	// them, oldest first, each with the submission that must finish
	// before it goes: the next one, which may name it (the pending
	// encoder's). bury destroys them then, or all of them once the queue
	// is idle with nothing pending.
	graveBuffers []retired
	// submits counts submissions; every one up to safeSubmits has
	// finished on the GPU. fenceSubmits holds, for each outstanding
	// fence, the submissions made when it was marked, oldest first.
	submits, safeSubmits uint64
	fenceSubmits         []fenceMark
	// dead holds the buffers and textures the caller released, oldest
	// first. A renderer may still submit commands naming one after
	// gpumem's Submit (see the package doc), so each stays until a fence
	// marked after its release has completed: entries' after values do
	// not decrease, and reap destroys a prefix.
	dead []deadObject
	// jobs are the jobs queued since the last Fence or Wait; running
	// counts those started and not ended (jobs.go).
	jobs    []*job
	running sync.WaitGroup
	// freeing are the jobs that destroy dead objects, queued or running;
	// Wait waits for them, and reap forgets those that ended.
	freeing []*job

	fences fenceState // see fence.go
	// copiedMapped lists the mapped MapWrite buffers that recorded
	// copies read; flush unmaps them before submitting (see mapwrite.go).
	copiedMapped []mappedCopy
	// texCopy is the copy into a texture that CopyBufferToTexture holds
	// back to extend (texcopy.go); texCopies counts the copies into
	// textures put in encoders (tests read it).
	texCopy   pendingTexCopy
	texCopies int
	// blockingMaps counts mappings that had to wait for the GPU.
	blockingMaps int

	kernels *kernels     // compute pipelines, built on first use
	pre     *precompiled // the move kernels being built (kernels.go)
	// preparing holds the buffers and textures PrepareBuffer and
	// PrepareTexture are creating, until taken.
	preparing map[*preparing]struct{}
	planner   planner      // reused by every Move
	tables    moveTables   // reused by every Move on the compute path
	stage     tableStaging // where the compute path's tables are written
	// noCompute: Move copies, because the compute pipelines failed to
	// build or the platform refuses the move kernels (!computeMoves).
	noCompute bool
	scratch   *wgpu.Buffer
	// scratchSize is the size of scratch in bytes, 0 when there is none.
	scratchSize uint64
	// dynOffset is the dynamic offset a move dispatch binds its table
	// segment at: a field, so that passing it to the binding allocates
	// nothing.
	dynOffset [1]uint32
	// timer writes GPU timestamps; nil where the device cannot (see
	// Timer).
	timer *timer
}

var (
	_ device.Device          = (*Device)(nil)
	_ device.Preparer        = (*Device)(nil)
	_ device.TexturePreparer = (*Device)(nil)
)

// owned are the objects New created beside the device, released with it.
type owned struct {
	instance *wgpu.Instance
	adapter  *wgpu.Adapter
}

// New opens a device on the adapter that opts select; opts are taken as
// given (New(opts.FromEnv()) lets the environment fill the zero fields, as
// gpumem's command and tests do). It returns an error wrapping
// ErrNoAdapter when there is none.
func New(opts Options) (*Device, error) {
	ro, err := opts.adapterOptions()
	if err != nil {
		return nil, err
	}
	instance := wgpu.CreateInstance(nil)
	if instance == nil {
		// In the browser: no navigator.gpu.
		return nil, fmt.Errorf("webgpu: no WebGPU in this environment: %w", ErrNoAdapter)
	}
	adapter, err := instance.RequestAdapter(&ro)
	if err != nil || adapter == nil {
		instance.Release()
		return nil, fmt.Errorf("webgpu: backend %q power %q fallback %v: %w (on Linux without a GPU: apt-get install mesa-vulkan-drivers)",
			opts.Backend, opts.Power, opts.Fallback, ErrNoAdapter)
	}
	info := adapterInfo(adapter)
	// WebGPU's default limits, or with AdapterLimits every limit the
	// adapter offers. No device-lost callback: the binding stores a Go
	// pointer in C memory for it, which cgo's checks reject.
	var required *wgpu.Limits
	if opts.AdapterLimits {
		wl := adapter.GetLimits()
		required = &wl
	}
	// Features: timestamps where the adapter has them (timer_native.go).
	dev, err := adapter.RequestDevice(&wgpu.DeviceDescriptor{
		Label:            opts.Label,
		RequiredFeatures: timestampFeatures(adapter),
		RequiredLimits:   required,
	})
	if err != nil || dev == nil {
		adapter.Release()
		instance.Release()
		return nil, fmt.Errorf("webgpu: request device on %v: %v: %w", info, err, ErrNoAdapter)
	}
	d, err := attach(dev, opts)
	if err != nil {
		dev.Release()
		adapter.Release()
		instance.Release()
		return nil, err
	}
	d.info = info
	d.own = &owned{instance: instance, adapter: adapter}
	return d, nil
}

// lower returns l with every nonzero field of cap that is smaller than l's
// in its place.
func lower(l, cap device.Limits) device.Limits {
	low64 := func(v *uint64, c uint64) {
		if c != 0 && c < *v {
			*v = c
		}
	}
	low32 := func(v *uint32, c uint32) {
		if c != 0 && c < *v {
			*v = c
		}
	}
	low64(&l.MaxBufferSize, cap.MaxBufferSize)
	low64(&l.MaxStorageBufferBindingSize, cap.MaxStorageBufferBindingSize)
	low64(&l.MaxUniformBufferBindingSize, cap.MaxUniformBufferBindingSize)
	low32(&l.MaxTextureSize2D, cap.MaxTextureSize2D)
	low32(&l.MaxArrayLayers, cap.MaxArrayLayers)
	// Alignments may only grow: a larger power of two is still valid.
	if cap.UniformOffsetAlignment > l.UniformOffsetAlignment {
		l.UniformOffsetAlignment = cap.UniformOffsetAlignment
	}
	if cap.StorageOffsetAlignment > l.StorageOffsetAlignment {
		l.StorageOffsetAlignment = cap.StorageOffsetAlignment
	}
	return l
}

func adapterType(t wgpu.AdapterType) string {
	switch t {
	case wgpu.AdapterTypeDiscreteGPU:
		return "discrete"
	case wgpu.AdapterTypeIntegratedGPU:
		return "integrated"
	case wgpu.AdapterTypeCPU:
		return "cpu"
	}
	return "unknown"
}

// Info describes the adapter the device runs on.
func (d *Device) Info() AdapterInfo { return d.info }

// Limits returns the device's limits, as the adapter reports them.
func (d *Device) Limits() device.Limits { return d.limits }

// MovePath reports how Move runs on this device: MoveCompute or MoveCopy.
func (d *Device) MovePath() MovePath {
	if d.opts.Moves == MoveCopy || d.noCompute {
		return MoveCopy
	}
	return MoveCompute
}

// usable returns nil if the device can take a call.
func (d *Device) usable() error {
	switch {
	case d == nil:
		return fmt.Errorf("webgpu: nil device: %w", device.ErrInvalidObject)
	case d.released:
		return fmt.Errorf("webgpu: %w", device.ErrReleased)
	case d.lost:
		return fmt.Errorf("webgpu: %w", device.ErrDeviceLost)
	}
	return nil
}

// encoder returns the pending command encoder, creating one if needed.
func (d *Device) encoder() (*wgpu.CommandEncoder, error) {
	if d.enc != nil {
		return d.enc, d.recordTexCopy()
	}
	enc, err := d.dev.TryCreateCommandEncoder(nil)
	if err != nil {
		return nil, d.fail("create command encoder", err)
	}
	d.enc = enc
	d.encUsed = false
	d.encSerial++
	return enc, nil
}

// flush submits the pending command encoder, if it holds any command.
func (d *Device) flush() error {
	if d.enc == nil || !d.encUsed {
		if d.enc != nil {
			d.timer.abandon()
			d.enc.Release()
			d.enc = nil
		}
		if d.queued {
			// Queue writes run at the next submit; an empty one will do.
			d.submit()
			d.submits++
			d.queued = false
		}
		return nil
	}
	if err := d.recordTexCopy(); err != nil {
		return err
	}
	enc := d.enc
	d.enc = nil
	d.queued = false
	if err := d.timer.finish(enc); err != nil {
		d.timer.abandon()
		enc.Release()
		return err
	}
	cb, err := enc.TryFinish(nil)
	enc.Release()
	if err != nil {
		d.timer.abandon()
		return d.fail("finish commands", err)
	}
	if err := d.unmapCopied(); err != nil {
		d.timer.abandon()
		cb.Release()
		return err
	}
	if err := d.stage.unmap(d); err != nil {
		d.timer.abandon()
		cb.Release()
		return err
	}
	d.submit(cb)
	d.submits++
	cb.Release()
	err = d.stage.submitted(d)
	if terr := d.timer.submitted(); err == nil {
		err = terr
	}
	return err
}

// flushRecorded submits the pending command encoder if it holds commands,
// so that a queue write made next lands after them. Queue writes already
// made stay queued: they keep their order among themselves and run before
// the next submit's commands, so a run of writes costs no submit.
func (d *Device) flushRecorded() error {
	if d.enc == nil || !d.encUsed {
		return nil
	}
	return d.flush()
}

// Submit hands the recorded work to the GPU without waiting, and destroys
// released objects if the queue has gone idle. A renderer sharing the
// queue calls it before submitting command buffers that use gpumem's
// buffers, so that they run after gpumem's work.
func (d *Device) Submit() error {
	if err := d.usable(); err != nil {
		return err
	}
	if err := d.flush(); err != nil {
		return err
	}
	d.poll()
	return nil
}

// Wait submits the recorded work and blocks until the GPU has finished all
// submitted work; then it destroys every object released before the last
// fence was marked, and waits for the frees that jobs run (those Fence
// started too). It marks no fence: what was released since stays for
// the renderer's passes of this frame.
func (d *Device) Wait() error {
	if err := d.usable(); err != nil {
		return err
	}
	if err := d.flush(); err != nil {
		return err
	}
	d.waitIdle()
	d.fences.done = d.fences.last
	d.safeSubmits = d.submits
	d.bury(true)
	d.reap()
	d.startJobs()
	for _, j := range d.freeing {
		<-j.done
	}
	clear(d.freeing)
	d.freeing = d.freeing[:0]
	return d.fences.rejected()
}

// poll lets finished work report without waiting, raises fences.done and
// destroys what is due. It returns whether a report said the work failed.
func (d *Device) poll() (failed bool) {
	idle := d.pollQueue()
	if idle {
		d.fences.done = d.fences.last
		d.safeSubmits = d.submits
	}
	done, failed := d.fences.signalled()
	d.fences.done = max(d.fences.done, min(done, d.fences.last))
	d.bury(idle && (d.enc == nil || !d.encUsed) && !d.queued)
	d.reap()
	return failed
}

// retired is an internal buffer waiting for the GPU until submission
// number need has finished.
type retired struct {
	buf  *wgpu.Buffer
	need uint64
}

// fenceMark is a fence and the submissions made when it was marked: once
// it completes, they have all finished.
type fenceMark struct{ fence, submits uint64 }

// retire destroys b, an internal buffer that recorded or submitted work
// may still use, once that work has finished (see graveBuffers).
func (d *Device) retire(b *wgpu.Buffer) {
	d.graveBuffers = append(d.graveBuffers, retired{b, d.submits + 1})
}

// bury destroys the retired internal buffers whose work has finished
// (safeSubmits, raised by completed fences and by an idle queue), or, with
// all (the queue idle and nothing recorded or queued), every one.
func (d *Device) bury(all bool) {
	k := 0
	for k < len(d.fenceSubmits) && d.fenceSubmits[k].fence <= d.fences.done {
		d.safeSubmits = max(d.safeSubmits, d.fenceSubmits[k].submits)
		k++
	}
	d.fenceSubmits = d.fenceSubmits[:copy(d.fenceSubmits, d.fenceSubmits[k:])]
	n := 0
	for n < len(d.graveBuffers) && (all || d.graveBuffers[n].need <= d.safeSubmits) {
		d.graveBuffers[n].buf.Destroy()
		d.graveBuffers[n].buf.Release()
		n++
	}
	rest := copy(d.graveBuffers, d.graveBuffers[n:])
	clear(d.graveBuffers[rest:])
	d.graveBuffers = d.graveBuffers[:rest]
}

// deadObject is a buffer or a texture the caller released while fence
// after was the newest marked.
type deadObject struct {
	buf   *wgpu.Buffer
	tex   *wgpu.Texture
	size  uint64 // the buffer's bytes
	after uint64
}

// kill puts what the caller released on the dead list; size is a
// buffer's bytes.
func (d *Device) kill(buf *wgpu.Buffer, tex *wgpu.Texture, size uint64) {
	d.dead = append(d.dead, deadObject{buf: buf, tex: tex, size: size, after: d.fences.last})
}

// offThreadDestroyBytes is the size from which reap destroys a buffer on
// a goroutine of its own: freeing a buffer of a hundred megabytes or more
// can take the driver milliseconds, and reap runs inside the caller's
// Completed, Submit or Wait.
const offThreadDestroyBytes = 16 << 20

// reap destroys the dead objects released before the newest completed
// fence was marked: natively, buffers of offThreadDestroyBytes or more
// by jobs, on goroutines of their own from the next Fence or Wait on
// (jobs.go; wgpu-native's objects may be destroyed from any thread).
func (d *Device) reap() {
	if len(d.freeing) > 0 {
		d.freeing = slices.DeleteFunc(d.freeing, (*job).ended)
	}
	n := 0
	for n < len(d.dead) && d.dead[n].after < d.fences.done {
		if o := d.dead[n]; offThread && o.size >= offThreadDestroyBytes {
			d.freeing = append(d.freeing, d.later(o.destroy))
		} else {
			o.destroy()
		}
		n++
	}
	if n == 0 {
		return
	}
	rest := copy(d.dead, d.dead[n:])
	clear(d.dead[rest:])
	d.dead = d.dead[:rest]
}

func (o deadObject) destroy() {
	if o.buf != nil {
		o.buf.Destroy()
		o.buf.Release()
	}
	if o.tex != nil {
		destroyTexture(o.tex)
	}
}

// Release waits for the GPU, destroys every buffer and texture the device
// holds and every object gpumem created, released ones included (with no
// fence to wait for: a renderer must not submit work naming gpumem's
// objects after it), and releases gpumem's reference to the queue. A device from New is released with its adapter and
// instance; a wrapped device is left to its owner, working. Release is
// idempotent and nil-safe.
func (d *Device) Release() {
	if d == nil || d.released {
		return
	}
	if !d.lost {
		_ = d.flush()
		d.waitIdle()
	}
	for b := range d.buffers {
		b.release()
	}
	for t := range d.textures {
		t.release()
	}
	if d.scratch != nil {
		d.retire(d.scratch)
		d.scratch, d.scratchSize = nil, 0
	}
	d.bury(true)
	for _, o := range d.dead {
		o.destroy()
	}
	d.startJobs()
	d.running.Wait()
	d.dead = nil
	d.stage.release()
	d.timer.release()
	d.timer = nil
	d.takePrecompiled()
	d.kernels.release()
	for p := range d.preparing {
		d.wait(p.job)
		p.destroy()
	}
	clear(d.preparing)
	d.kernels = nil
	if d.enc != nil {
		d.enc.Release()
		d.enc = nil
	}
	d.texCopy = pendingTexCopy{}
	d.released = true
	d.queue.Release()
	if d.own != nil {
		releaseDevice(d.dev)
		d.own.adapter.Release()
		d.own.instance.Release()
		d.fences.free()
	} else if !d.lost {
		// The caller's device lives on; the wait above fired every
		// work-done callback, so none can write to the cells later.
		d.fences.free()
	}
	// A lost wrapped device may still fire callbacks when its owner polls
	// it: its 16 bytes of cells stay allocated.
}
