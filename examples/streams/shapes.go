//go:build !js

package main

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/gpumem/gpumem/mesh"
)

// The meshes and textures the loaders make, procedurally: boxes, wavy
// grids and spheres of varied vertex counts, their attributes in four
// arrays of their own, and label-like and square images of mixed sizes.

// The four vertex streams, one array per attribute, as Cogent Core's
// phong renderer keeps them: position, normal, texture coordinate and
// colour. Their strides are the vertex buffer slots' (main's pipeline).
const (
	positionBytes = 12 // vec3f
	normalBytes   = 12 // vec3f
	uvBytes       = 8  // vec2f
	colorBytes    = 16 // vec4f
)

// strides lists the streams' strides in slot order.
var strides = [4]uint32{positionBytes, normalBytes, uvBytes, colorBytes}

// shape is one mesh's data as the loaders build it: four attribute
// arrays of one vertex count and an index array.
type shape struct {
	streams [4][]byte
	format  mesh.IndexFormat
	indices []byte
}

// vertices returns the shape's vertex count.
func (s *shape) vertices() int { return len(s.streams[0]) / positionBytes }

// indexCount returns the shape's index count.
func (s *shape) indexCount() int { return len(s.indices) / int(s.format) }

// mesh returns the shape as the mesh allocator takes it: separate streams.
func (s *shape) mesh() mesh.Mesh {
	m := mesh.Mesh{IndexFormat: s.format, Indices: s.indices}
	for i, data := range s.streams {
		m.Streams = append(m.Streams, mesh.Stream{Stride: strides[i], Data: data})
	}
	return m
}

// builder accumulates a shape's vertices and indices.
type builder struct {
	s     shape
	idx   []uint32
	color [3]float32
}

func (b *builder) vertex(p, n [3]float32, u, v float32) uint32 {
	k := uint32(b.s.vertices())
	b.s.streams[0] = appendFloats(b.s.streams[0], p[:]...)
	b.s.streams[1] = appendFloats(b.s.streams[1], n[:]...)
	b.s.streams[2] = appendFloats(b.s.streams[2], u, v)
	// The colour shades along the height, so a vertex read from the
	// wrong place shows.
	t := 0.75 + 0.25*p[1]
	b.s.streams[3] = appendFloats(b.s.streams[3], b.color[0]*t, b.color[1]*t, b.color[2]*t, 1)
	return k
}

// quad adds the triangles of the grid of (cols+1) x (rows+1) vertices
// starting at vertex first, row by row.
func (b *builder) quads(first uint32, cols, rows int) {
	w := uint32(cols + 1)
	for y := range uint32(rows) {
		for x := range uint32(cols) {
			a := first + y*w + x
			b.idx = append(b.idx, a, a+1, a+w, a+1, a+w+1, a+w)
		}
	}
}

// finish encodes the indices in format f.
func (b *builder) finish(f mesh.IndexFormat) *shape {
	b.s.format = f
	for _, i := range b.idx {
		if f == mesh.Uint16 {
			b.s.indices = binary.LittleEndian.AppendUint16(b.s.indices, uint16(i))
		} else {
			b.s.indices = binary.LittleEndian.AppendUint32(b.s.indices, i)
		}
	}
	return &b.s
}

// newShape makes a random shape within the unit sphere.
func newShape(rng *rand.Rand) *shape {
	b := &builder{color: [3]float32{0.4 + 0.6*rng.Float32(), 0.4 + 0.6*rng.Float32(), 0.4 + 0.6*rng.Float32()}}
	switch rng.IntN(3) {
	case 0:
		return box(b, 1+rng.IntN(6))
	case 1:
		return grid(b, 2+rng.IntN(24), 2+rng.IntN(12), rng.Float32()*6)
	default:
		return sphere(b, 6+rng.IntN(34), 4+rng.IntN(16))
	}
}

// box is a cube of side 1.1, each face a grid of n x n quads.
func box(b *builder, n int) *shape {
	const h = 0.55
	faces := [6][3][3]float32{ // normal, u axis, v axis
		{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}, {{0, 0, -1}, {-1, 0, 0}, {0, 1, 0}},
		{{1, 0, 0}, {0, 0, -1}, {0, 1, 0}}, {{-1, 0, 0}, {0, 0, 1}, {0, 1, 0}},
		{{0, 1, 0}, {1, 0, 0}, {0, 0, -1}}, {{0, -1, 0}, {1, 0, 0}, {0, 0, 1}},
	}
	for _, f := range faces {
		first := uint32(b.s.vertices())
		for y := range n + 1 {
			for x := range n + 1 {
				u, v := float32(x)/float32(n), float32(y)/float32(n)
				var p [3]float32
				for i := range p {
					p[i] = h * (f[0][i] + (2*u-1)*f[1][i] + (2*v-1)*f[2][i])
				}
				b.vertex(p, f[0], u, 1-v)
			}
		}
		b.quads(first, n, n)
	}
	return b.finish(mesh.Uint16)
}

