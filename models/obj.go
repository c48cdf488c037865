package models

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-gl/mathgl/mgl32"
)

func init() { RegisterFormat(".obj", loadOBJ) }

// loadOBJ reads a Wavefront OBJ file: v, vn and f lines (polygons as fans,
// indices v, v/vt, v//vn, v/vt/vn, negative ones relative), usemtl and
// mtllib with the MTL colours Kd and d (or Tr). Coordinates are taken as
// written (meters, z up, as URDF meshes are read); texture maps, lines,
// points and free-form geometry are ignored. One primitive per material,
// flat: three vertices per triangle, with the file's normals where the
// face gives them, else the face normal. Faces without a material get the
// uncoloured material (see loadSTL).
func loadOBJ(r *Reader, path string) (*Model, error) {
	data, err := r.fa.readModel(path)
	if err != nil {
		return nil, err
	}
	m, err := decodeOBJ(data, path, r)
	if err != nil {
		return nil, fmt.Errorf("OBJ: %w", err)
	}
	return m, nil
}

// objLines calls fn with every non-empty, non-comment line's keyword and
// fields (a trailing backslash joins lines).
func objLines(data []byte, fn func(line int, key string, fields []string) error) error {
	line := 0
	for len(data) > 0 {
		line++
		i := bytes.IndexByte(data, '\n')
		var l []byte
		if i < 0 {
			l, data = data, nil
		} else {
			l, data = data[:i], data[i+1:]
		}
		first := line
		for bytes.HasSuffix(bytes.TrimRight(l, "\r"), []byte("\\")) && len(data) > 0 {
			l = append(bytes.TrimSuffix(bytes.TrimRight(l, "\r"), []byte("\\")), ' ')
			line++
			j := bytes.IndexByte(data, '\n')
			if j < 0 {
				l, data = append(l, data...), nil
			} else {
				l, data = append(l, data[:j]...), data[j+1:]
			}
		}
		if k := bytes.IndexByte(l, '#'); k >= 0 {
			l = l[:k]
		}
		fields := strings.Fields(string(l))
		if len(fields) == 0 {
			continue
		}
		if err := fn(first, fields[0], fields[1:]); err != nil {
			return fmt.Errorf("line %d: %w", first, err)
		}
	}
	return nil
}

func objFloats(fields []string, n int, what string) ([3]float32, error) {
	var v [3]float32
	if len(fields) < n {
		return v, fmt.Errorf("%s: want %d numbers, got %d", what, n, len(fields))
	}
	for i := 0; i < n && i < 3; i++ {
		x, err := strconv.ParseFloat(fields[i], 32)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return v, fmt.Errorf("%s: %q is not a finite number", what, clipWord(fields[i]))
		}
		v[i] = float32(x)
	}
	return v, nil
}

type objCorner struct{ v, n int } // 0-based; n < 0: none

