package models

import (
	"math"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
)

// colorMaterial is the material of the shape helpers: matte, dielectric,
// blended when the color is translucent.
func colorMaterial(name string, color [4]float32) *Material {
	m := &Material{Name: name, BaseColor: color, AlphaCutoff: 0.5, Roughness: 1}
	if color[3] < 1 {
		m.AlphaMode = AlphaBlend
	}
	return m
}

// shape accumulates one primitive.
type shape struct{ p Primitive }

func (s *shape) vertex(pos, nrm mgl64.Vec3, u, v float64) uint32 {
	s.p.Positions = append(s.p.Positions, mgl32.Vec3{float32(pos[0]), float32(pos[1]), float32(pos[2])})
	s.p.Normals = append(s.p.Normals, mgl32.Vec3{float32(nrm[0]), float32(nrm[1]), float32(nrm[2])})
	s.p.TexCoords = append(s.p.TexCoords, mgl32.Vec2{float32(u), float32(v)})
	return uint32(len(s.p.Positions) - 1)
}

// quad adds the rectangle center ± du ± dv facing du×dv, whose direction
// must be the outward normal n, as two counter-clockwise triangles.
func (s *shape) quad(center, du, dv, n mgl64.Vec3) {
	a := s.vertex(center.Sub(du).Sub(dv), n, 0, 0)
	b := s.vertex(center.Add(du).Sub(dv), n, 1, 0)
	c := s.vertex(center.Add(du).Add(dv), n, 1, 1)
	d := s.vertex(center.Sub(du).Add(dv), n, 0, 1)
	s.p.Indices = append(s.p.Indices, a, b, c, a, c, d)
}

func (s *shape) mesh(name string, color [4]float32) *Mesh {
	s.p.Material = colorMaterial(name, color)
	s.p.UpdateKey()
	return &Mesh{Name: name, Primitives: []*Primitive{&s.p}}
}

// Box returns a box of size sx×sy×sz centered at the origin, with flat
// faces (24 vertices, 12 triangles).
func Box(name string, sx, sy, sz float64, color [4]float32) *Mesh {
	hx, hy, hz := sx/2, sy/2, sz/2
	x, y, z := mgl64.Vec3{1, 0, 0}, mgl64.Vec3{0, 1, 0}, mgl64.Vec3{0, 0, 1}
	var s shape
	s.quad(x.Mul(hx), y.Mul(hy), z.Mul(hz), x)
	s.quad(x.Mul(-hx), y.Mul(-hy), z.Mul(hz), x.Mul(-1))
	s.quad(y.Mul(hy), x.Mul(-hx), z.Mul(hz), y)
	s.quad(y.Mul(-hy), x.Mul(hx), z.Mul(hz), y.Mul(-1))
	s.quad(z.Mul(hz), x.Mul(hx), y.Mul(hy), z)
	s.quad(z.Mul(-hz), x.Mul(hx), y.Mul(-hy), z.Mul(-1))
	return s.mesh(name, color)
}

// Plane returns an sx×sy rectangle in the z=0 plane, centered at the origin
// and facing +z.
func Plane(name string, sx, sy float64, color [4]float32) *Mesh {
	var s shape
	s.quad(mgl64.Vec3{}, mgl64.Vec3{sx / 2, 0, 0}, mgl64.Vec3{0, sy / 2, 0}, mgl64.Vec3{0, 0, 1})
	return s.mesh(name, color)
}

// Cylinder returns a capped cylinder around the z axis, centered at the
// origin, with smooth sides approximated by segments facets (at least 3).
func Cylinder(name string, radius, height float64, segments int, color [4]float32) *Mesh {
	segments = max(segments, 3)
	h := height / 2
	var s shape
	// Side: two rings with the seam vertex repeated for the texture wrap.
	for i := 0; i <= segments; i++ {
		a := 2 * math.Pi * float64(i%segments) / float64(segments)
		n := mgl64.Vec3{math.Cos(a), math.Sin(a), 0}
		u := float64(i) / float64(segments)
		s.vertex(mgl64.Vec3{radius * n[0], radius * n[1], -h}, n, u, 0)
		s.vertex(mgl64.Vec3{radius * n[0], radius * n[1], h}, n, u, 1)
	}
	for i := uint32(0); i < uint32(segments); i++ {
		b0, t0, b1, t1 := 2*i, 2*i+1, 2*i+2, 2*i+3
		s.p.Indices = append(s.p.Indices, b0, b1, t1, b0, t1, t0)
	}
	// Caps: fans around center vertices, counter-clockwise seen from outside.
	for _, side := range []float64{1, -1} {
		n := mgl64.Vec3{0, 0, side}
		center := s.vertex(mgl64.Vec3{0, 0, side * h}, n, 0.5, 0.5)
		for i := 0; i < segments; i++ {
			a := 2 * math.Pi * float64(i) / float64(segments)
			c, sn := math.Cos(a), math.Sin(a)
			s.vertex(mgl64.Vec3{radius * c, radius * sn, side * h}, n, 0.5+0.5*c, 0.5+0.5*sn)
		}
		for i := uint32(0); i < uint32(segments); i++ {
			cur, next := center+1+i, center+1+(i+1)%uint32(segments)
			if side > 0 {
				s.p.Indices = append(s.p.Indices, center, cur, next)
			} else {
				s.p.Indices = append(s.p.Indices, center, next, cur)
			}
		}
	}
	return s.mesh(name, color)
}

// Sphere returns a UV sphere centered at the origin with smooth normals:
// segments facets around the z axis (at least 3) and rings bands from pole
// to pole (at least 2).
func Sphere(name string, radius float64, segments, rings int, color [4]float32) *Mesh {
	segments, rings = max(segments, 3), max(rings, 2)
	var s shape
	for j := 0; j <= rings; j++ {
		polar := math.Pi * float64(j) / float64(rings)
		for i := 0; i <= segments; i++ {
			a := 2 * math.Pi * float64(i%segments) / float64(segments)
			n := mgl64.Vec3{math.Sin(polar) * math.Cos(a), math.Sin(polar) * math.Sin(a), math.Cos(polar)}
			s.vertex(n.Mul(radius), n, float64(i)/float64(segments), float64(j)/float64(rings))
		}
	}
	row := uint32(segments + 1)
	for j := uint32(0); j < uint32(rings); j++ {
		for i := uint32(0); i < uint32(segments); i++ {
			a, b := j*row+i, j*row+i+1
			c, d := (j+1)*row+i, (j+1)*row+i+1
			// Counter-clockwise seen from outside; the pole rows' degenerate
			// triangles are left out.
			if j != 0 {
				s.p.Indices = append(s.p.Indices, a, c, b)
			}
			if j != uint32(rings)-1 {
				s.p.Indices = append(s.p.Indices, b, c, d)
			}
		}
	}
	return s.mesh(name, color)
}
