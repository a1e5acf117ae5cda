//go:build cgo || js

package multidraw

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gpumem/gpumem/draw"
)

// SphereBytes is the size of one Sphere in a bounds buffer.
const SphereBytes = 16

// FrustumBytes is the size of a Frustum on the device.
const FrustumBytes = 6 * 16

// Sphere bounds one object in the space of the frustum's planes: its
// centre and radius. A bounds buffer holds one at each object index, the
// draw's first instance.
type Sphere struct {
	X, Y, Z, Radius float32
}

// Append appends s's SphereBytes bytes to b, as PrepareCulled's bounds
// buffer holds them: four little-endian float32 words.
func (s Sphere) Append(b []byte) []byte { return appendVec4(b, s.X, s.Y, s.Z, s.Radius) }

// appendVec4 appends a WGSL vec4f.
func appendVec4(b []byte, x, y, z, w float32) []byte {
	for _, f := range [4]float32{x, y, z, w} {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

// Plane is the half-space of the points p with X*p.x + Y*p.y + Z*p.z + D
// at least zero: (X, Y, Z) points inwards. Its length need not be 1.
type Plane struct {
	X, Y, Z, D float32
}

// Frustum is the six planes a view keeps: a sphere is culled when it lies
// wholly outside one of them, and kept when it straddles any. A plane of
// a Frustum may repeat another, to keep fewer than six.
type Frustum [6]Plane

// FrustumOf returns the frustum of a view-projection matrix m, column by
// column (m[4*c+r] is row r of column c, as WGSL's mat4x4f holds it), into
// WebGPU's clip space: -w <= x, y <= w and 0 <= z <= w. The planes are in
// m's source space, where the spheres are.
func FrustumOf(m [16]float32) Frustum {
	row := func(r int) [4]float32 { return [4]float32{m[r], m[4+r], m[8+r], m[12+r]} }
	r0, r1, r2, r3 := row(0), row(1), row(2), row(3)
	plus := func(a [4]float32, sign float32, b [4]float32) Plane {
		return Plane{a[0] + sign*b[0], a[1] + sign*b[1], a[2] + sign*b[2], a[3] + sign*b[3]}
	}
	return Frustum{
		plus(r3, 1, r0),              // left: x >= -w
		plus(r3, -1, r0),             // right: x <= w
		plus(r3, 1, r1),              // bottom: y >= -w
		plus(r3, -1, r1),             // top: y <= w
		{r2[0], r2[1], r2[2], r2[3]}, // near: z >= 0
		plus(r3, -1, r2),             // far: z <= w
	}
}

// normalized returns f with every plane's direction of length 1, as the
// kernels read it: the distance of a sphere's centre is then comparable
// with its radius. draw.ErrInvalidOptions for a plane of no direction or
// a non-finite word.
func (f Frustum) normalized() (Frustum, error) {
	for k, p := range f {
		l := math.Sqrt(float64(p.X)*float64(p.X) + float64(p.Y)*float64(p.Y) + float64(p.Z)*float64(p.Z))
		if l == 0 || math.IsInf(l, 0) || math.IsNaN(l) || math.IsInf(float64(p.D), 0) || math.IsNaN(float64(p.D)) {
			return f, fmt.Errorf("multidraw: frustum plane %d %v: %w", k, p, draw.ErrInvalidOptions)
		}
		f[k] = Plane{float32(float64(p.X) / l), float32(float64(p.Y) / l), float32(float64(p.Z) / l), float32(float64(p.D) / l)}
	}
	return f, nil
}

// append appends f's FrustumBytes bytes to b: a vec4f a plane.
func (f *Frustum) append(b []byte) []byte {
	for _, p := range f {
		b = appendVec4(b, p.X, p.Y, p.Z, p.D)
	}
	return b
}
