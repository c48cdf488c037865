package main

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// The RAVON outdoor scenario (paper IV-B): a 50 m x 50 m test area of
// rolling terrain with a high-contrast ground texture, rocks, bushes and
// trees with alpha-masked foliage, a sky dome, and the robot RAVON with a
// stereo pair, a 3D lidar and three planar scanners. The world origin is
// the area's center, x east, y north, z up.

const (
	terrainSize = 50.0 // meters, square
	terrainStep = 1.0  // grid spacing in meters
	terrainTile = 10.0 // meters per tile: a mesh each, so views cull the rest
	groundTex   = 2048 // ground texture pixels per side (2.4 cm a texel)
)

// terrainHeight is the ground's height at (x, y): rolling hills of about
// ±0.6 m with bumps of a few centimeters. scene.xml's robot pose and graph
// nodes are placed on it (the generator's tests check them).
func terrainHeight(x, y float64) float64 {
	h := 1.3 * (fbm(x/16+50, y/16+50, 3, 7) - 0.5)
	h += 0.12 * (valueNoise(x/2.3, y/2.3, 9) - 0.5)
	return h
}

// terrainNormal is the ground's unit normal at (x, y), from central
// differences of terrainHeight.
func terrainNormal(x, y float64) mgl64.Vec3 {
	const e = 0.02
	dx := (terrainHeight(x+e, y) - terrainHeight(x-e, y)) / (2 * e)
	dy := (terrainHeight(x, y+e) - terrainHeight(x, y-e)) / (2 * e)
	return mgl64.Vec3{-dx, -dy, 1}.Normalize()
}

func v32(v mgl64.Vec3) mgl32.Vec3 { return mgl32.Vec3{float32(v[0]), float32(v[1]), float32(v[2])} }

// finish sets the primitive's material and key and wraps it in a mesh.
func finish(name string, p *models.Primitive, m *models.Material) *models.Mesh {
	p.Material = m
	p.UpdateKey()
	return &models.Mesh{Name: name, Primitives: []*models.Primitive{p}}
}

