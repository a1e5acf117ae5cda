//go:build !cgo && !js

package webgpu

// The WebGPU backend calls wgpu-native, a C library, through cgo. This
// file is built only when cgo is off (CGO_ENABLED=0, or no C compiler
// found), so that the build stops here, with this name as its message,
// instead of deep inside the binding.
const _ = webgpu_backend_needs_cgo__set_CGO_ENABLED_1_and_install_a_C_compiler_such_as_gcc
