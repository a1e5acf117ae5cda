package host

// Fault injection at run time, for tests that arm a fault mid-test. See
// Options for faults armed at creation.

// FailNextCreates makes the next n creations (CreateBuffer or
// CreateTexture calls that pass validation) fail with
// device.ErrOutOfMemory; n <= 0 disarms. It replaces any count armed
// before.
func (d *Device) FailNextCreates(n int) { d.failNext = max(n, 0) }

// SetByteBudget makes any creation fail with device.ErrOutOfMemory that
// would raise the bytes alive above budget; 0 removes the budget. Objects
// already alive are kept even when over a new, lower budget.
func (d *Device) SetByteBudget(budget uint64) { d.budget = budget }

// Lose loses the device now: every later call but Release returns
// device.ErrDeviceLost. Buffers and textures keep counting as alive until
// released, so a leak check still works.
func (d *Device) Lose() { d.lost = true }

// Lost reports whether the device is lost.
func (d *Device) Lost() bool { return d.lost }

// Complete marks every fence up to fence as finished, for a device opened
// with Options.HoldCompletion: Completed reports min(fence, last fence)
// from now on, or more. Completion never goes back, so a fence below the
// one already completed changes nothing.
func (d *Device) Complete(fence uint64) {
	d.done = max(d.done, min(fence, d.fence))
}