// ravonTerrain is the ground (in tiles), the rocks and the tree trunks.
func ravonTerrain() *models.Model {
	m := models.NewModel("terrain")
	ground := &models.Material{Name: "ground", BaseColor: [4]float32{1, 1, 1, 1}, AlphaCutoff: 0.5, Roughness: 1,
		BaseColorTexture: groundTexture()}
	tiles := m.AddNode(nil, "ground", mgl64.Ident4(), nil)
	n := int(terrainTile / terrainStep)
	for ty := 0; ty < int(terrainSize/terrainTile); ty++ {
		for tx := 0; tx < int(terrainSize/terrainTile); tx++ {
			var p models.Primitive
			x0, y0 := -terrainSize/2+float64(tx)*terrainTile, -terrainSize/2+float64(ty)*terrainTile
			// Vertices relative to the tile's center, which is the node's
			// position: renderers that sort by node position then draw
			// near tiles first, hiding the far ones' pixels early.
			cx, cy := x0+terrainTile/2, y0+terrainTile/2
			for j := 0; j <= n; j++ {
				for i := 0; i <= n; i++ {
					x, y := x0+float64(i)*terrainStep, y0+float64(j)*terrainStep
					p.Positions = append(p.Positions, mgl32.Vec3{float32(x - cx), float32(y - cy), float32(terrainHeight(x, y))})
					p.Normals = append(p.Normals, v32(terrainNormal(x, y)))
					// The image's top row is the area's north edge.
					p.TexCoords = append(p.TexCoords, mgl32.Vec2{float32((x + terrainSize/2) / terrainSize), float32((terrainSize/2 - y) / terrainSize)})
				}
			}
			for j := 0; j < n; j++ {
				for i := 0; i < n; i++ {
					a := uint32(j*(n+1) + i)
					b, c, d := a+1, a+uint32(n+1)+1, a+uint32(n+1)
					p.Indices = append(p.Indices, a, b, c, a, c, d)
				}
			}
			name := fmt.Sprintf("ground_%d_%d", tx, ty)
			m.AddNode(tiles, name, at(cx, cy, 0), finish(name, &p, ground))
		}
	}

	rockTex := rockTexture()
	stone := &models.Material{Name: "rock", BaseColor: [4]float32{0.85, 0.82, 0.78, 1}, AlphaCutoff: 0.5, Roughness: 1, BaseColorTexture: rockTex}
	var shapes []*models.Mesh
	for k := 0; k < 4; k++ {
		shapes = append(shapes, rockMesh(fmt.Sprintf("rock_%d", k), uint64(100+k), stone))
	}
	// Rocks and trunks are baked into a few meshes: on llvmpipe every
	// draw costs about as much as thousands of pixels, and a view would
	// otherwise draw dozens of small ones. Rocks go by quadrant, so that
	// a view culls those behind it.
	var quadrants [4][]placed
	for i, r := range rockPlacements() {
		z := terrainHeight(r.x, r.y) - 0.12*r.size
		pose := at(r.x, r.y, z).Mul4(mgl64.HomogRotate3DZ(r.yaw)).Mul4(mgl64.Scale3D(r.size, r.size*r.squash, r.size*0.85))
		q := 0
		if r.x >= 0 {
			q++
		}
		if r.y >= 0 {
			q += 2
		}
		quadrants[q] = append(quadrants[q], placed{shapes[i%len(shapes)], pose})
	}
	rocks := m.AddNode(nil, "rocks", mgl64.Ident4(), nil)
	for q, list := range quadrants {
		name := fmt.Sprintf("rocks_%d", q)
		m.AddNode(rocks, name, mgl64.Ident4(), bake(name, stone, list))
	}

	bark := &models.Material{Name: "bark", BaseColor: [4]float32{0.45, 0.32, 0.2, 1}, AlphaCutoff: 0.5, Roughness: 1, BaseColorTexture: rockTex}
	trunk := models.Cylinder("trunk", 0.14, 3.4, 12, [4]float32{1, 1, 1, 1})
	var trunks []placed
	for _, t := range treePlacements {
		trunks = append(trunks, placed{trunk, at(t[0], t[1], terrainHeight(t[0], t[1])+1.6)})
	}
	m.AddNode(nil, "trunks", mgl64.Ident4(), bake("trunks", bark, trunks))
	return m
}

// placed is a mesh at a pose, to be baked.
type placed struct {
	mesh *models.Mesh
	pose mgl64.Mat4
}

// bake merges the first primitive of every placed mesh, transformed to its
// pose, into one primitive with material mat.
func bake(name string, mat *models.Material, list []placed) *models.Mesh {
	var p models.Primitive
	for _, pl := range list {
		src := pl.mesh.Primitives[0]
		normal := pl.pose.Mat3().Inv().Transpose()
		base := uint32(len(p.Positions))
		for k, v := range src.Positions {
			q := pl.pose.Mul4x1(mgl64.Vec4{float64(v[0]), float64(v[1]), float64(v[2]), 1}).Vec3()
			n := normal.Mul3x1(mgl64.Vec3{float64(src.Normals[k][0]), float64(src.Normals[k][1]), float64(src.Normals[k][2])})
			p.Positions = append(p.Positions, v32(q))
			p.Normals = append(p.Normals, v32(n.Normalize()))
			p.TexCoords = append(p.TexCoords, src.TexCoords[k])
		}
		for _, i := range src.Indices {
			p.Indices = append(p.Indices, base+i)
		}
	}
	return finish(name, &p, mat)
}

type rockPlace struct{ x, y, size, squash, yaw float64 }

// rockPlacements scatters rocks over the area, keeping the robot's start
// corridor (around y = -3, x from -12 to 6) and the trees clear, plus a few
// placed in the stereo pair's view at the start.
func rockPlacements() []rockPlace {
	out := []rockPlace{
		{-5, -1.6, 1.0, 0.8, 0.3}, {-3.5, -4.8, 1.4, 1.1, 1.2}, {-1, -2.5, 0.9, 0.7, 2.0},
		{1, -5.5, 1.6, 0.9, 0.7}, {4.5, -1.5, 1.3, 0.8, 2.6}, {7, -4.5, 1.8, 0.7, 1.6},
	}
	g := rng{s: 4711}
	for len(out) < 40 {
		x, y := g.float(-23, 23), g.float(-23, 23)
		if y > -6.5 && y < 0.5 && x > -14 && x < 8 {
			continue
		}
		out = append(out, rockPlace{x, y, g.float(0.3, 1.2), g.float(0.6, 1.2), g.float(0, 2*math.Pi)})
	}
	return out
}

