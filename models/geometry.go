package models

import (
	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
)

// zUpFromYUp is C, +90° about x: glTF (x, y, z) -> simvis (x, -z, y).
// Its entries are 0 and ±1, so conjugating with it is exact.
var (
	zUpFromYUp = mgl64.Mat4{1, 0, 0, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1}
	yUpFromZUp = zUpFromYUp.Transpose()
)

// toZUp converts a glTF local matrix: C·M·C⁻¹.
func toZUp(m mgl64.Mat4) mgl64.Mat4 { return zUpFromYUp.Mul4(m).Mul4(yUpFromZUp) }

// toYUp converts a simvis local matrix back to glTF: C⁻¹·M·C.
func toYUp(m mgl64.Mat4) mgl64.Mat4 { return yUpFromZUp.Mul4(m).Mul4(zUpFromYUp) }

func vecToZUp(v [3]float32) mgl32.Vec3 { return mgl32.Vec3{v[0], -v[2], v[1]} }
func vecToYUp(v mgl32.Vec3) [3]float32 { return [3]float32{v[0], v[2], -v[1]} }

// flatNormals gives every triangle its own three vertices carrying the face
// normal, as glTF requires for primitives without normals.
func flatNormals(p *Primitive) {
	n := len(p.Indices)
	pos := make([]mgl32.Vec3, n)
	nrm := make([]mgl32.Vec3, n)
	var uv []mgl32.Vec2
	if p.TexCoords != nil {
		uv = make([]mgl32.Vec2, n)
	}
	idx := make([]uint32, n)
	for t := 0; t+2 < n; t += 3 {
		a, b, c := p.Positions[p.Indices[t]], p.Positions[p.Indices[t+1]], p.Positions[p.Indices[t+2]]
		fn := b.Sub(a).Cross(c.Sub(a))
		if l := fn.Len(); l > 0 {
			fn = fn.Mul(1 / l)
		} else {
			fn = mgl32.Vec3{0, 0, 1} // degenerate triangle: any unit vector will do
		}
		for k := t; k < t+3; k++ {
			pos[k], nrm[k], idx[k] = p.Positions[p.Indices[k]], fn, uint32(k)
			if uv != nil {
				uv[k] = p.TexCoords[p.Indices[k]]
			}
		}
	}
	p.Positions, p.Normals, p.TexCoords, p.Indices = pos, nrm, uv, idx
}

// stripToTriangles unrolls a triangle strip, keeping every triangle's winding.
func stripToTriangles(s []uint32) []uint32 {
	var out []uint32
	for i := 0; i+2 < len(s); i++ {
		if i%2 == 0 {
			out = append(out, s[i], s[i+1], s[i+2])
		} else {
			out = append(out, s[i], s[i+2], s[i+1])
		}
	}
	return out
}

// fanToTriangles unrolls a triangle fan around its first vertex.
func fanToTriangles(f []uint32) []uint32 {
	var out []uint32
	for i := 1; i+1 < len(f); i++ {
		out = append(out, f[0], f[i], f[i+1])
	}
	return out
}
