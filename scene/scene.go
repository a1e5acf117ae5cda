package scene

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/gpumem/gpumem/mesh"
)

const (
	// Grid is the number of tiles along each side of the square grid.
	Grid = 20
	// Live is the number of meshes the scene holds once it has filled up.
	Live = 300
	// Churn is the number of meshes that leave, and as many that come,
	// each frame once the scene has filled up.
	Churn = 12
	// TextureSize is the width and height of every mesh texture, in texels.
	TextureSize = 16
	// VertexStride is the size of one vertex: position and uv as float32x2,
	// tint as unorm8x4.
	VertexStride = 20
)

// Item is one mesh of the scene and its texture. Its data never changes:
// an item leaves and a new one comes in its place.
type Item struct {
	ID   int
	Tile int
	// Mesh is a fan of triangles around the tile's centre, in tile units
	// (the tile spans -1 to 1), with uint16 indices.
	Mesh mesh.Mesh
	// Pixels is the texture, TextureSize square, RGBA8, or nil for an
	// untextured item (drawn with the white texture).
	Pixels []byte
	// Spin is the turn rate in radians a second; Phase the starting angle.
	Spin, Phase float32
}

// Center returns the tile's centre in tile units from the grid's centre:
// from -(Grid-1) to Grid-1 along each axis, tiles 2 units apart.
func (it *Item) Center() (x, y float32) {
	return float32(2*(it.Tile%Grid) - (Grid - 1)), float32(2*(it.Tile/Grid) - (Grid - 1))
}

// Scene is the stream of items, the same for the same seed.
type Scene struct {
	r      *rand.Rand
	frame  int
	nextID int
	tiles  [Grid * Grid]*Item // nil where the tile is free
	live   int
	items  []*Item // Items' result, reused
}

// New returns an empty scene that Step fills from seed.
func New(seed uint64) *Scene {
	return &Scene{r: rand.New(rand.NewPCG(seed, 2026))}
}

// Frame returns the number of Steps taken: the frame the last Step made.
func (s *Scene) Frame() int { return s.frame }

// Len returns the number of live items.
func (s *Scene) Len() int { return s.live }

// Step advances the scene by a frame and returns the items that came and
// the ones that left. The first frames fill the grid up to Live items;
// from then on Churn items leave and Churn come each frame. The slices
// are new.
func (s *Scene) Step() (added, removed []*Item) {
	s.frame++
	leave := Churn
	if s.live < Live {
		leave = 0
	}
	for range leave {
		t := s.pick(true)
		removed = append(removed, s.tiles[t])
		s.tiles[t] = nil
		s.live--
	}
	come := min(Live-s.live, 4*Churn)
	for range come {
		t := s.pick(false)
		it := s.newItem(t)
		s.tiles[t] = it
		s.live++
		added = append(added, it)
	}
	return added, removed
}

// pick returns a random tile that is taken (or free).
func (s *Scene) pick(taken bool) int {
	for {
		if t := s.r.IntN(len(s.tiles)); (s.tiles[t] != nil) == taken {
			return t
		}
	}
}

// Items returns the live items in tile order: the order they are drawn
// in. The slice is the scene's, valid until the next call.
func (s *Scene) Items() []*Item {
	s.items = s.items[:0]
	for _, it := range s.tiles {
		if it != nil {
			s.items = append(s.items, it)
		}
	}
	return s.items
}

// newItem makes an item for tile t: a polygon or a star of 3 to 40
// points (so meshes differ in size and the slabs fragment), with a
// texture of checks or stripes, one item in eight untextured.
func (s *Scene) newItem(t int) *Item {
	r := s.r
	s.nextID++
	it := &Item{ID: s.nextID, Tile: t, Spin: (r.Float32() - 0.5) * 3, Phase: r.Float32() * 2 * math.Pi}
	n := 3 + r.IntN(38)
	star := r.IntN(3) == 0
	rim, center := randColor(r), randColor(r)
	m := &it.Mesh
	m.VertexStride, m.IndexFormat = VertexStride, mesh.Uint16
	m.Vertices = appendVertex(m.Vertices, 0, 0, center)
	for k := range n {
		a := 2 * math.Pi * float64(k) / float64(n)
		rad := 1.0
		if star && k%2 == 1 {
			rad = 0.45
		}
		m.Vertices = appendVertex(m.Vertices, float32(rad*math.Cos(a)), float32(rad*math.Sin(a)), rim)
		for _, i := range []int{0, 1 + k, 1 + (k+1)%n} {
			m.Indices = binary.LittleEndian.AppendUint16(m.Indices, uint16(i))
		}
	}
	if r.IntN(8) != 0 {
		it.Pixels = pattern(r)
	}
	return it
}

// appendVertex appends a vertex at (x, y) in tile units; its uv maps the
// tile's square onto the texture.
func appendVertex(b []byte, x, y float32, tint [4]byte) []byte {
	for _, f := range []float32{x, y, (x + 1) / 2, (1 - y) / 2} {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return append(b, tint[:]...)
}

// pattern returns a texture of two colours: checks or stripes of 1, 2, 4
// or 8 texels.
func pattern(r *rand.Rand) []byte {
	a, b := randColor(r), randColor(r)
	cell, kind := 1<<r.IntN(4), r.IntN(3)
	px := make([]byte, 0, TextureSize*TextureSize*4)
	for y := range TextureSize {
		for x := range TextureSize {
			var on bool
			switch kind {
			case 0:
				on = (x/cell+y/cell)%2 == 0
			case 1:
				on = (x/cell)%2 == 0
			default:
				on = ((x+y)/cell)%2 == 0
			}
			if on {
				px = append(px, a[:]...)
			} else {
				px = append(px, b[:]...)
			}
		}
	}
	return px
}

// randColor returns an opaque colour, not too dark to see.
func randColor(r *rand.Rand) [4]byte {
	return [4]byte{byte(64 + r.IntN(192)), byte(64 + r.IntN(192)), byte(64 + r.IntN(192)), 255}
}