// treePlacements are the trees' trunk positions.
var treePlacements = [][2]float64{{9, 4}, {-6, 7}, {14, -9}, {-16, -12}, {3, 14}, {18, 12}, {-19, 6}, {8, -14}}

// bushPlacements are the bushes' centers and sizes.
var bushPlacements = [][3]float64{
	{3.5, 0.8, 1.2}, {7.5, -3.5, 1.4}, {-1, 2.5, 1.0}, {11, 1, 1.6}, {-9, 3, 1.3}, {5, 7, 1.5},
	{-13, -8, 1.2}, {15, -3, 1.4}, {-4, -11, 1.1}, {12, 8, 1.3}, {-17, 0, 1.5}, {20, -16, 1.2},
}

// groundTexture is the terrain's high-contrast texture: gravel (stones
// with dark gaps), grass and dirt patches, every texel distinct. It is
// paletted (3 surface kinds x 32 brightness levels): 2.4 MB of PNG, a
// third of its RGB size.
func groundTexture() image.Image {
	const levels = 32
	base := [3][3]float64{{0.62, 0.6, 0.56}, {0.33, 0.55, 0.2}, {0.52, 0.4, 0.27}} // gravel, grass, dirt
	pal := make(color.Palette, 0, 3*levels)
	for _, b := range base {
		for l := 0; l < levels; l++ {
			k := 0.12 + 1.55*float64(l)/(levels-1)
			pal = append(pal, color.RGBA{ch(b[0] * k), ch(b[1] * k), ch(b[2] * k), 255})
		}
	}
	img := image.NewPaletted(image.Rect(0, 0, groundTex, groundTex), pal)
	const texel = terrainSize / groundTex
	for j := 0; j < groundTex; j++ {
		y := terrainSize/2 - (float64(j)+0.5)*texel
		for i := 0; i < groundTex; i++ {
			x := -terrainSize/2 + (float64(i)+0.5)*texel
			kind, level := groundTexel(x, y, i, j)
			l := int(level*(levels-1) + 0.5)
			l = max(0, min(levels-1, l))
			img.Pix[j*img.Stride+i] = uint8(kind*levels + l)
		}
	}
	return img
}

func ch(v float64) uint8 { return uint8(math.Max(0, math.Min(255, math.Round(255*v)))) }

// groundTexel returns the surface kind (0 gravel, 1 grass, 2 dirt) and the
// brightness in 0..1 at world (x, y), texel (i, j).
func groundTexel(x, y float64, i, j int) (int, float64) {
	zone := fbm(x/7, y/7, 3, 21) + 0.1*(valueNoise(x*4, y*4, 22)-0.5)
	// Per-texel grain of two steps: as contrasty for a stereo matcher as
	// uniform noise, and fewer bits in the PNG.
	speck := float64(hash2(int64(i), int64(j), 23)&1) - 0.5
	switch {
	case zone < 0.46: // gravel: stones of about 9 cm with dark gaps
		f1, f2, id := cells(x/0.09, y/0.09, 31)
		if f2-f1 < 0.13 {
			return 0, 0.08 + 0.1*unit(id) + 0.1*speck
		}
		return 0, 0.3 + 0.55*unit(id) + 0.15*(1-f1) + 0.1*speck
	case zone > 0.54: // grass: tufts and blades
		tuft := fbm(x/0.25, y/0.25, 2, 41)
		return 1, 0.1 + 0.55*tuft + 0.45*speck + 0.2
	default: // dirt with pebbles
		f1, _, id := cells(x/0.15, y/0.15, 51)
		if f1 < 0.22 {
			return 2, 0.55 + 0.35*unit(id) + 0.2*speck
		}
		return 2, 0.3 + 0.35*fbm(x/0.4, y/0.4, 2, 52) + 0.45*speck
	}
}

