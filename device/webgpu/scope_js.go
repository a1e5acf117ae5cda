//go:build js

package webgpu

import (
	"errors"
	"syscall/js"
)

// In the browser the binding's Try calls catch only the exceptions a call
// throws; WebGPU reports validation and out-of-memory errors
// asynchronously, to error scopes or else to the device's
// uncapturederror event (a console message, nothing the program sees).
// withOOMScope runs create inside a validation scope and an out-of-memory
// scope and waits for both to pop (one promise round trip on the event
// loop), so an allocation's errors come back as values, as natively.

// withOOMScope runs create in an out-of-memory and a validation error
// scope; oom is true when the first caught an error, and err is create's
// error or else the validation error the second caught.
func (d *Device) withOOMScope(create func() error) (oom bool, err error) {
	dev := jsOf(d.dev)
	dev.Call("pushErrorScope", "validation")
	dev.Call("pushErrorScope", "out-of-memory")
	err = create()
	popOOM := dev.Call("popErrorScope")
	popValidation := dev.Call("popErrorScope")
	res, ok := await(js.Global().Get("Promise").Call("all", []any{popOOM, popValidation}))
	if !ok {
		// popErrorScope rejects only on a scope stack in disorder, or a
		// lost device.
		if err == nil {
			err = errors.New("device is lost: popErrorScope rejected: " + jsMessage(res))
		}
		return false, err
	}
	oom = res.Index(0).Truthy()
	if v := res.Index(1); v.Truthy() && err == nil {
		err = errors.New("Validation Error: " + v.Get("message").String())
	}
	return oom, err
}

// jsMessage returns the message of a JavaScript error, or its text.
func jsMessage(v js.Value) string {
	if v.Type() == js.TypeObject && v.Get("message").Type() == js.TypeString {
		return v.Get("message").String()
	}
	return v.String()
}
