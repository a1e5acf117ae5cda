// Package budget keeps the memory the managers of one device create under
// a byte limit, says how much each uses, warns when usage nears the limit,
// and asks managers to give memory back before it refuses a request.
//
// # Basics
//
// New wraps a device with a limit. Account(name) returns a device.Device
// for one manager (or any code): buffers and textures created through it
// are charged to it, and credited back when released; every other call it
// forwards to the device, the optional device.Filler and
// device.GuardChecker included. Its Release releases what it still holds
// and the account, never the device. Give each manager its own account:
//
//	b, _ := budget.New(dev, budget.Options{Bytes: 512 << 20})
//	meshes, _ := mesh.New(b.Account("meshes"), mesh.Options{})
//	leases, _ := pool.New(b.Account("pool"), pool.Options{})
//
// The buffers and textures an account creates are views of the device's
// (see device.UnwrapBuffer): they go to any call of the account or of the
// device, and a backend's raw accessors (webgpu.Device.RawBuffer) see
// through them.
//
// A buffer counts its size; a texture its layers' bytes with every mip
// (device.TextureDesc.LayerBytes), times its samples. A buffer or texture
// made ahead of need (device.Prepare, as an arena's GrowAhead does;
// device.PrepareTexture, as a bindless registry's PageAhead does) counts
// from the Prepare where the device makes it ahead, and only when the
// budget has room for it as it is: see Account.PrepareBuffer.
//
// # Over the limit
//
// A creation that would take usage over the limit first asks for memory
// back: every other account's Reclaimer (Account.SetReclaimer) is called,
// in the order the accounts were made, until the request fits. A
// reclaimer releases what it can spare; each release is credited at once.
// Make the accounts whose memory is cheapest to give up first:
//
//	pa.SetReclaimer(leases.Shrink)   // idle pool buffers
//	ma.SetReclaimer(meshes.Shrink)   // slabs shrink to what they hold
//	ba.SetReclaimer(batches.Shrink)  // meshlet arenas too
//	ta.SetReclaimer(textures.Shrink) // empty bindless pages released, others trimmed
//
// An account's own reclaimer is not called for its own request: a manager
// in the middle of a call must not be re-entered. When the request still
// does not fit, it fails with an error that matches
// both ErrOverBudget and device.ErrOutOfMemory (errors.Is), before
// anything was created. Managers already treat an out-of-memory refusal
// as a recoverable failure that leaves everything live intact, so a
// manager over budget stays usable, as it does when the device refuses.
//
// Creations made while reclaimers run (a shrinking arena makes its
// smaller buffer before it releases the larger) are checked against the
// limit but never start another round of reclaiming.
//
// A reclaimer that panics ends the round: the panic propagates to the
// caller of the creation that asked, which creates nothing, after the
// budget's state is restored. What the reclaimers released before the
// panic stays credited, and the budget stays usable: the next request
// over the limit asks the reclaimers again.
//
// # Pressure
//
// Options.OnPressure is called when usage rises to Options.PressureBytes
// or above (by default nine tenths of the limit), once; it is called
// again only after usage has dropped below the pressure level and risen
// to it again.
//
// # Invariants
//
//   - Usage().Bytes is the sum of the live buffers and textures of every
//     account, with the buffers they prepare (device.Prepare), and never
//     exceeds the limit at any return.
//   - An account's bytes are those of its live objects and of the buffers
//     it prepares; Release of a buffer or texture credits it once, however
//     often it is called, and so does the Take that fails or the Release
//     of a prepared buffer.
//
// A Budget and its accounts are not safe for concurrent use: use them from
// the goroutine that owns the device's managers.
package budget