// rockTexture is a gray stone grain (256 x 256, repeating), tinted by the
// rock and bark materials.
func rockTexture() image.Image {
	const n = 256
	img := image.NewGray(image.Rect(0, 0, n, n))
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			// Periodic coordinates make the texture tile seamlessly: the
			// noise lattice wraps every 16 cells.
			v := tiledFBM(float64(i)/n, float64(j)/n, 16, 61)
			s := unit(hash2(int64(i), int64(j), 62))
			l := 0.15 + 1.1*(v-0.25) + 0.3*(s-0.5)
			img.Pix[j*img.Stride+i] = ch(l)
		}
	}
	return img
}

// tiledFBM is fbm over the unit square, periodic in both directions, with
// period lattice cells in its first octave.
func tiledFBM(u, v float64, period int, seed uint64) float64 {
	sum, amp, norm := 0.0, 1.0, 0.0
	for o := 0; o < 4; o++ {
		sum += amp * tiledNoise(u*float64(period), v*float64(period), int64(period), seed+uint64(o))
		norm += amp
		amp *= 0.5
		period *= 2
	}
	return sum / norm
}

func tiledNoise(x, y float64, period int64, seed uint64) float64 {
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := x-x0, y-y0
	ix, iy := int64(x0), int64(y0)
	sx, sy := fx*fx*(3-2*fx), fy*fy*(3-2*fy)
	at := func(i, j int64) float64 { return unit(hash2(i%period, j%period, seed)) }
	a, b, c, d := at(ix, iy), at(ix+1, iy), at(ix, iy+1), at(ix+1, iy+1)
	top := a + (b-a)*sx
	bot := c + (d-c)*sx
	return top + (bot-top)*sy
}

// rockMesh is an irregular boulder: a subdivided icosahedron pushed in and
// out by noise, about 1 m across, its base flattened. Texture coordinates
// are planar (the texture repeats), normals smooth.
func rockMesh(name string, seed uint64, mat *models.Material) *models.Mesh {
	verts, faces := icosphere(2)
	var p models.Primitive
	pos := make([]mgl64.Vec3, len(verts))
	for i, v := range verts {
		n := valueNoise(v[0]*1.7+v[2], v[1]*1.7-v[2], seed) + 0.5*valueNoise(v[1]*3.1, v[2]*3.1+v[0], seed+1)
		r := 0.38 + 0.2*n
		q := v.Mul(r)
		if q[2] < -0.15 {
			q[2] = -0.15 - 0.3*(q[2]+0.15) // flattened underside
		}
		pos[i] = q
	}
	nrm := make([]mgl64.Vec3, len(verts))
	for _, f := range faces {
		a, b, c := pos[f[0]], pos[f[1]], pos[f[2]]
		fn := b.Sub(a).Cross(c.Sub(a)) // area-weighted
		for _, k := range f {
			nrm[k] = nrm[k].Add(fn)
		}
	}
	for i := range pos {
		p.Positions = append(p.Positions, v32(pos[i]))
		p.Normals = append(p.Normals, v32(nrm[i].Normalize()))
		p.TexCoords = append(p.TexCoords, mgl32.Vec2{float32(1.3 * (pos[i][0] + 0.6*pos[i][1])), float32(1.3 * (pos[i][2] - 0.4*pos[i][1]))})
	}
	for _, f := range faces {
		p.Indices = append(p.Indices, f[0], f[1], f[2])
	}
	return finish(name, &p, mat)
}

