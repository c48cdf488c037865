package models

import (
	"errors"
	"fmt"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"
)

func (l *loader) mesh(i int, gm *gltf.Mesh) (*Mesh, error) {
	if gm == nil {
		return nil, fmt.Errorf("mesh %d is null", i)
	}
	m := &Mesh{Name: gm.Name}
	for k, gp := range gm.Primitives {
		p, err := l.primitive(gp)
		if err != nil {
			return nil, fmt.Errorf("mesh %d %q primitive %d: %w", i, gm.Name, k, err)
		}
		m.Primitives = append(m.Primitives, p)
	}
	return m, nil
}

// countGeometry counts the vertices and triangles of every primitive from
// accessor counts alone, against the limits, before any accessor is read.
func (l *loader) countGeometry() error {
	verts := budget{field: "Vertices", max: l.limits.Vertices}
	tris := budget{field: "Triangles", max: l.limits.Triangles}
	for i, gm := range l.doc.Meshes {
		if gm == nil {
			return fmt.Errorf("mesh %d is null", i)
		}
		for k, gp := range gm.Primitives {
			v, t, err := l.primitiveCounts(gp)
			if err == nil {
				if err = verts.add(v); err == nil {
					err = tris.add(t)
				}
				if err != nil {
					err = fmt.Errorf("the model's primitives come to %w", err)
				}
			}
			if err != nil {
				return fmt.Errorf("mesh %d %q primitive %d: %w", i, gm.Name, k, err)
			}
		}
	}
	return nil
}

// primitiveCounts returns what primitive will cost once loaded: the larger
// of its POSITION count and the vertices it holds (flat shading gives every
// triangle three), and its triangles.
func (l *loader) primitiveCounts(gp *gltf.Primitive) (vertices, triangles int64, err error) {
	if gp == nil {
		return 0, 0, errors.New("primitive is null")
	}
	switch gp.Mode {
	case gltf.PrimitiveTriangles, gltf.PrimitiveTriangleStrip, gltf.PrimitiveTriangleFan:
	default:
		return 0, 0, fmt.Errorf("mode %s not supported (only triangles, strips and fans)", gp.Mode)
	}
	pi, ok := gp.Attributes[gltf.POSITION]
	if !ok {
		return 0, 0, errors.New("POSITION accessor missing")
	}
	pa, err := l.accessor(pi)
	if err != nil {
		return 0, 0, fmt.Errorf("POSITION: %w", err)
	}
	nPos, nIdx := int64(pa.Count), int64(pa.Count)
	if gp.Indices != nil {
		ia, err := l.accessor(*gp.Indices)
		if err != nil {
			return 0, 0, fmt.Errorf("indices: %w", err)
		}
		nIdx = int64(ia.Count)
	}
	switch gp.Mode {
	case gltf.PrimitiveTriangleStrip, gltf.PrimitiveTriangleFan:
		triangles = max(0, nIdx-2)
	default:
		if nIdx%3 != 0 {
			return 0, 0, fmt.Errorf("%d indices do not make whole triangles", nIdx)
		}
		triangles = nIdx / 3
	}
	held := nPos
	if _, ok := gp.Attributes[gltf.NORMAL]; !ok {
		held = 3 * triangles
	}
	return max(nPos, held), triangles, nil
}

// geometryKey identifies what a primitive's geometry is built from:
// accessors (-1 for none), mode, and how the texture coordinates are
// transformed (the zero uvTransform where uv is -1), so that primitives
// whose materials transform them differently do not share them.
type geometryKey struct {
	mode                        gltf.PrimitiveMode
	position, normal, uv, index int
	uvt                         uvTransform
}