func decodeOBJ(data []byte, path string, r *Reader) (*Model, error) {
	// Pass 1: counts, checked before anything is allocated.
	var nv, nn, tris int64
	var libs []string
	err := objLines(data, func(line int, key string, f []string) error {
		switch key {
		case "v":
			nv++
		case "vn":
			nn++
		case "f":
			if len(f) < 3 {
				return fmt.Errorf("a face with %d vertices (want at least 3)", len(f))
			}
			tris += int64(len(f) - 2)
		case "mtllib":
			libs = append(libs, f...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := r.CountGeometry(max(3*tris, nv), tris); err != nil {
		return nil, err
	}
	mats := map[string]*Material{}
	var matOrder []*Material
	for _, lib := range libs {
		if err := readMTL(r, lib, mats, &matOrder); err != nil {
			return nil, err
		}
	}
	pos := make([]mgl32.Vec3, 0, nv)
	nrm := make([]mgl32.Vec3, 0, nn)
	type group struct {
		mat *Material
		t   triangles
	}
	var groups []*group
	byMat := map[*Material]*group{}
	var current *Material
	uncolored := (*Material)(nil)
	// Faces are gathered per material first, then built.
	type face struct {
		mat     *Material
		corners []objCorner
	}
	var faces []face
	index := func(tok string, count int, what string) (int, error) {
		i, err := strconv.Atoi(tok)
		if err != nil {
			return 0, fmt.Errorf("%s index %q is not an integer", what, clipWord(tok))
		}
		switch {
		case i > 0 && i <= count:
			return i - 1, nil
		case i < 0 && -i <= count:
			return count + i, nil
		}
		return 0, fmt.Errorf("%s index %d out of range (%d defined so far)", what, i, count)
	}
	err = objLines(data, func(line int, key string, f []string) error {
		switch key {
		case "v":
			v, err := objFloats(f, 3, "vertex")
			if err != nil {
				return err
			}
			pos = append(pos, mgl32.Vec3(v))
		case "vn":
			v, err := objFloats(f, 3, "normal")
			if err != nil {
				return err
			}
			nrm = append(nrm, mgl32.Vec3(v))
		case "usemtl":
			if len(f) == 0 {
				return fmt.Errorf("usemtl without a name")
			}
			m, ok := mats[f[0]]
			if !ok {
				return fmt.Errorf("usemtl %q: no such material in the mtllib files", clipWord(f[0]))
			}
			current = m
		case "f":
			fc := face{mat: current, corners: make([]objCorner, len(f))}
			for k, tok := range f {
				parts := strings.Split(tok, "/")
				if len(parts) > 3 {
					return fmt.Errorf("face vertex %q: want v, v/vt, v//vn or v/vt/vn", clipWord(tok))
				}
				vi, err := index(parts[0], len(pos), "vertex")
				if err != nil {
					return err
				}
				c := objCorner{v: vi, n: -1}
				if len(parts) == 3 && parts[2] != "" {
					if c.n, err = index(parts[2], len(nrm), "normal"); err != nil {
						return err
					}
				}
				fc.corners[k] = c
			}
			faces = append(faces, fc)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	counts := map[*Material]int64{}
	for _, fc := range faces {
		counts[fc.mat] += int64(len(fc.corners) - 2)
	}
	for _, fc := range faces {
		mat := fc.mat
		if mat == nil {
			if uncolored == nil {
				uncolored = uncoloredMaterial()
			}
			mat = uncolored
		}
		g := byMat[mat]
		if g == nil {
			g = &group{mat: mat, t: newTriangles(counts[fc.mat], mat)}
			byMat[mat] = g
			groups = append(groups, g)
		}
		c := fc.corners
		for k := 1; k+1 < len(c); k++ {
			a, b, d := c[0], c[k], c[k+1]
			g.t.add(pos[a.v], pos[b.v], pos[d.v], mgl32.Vec3{})
			if a.n >= 0 && b.n >= 0 && d.n >= 0 {
				ns := g.t.p.Normals[len(g.t.p.Normals)-3:]
				for j, cn := range []objCorner{a, b, d} {
					if n := nrm[cn.n]; n.Len() > 0 && !math.IsInf(float64(n.Len()), 0) {
						ns[j] = n.Normalize()
					}
				}
			}
		}
	}
	if err := r.CountNodes(1); err != nil {
		return nil, err
	}
	mesh := &Mesh{Name: filepath.Base(path)}
	for _, g := range groups {
		g.t.p.UpdateKey()
		mesh.Primitives = append(mesh.Primitives, g.t.p)
	}
	m := singleMeshModel(path, mesh)
	if len(mesh.Primitives) == 0 {
		m.Roots[0].Mesh, m.Meshes = nil, nil
	}
	return m, nil
}

// readMTL reads an MTL file named relative to the OBJ: newmtl, Kd, d, Tr.
func readMTL(r *Reader, lib string, mats map[string]*Material, order *[]*Material) error {
	data, err := r.readURI(filepath.ToSlash(lib))
	if err != nil {
		return fmt.Errorf("mtllib %w", err)
	}
	var cur *Material
	err = objLines(data, func(line int, key string, f []string) error {
		if key == "newmtl" {
			if len(f) == 0 {
				return fmt.Errorf("newmtl without a name")
			}
			cur = &Material{Name: f[0], BaseColor: [4]float32{0.8, 0.8, 0.8, 1}, AlphaCutoff: 0.5, Roughness: 1}
			mats[f[0]] = cur
			*order = append(*order, cur)
			return nil
		}
		if cur == nil {
			return nil
		}
		switch key {
		case "Kd":
			v, err := objFloats(f, 3, "Kd")
			if err != nil {
				return err
			}
			copy(cur.BaseColor[:3], v[:])
		case "d", "Tr":
			v, err := objFloats(f, 1, key)
			if err != nil {
				return err
			}
			a := v[0]
			if key == "Tr" {
				a = 1 - a
			}
			cur.BaseColor[3] = min(max(a, 0), 1)
			cur.AlphaMode = AlphaOpaque
			if cur.BaseColor[3] < 1 {
				cur.AlphaMode = AlphaBlend
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("mtllib %q: %w", lib, err)
	}
	return nil
}