// icosphere returns the unit sphere as an icosahedron subdivided level
// times: vertices and counter-clockwise (outward) faces.
func icosphere(level int) ([]mgl64.Vec3, [][3]uint32) {
	t := (1 + math.Sqrt(5)) / 2
	verts := []mgl64.Vec3{
		{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0},
		{0, -1, t}, {0, 1, t}, {0, -1, -t}, {0, 1, -t},
		{t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1},
	}
	for i := range verts {
		verts[i] = verts[i].Normalize()
	}
	faces := [][3]uint32{
		{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11},
		{1, 5, 9}, {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
		{3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8}, {3, 8, 9},
		{4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1},
	}
	for l := 0; l < level; l++ {
		mid := map[[2]uint32]uint32{}
		middle := func(a, b uint32) uint32 {
			k := [2]uint32{min(a, b), max(a, b)}
			if i, ok := mid[k]; ok {
				return i
			}
			verts = append(verts, verts[a].Add(verts[b]).Normalize())
			mid[k] = uint32(len(verts) - 1)
			return mid[k]
		}
		var next [][3]uint32
		for _, f := range faces {
			a, b, c := middle(f[0], f[1]), middle(f[1], f[2]), middle(f[2], f[0])
			next = append(next, [3]uint32{f[0], a, c}, [3]uint32{f[1], b, a}, [3]uint32{f[2], c, b}, [3]uint32{a, b, c})
		}
		faces = next
	}
	return verts, faces
}

// ravonFoliage is the bushes' and tree crowns' leaves: crossed cards with
// an alpha-masked leaf texture, drawn from both sides. It is a part of its
// own so that the foliage element can fade it without touching the rest.
func ravonFoliage() *models.Model {
	m := models.NewModel("foliage")
	leaves := &models.Material{Name: "leaves", BaseColor: [4]float32{1, 1, 1, 1}, AlphaMode: models.AlphaMask,
		AlphaCutoff: 0.5, DoubleSided: true, Roughness: 1, BaseColorTexture: leafTexture()}
	bush := cardsMesh("bush_cards", leaves, 1.4, 1.1, 0, 3, false)
	crown := cardsMesh("crown_cards", leaves, 3.0, 2.6, -1.3, 4, true)
	for i, b := range bushPlacements {
		s := b[2]
		pose := at(b[0], b[1], terrainHeight(b[0], b[1])-0.05).Mul4(mgl64.HomogRotate3DZ(float64(i) * 0.7)).Mul4(mgl64.Scale3D(s, s, s))
		m.AddNode(nil, fmt.Sprintf("bush_%d", i), pose, bush)
	}
	for i, t := range treePlacements {
		pose := at(t[0], t[1], terrainHeight(t[0], t[1])+4.2).Mul4(mgl64.HomogRotate3DZ(float64(i) * 0.4))
		m.AddNode(nil, fmt.Sprintf("crown_%d", i), pose, crown)
	}
	return m
}

// cardsMesh is count vertical w x h cards crossed about the z axis (their
// bottom edge at z0), plus a horizontal one at mid height if flat.
func cardsMesh(name string, mat *models.Material, w, h, z0 float64, count int, flat bool) *models.Mesh {
	var p models.Primitive
	quad := func(c, du, dv mgl64.Vec3) {
		n := du.Cross(dv).Normalize()
		base := uint32(len(p.Positions))
		for _, k := range [][2]float64{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}} {
			p.Positions = append(p.Positions, v32(c.Add(du.Mul(k[0])).Add(dv.Mul(k[1]))))
			p.Normals = append(p.Normals, v32(n))
			p.TexCoords = append(p.TexCoords, mgl32.Vec2{float32((k[0] + 1) / 2), float32((1 - k[1]) / 2)})
		}
		p.Indices = append(p.Indices, base, base+1, base+2, base, base+2, base+3)
	}
	center := mgl64.Vec3{0, 0, z0 + h/2}
	for k := 0; k < count; k++ {
		a := math.Pi * float64(k) / float64(count)
		quad(center, mgl64.Vec3{math.Cos(a) * w / 2, math.Sin(a) * w / 2, 0}, mgl64.Vec3{0, 0, h / 2})
	}
	if flat {
		quad(center, mgl64.Vec3{w / 2, 0, 0}, mgl64.Vec3{0, w / 2, 0})
	}
	return finish(name, &p, mat)
}

