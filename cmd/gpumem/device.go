package main

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/gpumem/gpumem/device/webgpu"
)

// The -device flag of demo and devbench: host (demo only), webgpu (any
// adapter), or webgpu on one backend.
const deviceFlagHelp = "`device`: host, webgpu (any adapter), or webgpu on one backend: vulkan, metal, dx12 or gl"

// webgpuBackends are the values of -device that pick a webgpu backend.
var webgpuBackends = []string{"vulkan", "metal", "dx12", "gl"}

// checkDevice returns a usage error for a -device value that is unknown,
// host where the command needs a GPU (allowHost false), or a backend this
// operating system has no driver model for (Metal off Apple systems, DX12
// off Windows).
func checkDevice(dev string, allowHost bool) error {
	switch dev {
	case "", "webgpu":
		return nil
	case "host":
		if allowHost {
			return nil
		}
		return usagef("-device host: the host device is plain Go memory, with no GPU to measure; want webgpu, vulkan, metal, dx12 or gl")
	case "vulkan", "gl":
		return nil
	case "metal":
		if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
			return nil
		}
		return usagef("-device metal: Metal is Apple's; on %s use vulkan or gl (or webgpu for any adapter)", runtime.GOOS)
	case "dx12":
		if runtime.GOOS == "windows" {
			return nil
		}
		return usagef("-device dx12: DirectX 12 is Windows'; on %s use vulkan or gl (or webgpu for any adapter)", runtime.GOOS)
	}
	want := "webgpu, vulkan, metal, dx12 or gl"
	if allowHost {
		want = "host, " + want
	}
	return usagef("-device %q: want %s", dev, want)
}

// openWebGPU opens a webgpu device on the backend dev names ("" or
// "webgpu": any). When no adapter is found, the error wraps
// webgpu.ErrNoAdapter and says what to install where that is known.
func openWebGPU(dev string, opts webgpu.Options) (*webgpu.Device, error) {
	if dev != "webgpu" {
		opts.Backend = dev
	}
	d, err := webgpu.New(opts.FromEnv())
	if errors.Is(err, webgpu.ErrNoAdapter) {
		o := opts.FromEnv()
		what := "no WebGPU adapter"
		if o.Backend != "" {
			what = "no WebGPU adapter on " + o.Backend
		}
		if o.Power != "" {
			what += ", power " + o.Power
		}
		if o.Fallback {
			what += ", fallback"
		}
		return nil, fmt.Errorf("%s: %w%s", what, webgpu.ErrNoAdapter, noAdapterHint(o.Backend))
	}
	return d, err
}

// noAdapterHint says what gives this system an adapter of backend.
func noAdapterHint(backend string) string {
	switch {
	case runtime.GOOS == "linux" && (backend == "" || backend == "vulkan"):
		return " (on Linux without a GPU driver, Mesa's software Vulkan: apt-get install mesa-vulkan-drivers)"
	case runtime.GOOS == "linux" && backend == "gl":
		return " (no OpenGL ES driver; -device vulkan runs on Mesa's software Vulkan: apt-get install mesa-vulkan-drivers)"
	case runtime.GOOS == "darwin" && backend == "vulkan":
		return " (Vulkan on macOS needs MoltenVK; -device metal is native)"
	}
	return ""
}