func (l *loader) primitive(gp *gltf.Primitive) (*Primitive, error) {
	if gp == nil {
		return nil, errors.New("primitive is null")
	}
	switch gp.Mode {
	case gltf.PrimitiveTriangles, gltf.PrimitiveTriangleStrip, gltf.PrimitiveTriangleFan:
	default:
		return nil, fmt.Errorf("mode %s not supported (only triangles, strips and fans)", gp.Mode)
	}
	p := &Primitive{}
	var uvt uvTransform
	matIdx := -1
	if gp.Material == nil {
		if l.defMat == nil {
			l.defMat = DefaultMaterial()
		}
		p.Material = l.defMat
	} else {
		if *gp.Material < 0 || *gp.Material >= len(l.materials) {
			return nil, fmt.Errorf("material %d out of range (%d materials)", *gp.Material, len(l.materials))
		}
		matIdx = *gp.Material
		p.Material, uvt = l.materials[matIdx], l.texCoord[matIdx]
	}

	pi, ok := gp.Attributes[gltf.POSITION]
	if !ok {
		return nil, errors.New("POSITION accessor missing")
	}
	uvName := fmt.Sprintf("TEXCOORD_%d", uvt.set)
	key := geometryKey{mode: gp.Mode, position: pi, normal: -1, uv: -1, index: -1}
	if ni, ok := gp.Attributes[gltf.NORMAL]; ok {
		key.normal = ni
	}
	if ti, ok := gp.Attributes[uvName]; ok {
		key.uv, key.uvt = ti, uvt
	}
	if gp.Indices != nil {
		key.index = *gp.Indices
	}
	if g, ok := l.geometry[key]; ok {
		// Shared slices: loaded geometry is read-only (UpdateKey's hash
		// stands for it).
		p.Positions, p.Normals, p.TexCoords, p.Indices, p.Key = g.Positions, g.Normals, g.TexCoords, g.Indices, g.Key
		return p, nil
	}

	pos, err := l.readVec3(pi, -1)
	if err != nil {
		return nil, fmt.Errorf("POSITION: %w", err)
	}
	n := len(pos)
	p.Positions = make([]mgl32.Vec3, n)
	for k, v := range pos {
		p.Positions[k] = vecToZUp(v)
	}
	if key.normal >= 0 {
		nrm, err := l.readVec3(key.normal, n)
		if err != nil {
			return nil, fmt.Errorf("NORMAL: %w", err)
		}
		p.Normals = make([]mgl32.Vec3, n)
		for k, v := range nrm {
			p.Normals[k] = vecToZUp(v)
		}
	}
	// Read the set the base color texture uses; it becomes TexCoords,
	// with the texture's KHR_texture_transform baked in.
	if key.uv >= 0 {
		uv, err := l.readVec2(key.uv, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", uvName, err)
		}
		p.TexCoords = make([]mgl32.Vec2, n)
		for k, v := range uv {
			p.TexCoords[k] = v
		}
		if uvt.on {
			if err := transformUVs(p.TexCoords, &uvt); err != nil {
				gm := l.doc.Materials[matIdx]
				ti := gm.PBRMetallicRoughness.BaseColorTexture.Index
				return nil, fmt.Errorf("material %d %q: texture %d: %s of %s: %w", matIdx, gm.Name, ti, textureTransformExtension, uvName, err)
			}
		}
	}

	var idx []uint32
	if gp.Indices != nil {
		a, err := l.accessor(*gp.Indices)
		if err == nil {
			idx, err = modeler.ReadIndices(l.doc, a, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("indices: %w", err)
		}
		for k, v := range idx {
			if int64(v) >= int64(n) {
				return nil, fmt.Errorf("index %d is %d, not below vertex count %d", k, v, n)
			}
		}
	} else {
		idx = make([]uint32, n)
		for k := range idx {
			idx[k] = uint32(k)
		}
	}
	switch gp.Mode {
	case gltf.PrimitiveTriangleStrip:
		idx = stripToTriangles(idx)
	case gltf.PrimitiveTriangleFan:
		idx = fanToTriangles(idx)
	default:
		if len(idx)%3 != 0 {
			return nil, fmt.Errorf("%d indices do not make whole triangles", len(idx))
		}
	}
	p.Indices = idx
	if p.Normals == nil {
		flatNormals(p)
	}
	p.UpdateKey()
	l.geometry[key] = p
	return p, nil
}

// transformUVs applies t to uv in float64, refusing a result that float32
// cannot hold (a finite transform can still take coordinates there).
func transformUVs(uv []mgl32.Vec2, t *uvTransform) error {
	for k, c := range uv {
		u, v := t.apply(float64(c[0]), float64(c[1]))
		out := mgl32.Vec2{float32(u), float32(v)}
		if finite(c[0], c[1]) && !finite(out[0], out[1]) {
			return fmt.Errorf("vertex %d (%g, %g) goes to (%g, %g), not finite", k, c[0], c[1], out[0], out[1])
		}
		uv[k] = out
	}
	return nil
}