// leafTexture is 512 x 512 straight-alpha leaves: several hundred
// elliptic leaves in shades of green, denser toward the middle, on a fully
// transparent background.
func leafTexture() image.Image {
	const n = 512
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	g := rng{s: 777}
	for k := 0; k < 420; k++ {
		// Centers fall in an ellipse that leaves the card's corners empty.
		var cx, cy float64
		for {
			cx, cy = g.float(-1, 1), g.float(-1, 1)
			if cx*cx+cy*cy < 0.8 {
				break
			}
		}
		cx, cy = (cx+1)*n/2, (cy+1)*n/2
		ang := g.float(0, math.Pi)
		length, width := g.float(18, 34), g.float(7, 13)
		shade := g.float(0.45, 1.0)
		hue := g.float(0, 1)
		r0, g0, b0 := 0.22+0.15*hue, 0.45+0.15*hue, 0.12
		ca, sa := math.Cos(ang), math.Sin(ang)
		rr := int(length) + 1
		for y := int(cy) - rr; y <= int(cy)+rr; y++ {
			for x := int(cx) - rr; x <= int(cx)+rr; x++ {
				if x < 0 || y < 0 || x >= n || y >= n {
					continue
				}
				dx, dy := float64(x)+0.5-cx, float64(y)+0.5-cy
				along, across := dx*ca+dy*sa, -dx*sa+dy*ca
				e := along*along/(length*length) + across*across/(width*width)
				if e > 1 {
					continue
				}
				// A darker midrib and a light-to-dark gradient across.
				l := shade * (0.75 + 0.25*across/width)
				if math.Abs(across) < 1 {
					l *= 0.6
				}
				i := img.PixOffset(x, y)
				img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = ch(r0*l*1.6), ch(g0*l*1.6), ch(b0*l*1.6), 255
			}
		}
	}
	return img
}

// ravonSky is a dome of radius 400 m (beyond every range sensor's reach
// and inside the cameras' far plane of 1000 m) from 20° below the horizon
// to the zenith, facing inward: a sky gradient above a dark tree line.
func ravonSky() *models.Model {
	m := models.NewModel("sky")
	const n = 128
	tex := image.NewNRGBA(image.Rect(0, 0, 4, n))
	const lo, hi = -20.0, 90.0 // elevation range, degrees
	for j := 0; j < n; j++ {
		el := hi - (float64(j)+0.5)/n*(hi-lo)
		var c [3]float64
		switch {
		case el < -1:
			c = [3]float64{0.2, 0.28, 0.18}
		case el < 0:
			c = [3]float64{0.45, 0.5, 0.45}
		default:
			t := math.Pow(el/90, 0.5)
			c = [3]float64{0.78 - 0.5*t, 0.86 - 0.38*t, 0.95 - 0.1*t}
		}
		for i := 0; i < 4; i++ {
			k := tex.PixOffset(i, j)
			tex.Pix[k], tex.Pix[k+1], tex.Pix[k+2], tex.Pix[k+3] = ch(c[0]), ch(c[1]), ch(c[2]), 255
		}
	}
	// Blended, though opaque: renderers draw it after every opaque mesh,
	// and shadow maps leave it out (it would shade the whole area and
	// stretch a sun's map over 800 m).
	mat := &models.Material{Name: "sky", BaseColor: [4]float32{1, 1, 1, 1}, AlphaMode: models.AlphaBlend, AlphaCutoff: 0.5, Roughness: 1, BaseColorTexture: tex}
	// Eight sectors of 45°, each a node placed out along its middle
	// direction with its vertices relative to that: g3n draws opaque
	// meshes nearest first by node position, and the dome, drawn last,
	// then shades only the pixels nothing else covers.
	const radius, sectors, segs, rings = 400.0, 8, 4, 12
	for k := 0; k < sectors; k++ {
		mid := 2 * math.Pi * (float64(k) + 0.5) / sectors
		center := mgl64.Vec3{radius * math.Cos(mid), radius * math.Sin(mid), 0}
		var p models.Primitive
		for r := 0; r <= rings; r++ {
			el := (lo + (hi-lo)*float64(r)/rings) * math.Pi / 180
			for s := 0; s <= segs; s++ {
				az := 2 * math.Pi * (float64(k) + float64(s)/segs) / sectors
				d := mgl64.Vec3{math.Cos(el) * math.Cos(az), math.Cos(el) * math.Sin(az), math.Sin(el)}
				p.Positions = append(p.Positions, v32(d.Mul(radius).Sub(center)))
				p.Normals = append(p.Normals, v32(d.Mul(-1)))
				p.TexCoords = append(p.TexCoords, mgl32.Vec2{float32(k*segs+s) / (sectors * segs), float32(1 - float64(r)/rings)})
			}
		}
		for r := 0; r < rings; r++ {
			for s := 0; s < segs; s++ {
				a := uint32(r*(segs+1) + s)
				b, c, d := a+1, a+segs+1, a+segs+2
				// Counter-clockwise seen from inside the dome.
				p.Indices = append(p.Indices, a, c, b, b, c, d)
			}
		}
		name := fmt.Sprintf("sky_%d", k)
		m.AddNode(nil, name, at(center[0], center[1], center[2]), finish(name, &p, mat))
	}
	return m
}