// grid is a wavy sheet of cols x rows quads facing the viewer.
func grid(b *builder, cols, rows int, phase float32) *shape {
	for y := range rows + 1 {
		for x := range cols + 1 {
			u, v := float32(x)/float32(cols), float32(y)/float32(rows)
			px, py := 1.3*u-0.65, 0.9*v-0.45
			z := 0.12 * sin32(6*px+phase)
			dz := 0.72 * cos32(6*px+phase) // dz/dx
			n := normalize([3]float32{dz, 0, -1})
			b.vertex([3]float32{px, py, z}, n, u, 1-v)
		}
	}
	b.quads(0, cols, rows)
	return b.finish(mesh.Uint16)
}

// sphere is a sphere of radius 0.7 of segs x rings quads, indexed in
// 32 bits.
func sphere(b *builder, segs, rings int) *shape {
	for y := range rings + 1 {
		for x := range segs + 1 {
			u, v := float32(x)/float32(segs), float32(y)/float32(rings)
			th, ph := 2*math.Pi*u, math.Pi*v
			n := [3]float32{sin32(ph) * cos32(th), -cos32(ph), sin32(ph) * sin32(th)}
			b.vertex([3]float32{0.7 * n[0], 0.7 * n[1], 0.7 * n[2]}, n, u, 1-v)
		}
	}
	b.quads(0, segs, rings)
	return b.finish(mesh.Uint32)
}

// bitmap is an RGBA8 image of its own size, mip 0 in tight rows.
type bitmap struct {
	width, height int
	pixels        []byte
}

// newBitmap makes a label-like image, 64x16 to 1024x64 (a row of glyph
// blocks on a band), or a square of rings and checks, 24 to 200 texels.
// Their sizes stay within a few size classes (bindless.ClassOf), so the
// classes fit in the pages the shader binds.
func newBitmap(rng *rand.Rand) bitmap {
	bg := [3]byte{byte(20 + rng.IntN(80)), byte(20 + rng.IntN(80)), byte(20 + rng.IntN(80))}
	fg := [3]byte{byte(160 + rng.IntN(96)), byte(160 + rng.IntN(96)), byte(160 + rng.IntN(96))}
	var im bitmap
	switch rng.IntN(3) {
	case 0: // a short label: classes 64..256 x 16..32
		im = bitmap{width: 64 + rng.IntN(193), height: 16 + rng.IntN(17)}
	case 1: // a long one: classes 512..1024 x 64
		im = bitmap{width: 257 + rng.IntN(768), height: 33 + rng.IntN(32)}
	default:
		side := []int{24, 48, 64, 100, 128, 200}[rng.IntN(6)]
		im = bitmap{width: side, height: side}
	}
	im.pixels = make([]byte, 4*im.width*im.height)
	label := im.width != im.height
	glyph := max(im.height*3/5, 4) // a glyph's width, in texels
	seed := rng.Uint64()
	for y := range im.height {
		for x := range im.width {
			var on bool
			if label {
				// Glyphs: a 3x5 grid of blocks per character cell,
				// each on or off by the hash of its cell and block.
				cx, gx := x/glyph, (x%glyph)*4/glyph
				gy := (y - im.height/6) * 5 / max(im.height*2/3, 1)
				on = gx < 3 && gy >= 0 && gy < 5 && bit(seed, cx*15+gy*3+gx)
			} else {
				dx, dy := x-im.width/2, y-im.height/2
				on = (dx*dx+dy*dy)/max(im.width*im.width/40, 1)%2 == 0 != ((x/4+y/4)%2 == 0)
			}
			c := bg
			if on {
				c = fg
			}
			p := 4 * (y*im.width + x)
			// The texel's own coordinates in its low bits: a texel
			// sampled from the wrong place changes the picture.
			im.pixels[p], im.pixels[p+1], im.pixels[p+2], im.pixels[p+3] = c[0]^byte(x&7), c[1]^byte(y&7), c[2], 255
		}
	}
	return im
}

// bit returns bit k of a hash of seed.
func bit(seed uint64, k int) bool {
	h := seed ^ uint64(k)*0x9e3779b97f4a7c15
	h ^= h >> 31
	h *= 0xbf58476d1ce4e5b9
	return h>>40&1 == 1
}

func appendFloats(b []byte, fs ...float32) []byte {
	for _, f := range fs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

func sin32(x float32) float32 { return float32(math.Sin(float64(x))) }
func cos32(x float32) float32 { return float32(math.Cos(float64(x))) }

func normalize(v [3]float32) [3]float32 {
	l := float32(math.Sqrt(float64(v[0]*v[0] + v[1]*v[1] + v[2]*v[2])))
	return [3]float32{v[0] / l, v[1] / l, v[2] / l}
}

func float32frombytes(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }
