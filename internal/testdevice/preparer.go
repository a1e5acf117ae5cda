package testdevice

import "github.com/gpumem/gpumem/device"

// Preparer is a device that makes buffers and textures ahead of need
// (device.Preparer, device.TexturePreparer) over another: it counts the
// objects prepared, taken and given up, and the buffers and textures
// created by CreateBuffer and CreateTexture (a manager's own), and makes
// each through the device under it (off the caller's goroutine where that
// one prepares).
type Preparer struct {
	device.Device
	Prepared, Taken, Dropped int
	Creates                  int
}

// CreateBuffer counts the call and creates on the device under p.
func (p *Preparer) CreateBuffer(desc device.BufferDesc) (device.Buffer, error) {
	p.Creates++
	return p.Device.CreateBuffer(desc)
}

// CreateTexture counts the call and creates on the device under p.
func (p *Preparer) CreateTexture(desc device.TextureDesc) (device.Texture, error) {
	p.Creates++
	return p.Device.CreateTexture(desc)
}

// PrepareBuffer prepares on the device under p, counted.
func (p *Preparer) PrepareBuffer(desc device.BufferDesc) *device.Pending {
	return counted(p, device.Prepare(p.Device, desc))
}

// PrepareTexture prepares on the device under p, counted.
func (p *Preparer) PrepareTexture(desc device.TextureDesc) *device.PendingTexture {
	return counted(p, device.PrepareTexture(p.Device, desc))
}

// counted returns inner made ahead (whatever the device under p does),
// its Take and Release counted in p.
func counted[T any](p *Preparer, inner *device.PendingOf[T]) *device.PendingOf[T] {
	p.Prepared++
	return device.NewPending(func(take bool) (T, error) {
		if !take {
			p.Dropped++
			inner.Release()
			var none T
			return none, nil
		}
		p.Taken++
		return inner.Take()
	})
}