var (
	olive    = [4]float32{0.35, 0.4, 0.22, 1}
	darkGray = [4]float32{0.2, 0.2, 0.22, 1}
)

// ravon is the outdoor robot RAVON: 2.4 m long and 1.4 m wide over its
// four 0.75 m wheels, its frame on the ground between them (x forward).
// Insertion points: STEREO (the stereo bar's center, 1.6 m up, looking
// 12° down; the cameras sit 0.15 m to either side), LIDAR (2.05 m up),
// FRONT_SCANNER and REAR_SCANNER (0.5 m up, the rear one turned to look
// back) and GROUND_SCANNER (1.1 m up at the front, looking 20° down).
func ravon() *models.Model {
	m := models.NewModel("ravon")
	body := m.AddNode(nil, "body", at(0, 0, 0.75), models.Box("ravon_body", 2.0, 1.0, 0.6, olive))
	wheel := models.Cylinder("ravon_wheel", 0.375, 0.3, 24, black)
	roll := mgl64.HomogRotate3DX(mgl64.DegToRad(90))
	for i, p := range [][2]float64{{0.825, 0.55}, {0.825, -0.55}, {-0.825, 0.55}, {-0.825, -0.55}} {
		m.AddNode(body, fmt.Sprintf("wheel_%d", i), at(p[0], p[1], 0.375-0.75).Mul4(roll), wheel)
	}
	m.AddNode(nil, "mast", at(0.92, 0, 1.4), models.Cylinder("ravon_mast", 0.04, 0.7, 12, steel))
	m.AddNode(nil, "lidar_mast", at(0.45, 0, 1.5), models.Cylinder("ravon_lidar_mast", 0.04, 0.9, 12, steel))
	head := models.Box("ravon_head", 0.1, 0.12, 0.1, darkGray)
	for _, p := range []struct {
		name, point string
		pose        mgl64.Mat4
	}{
		{"stereo", "STEREO", at(1.0, 0, 1.6).Mul4(mgl64.HomogRotate3DY(mgl64.DegToRad(12)))},
		{"lidar", "LIDAR", at(0.45, 0, 2.05)},
		{"front_scanner", "FRONT_SCANNER", at(1.3, 0, 0.5)},
		{"rear_scanner", "REAR_SCANNER", at(-1.3, 0, 0.5).Mul4(mgl64.HomogRotate3DZ(math.Pi))},
		{"ground_scanner", "GROUND_SCANNER", at(1.15, 0, 1.1).Mul4(mgl64.HomogRotate3DY(mgl64.DegToRad(20)))},
	} {
		n := m.AddNode(nil, p.name, p.pose, nil)
		n.InsertionPoint = p.point
		switch p.name {
		case "stereo":
			// The bar holding both cameras sits behind their centers.
			m.AddNode(n, "stereo_bar", at(-0.07, 0, 0), models.Box("ravon_stereo_bar", 0.08, 0.42, 0.06, darkGray))
		case "lidar":
			m.AddNode(n, "lidar_head", at(0, 0, -0.09), models.Cylinder("ravon_lidar_head", 0.06, 0.1, 16, darkGray))
		default:
			m.AddNode(n, p.name+"_head", at(-0.06, 0, 0), head)
		}
	}
	return m
}
