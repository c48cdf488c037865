package urdf

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

func (rd *reader) material(e *elem, topLevel bool) (*models.Material, error) {
	name, _ := e.attr("name")
	c := e.first("color")
	if c == nil {
		if topLevel {
			// A named material with only a texture: white, as ROS draws it.
			return colored(name, [4]float64{1, 1, 1, 1}), nil
		}
		if m, ok := rd.materials[name]; ok {
			return m, nil
		}
		if e.first("texture") != nil {
			return colored(name, [4]float64{1, 1, 1, 1}), nil
		}
		return nil, located(e.line, "material %q: no <color> and no material of that name at the robot's top level", clip(name))
	}
	v, err := numbers(c, "rgba", 4, []float64{1, 1, 1, 1})
	if err != nil {
		return nil, err
	}
	for i, x := range v {
		if x < 0 || x > 1 {
			return nil, located(c.line, "<color> rgba: value %d, %g, is outside 0..1", i+1, x)
		}
	}
	return colored(name, [4]float64(v)), nil
}

func colored(name string, c [4]float64) *models.Material {
	m := &models.Material{Name: name, AlphaCutoff: 0.5, Roughness: 1}
	for i, x := range c {
		m.BaseColor[i] = float32(x)
	}
	if m.BaseColor[3] < 1 {
		m.AlphaMode = models.AlphaBlend
	}
	return m
}

var defaultColor = [4]float32{0.8, 0.8, 0.8, 1}

// geometry adds a link's visuals (or collisions) as children of its node.
func (rd *reader) geometry(m *models.Model, n *models.Node, l *link) error {
	tag := "visual"
	if rd.r.Options().Collision {
		tag = "collision"
	}
	for i, v := range l.e.all(tag) {
		local, err := origin(v)
		if err != nil {
			return err
		}
		var mat *models.Material
		if me := v.first("material"); me != nil && tag == "visual" {
			if mat, err = rd.material(me, false); err != nil {
				return err
			}
		}
		g := v.first("geometry")
		if g == nil || len(g.children) == 0 {
			return located(v.line, "link %q: <%s> without geometry", l.name, tag)
		}
		shape := g.children[0]
		name := fmt.Sprintf("%s %s %d", l.name, tag, i+1)
		color := defaultColor
		if mat != nil {
			color = mat.BaseColor
		}
		if err := rd.r.CountNodes(1); err != nil {
			return located(v.line, "%v", err)
		}
		var mesh *models.Mesh
		switch shape.name {
		case "box":
			s, err := numbers(shape, "size", 3, nil)
			if err != nil {
				return err
			}
			if s == nil {
				return located(shape.line, "link %q: <box> without size", l.name)
			}
			mesh = models.Box(name, s[0], s[1], s[2], color)
		case "cylinder":
			rl, err := twoNumbers(shape, "radius", "length")
			if err != nil {
				return err
			}
			mesh = models.Cylinder(name, rl[0], rl[1], cylinderSegments, color)
		case "sphere":
			r, err := numbers(shape, "radius", 1, nil)
			if err != nil {
				return err
			}
			if r == nil {
				return located(shape.line, "link %q: <sphere> without radius", l.name)
			}
			mesh = models.Sphere(name, r[0], sphereSegments, sphereRings, color)
		case "mesh":
			if err := rd.mesh(m, n, l, shape, local, mat, name); err != nil {
				return err
			}
			continue
		default:
			return located(shape.line, "link %q: unknown geometry <%s> (want box, cylinder, sphere or mesh)", l.name, clip(shape.name))
		}
		if mat != nil {
			for _, p := range mesh.Primitives {
				p.Material.Name = mat.Name
			}
		}
		var verts, tris int64
		for _, p := range mesh.Primitives {
			verts += int64(len(p.Positions))
			tris += int64(len(p.Indices) / 3)
		}
		if err := rd.r.CountGeometry(verts, tris); err != nil {
			return located(shape.line, "%v", err)
		}
		m.AddNode(n, name, local, mesh)
	}
	return nil
}

func twoNumbers(e *elem, a, b string) ([]float64, error) {
	var out []float64
	for _, attr := range []string{a, b} {
		v, err := numbers(e, attr, 1, nil)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, located(e.line, "<%s> without %s", e.name, attr)
		}
		out = append(out, v[0])
	}
	return out, nil
}

// mesh adds a mesh geometry: a node at the visual's origin, scaled, above
// a copy of the mesh file's node tree.
func (rd *reader) mesh(m *models.Model, n *models.Node, l *link, e *elem, local mgl64.Mat4, mat *models.Material, name string) error {
	uri, _ := e.attr("filename")
	if uri == "" {
		return located(e.line, "link %q: <mesh> without filename", l.name)
	}
	path, err := rd.resolve(uri)
	if err != nil {
		return located(e.line, "link %q: mesh %q: %v", l.name, clip(uri), err)
	}
	s, err := numbers(e, "scale", 3, []float64{1, 1, 1})
	if err != nil {
		return err
	}
	for i, x := range s {
		if x == 0 {
			return located(e.line, "link %q: mesh %q: scale value %d is zero", l.name, clip(uri), i+1)
		}
	}
	mm, ok := rd.meshes[path]
	if !ok {
		if ext := strings.ToLower(filepath.Ext(path)); ext == ".urdf" || !slices.Contains(models.Formats(), ext) {
			var have []string
			for _, f := range models.Formats() {
				if f != ".urdf" {
					have = append(have, f)
				}
			}
			if ext == "" {
				ext = "(no extension)"
			}
			return located(e.line, "link %q: mesh %q: unsupported mesh format %q (have %s)", l.name, clip(uri), ext, strings.Join(have, ", "))
		}
		if mm, err = rd.r.Load(path); err != nil {
			return located(e.line, "link %q: mesh %q: %v", l.name, clip(uri), strings.TrimPrefix(err.Error(), "models: "))
		}
		rd.meshes[path] = mm
	}
	top := m.AddNode(n, name, local.Mul4(mgl64.Scale3D(s[0], s[1], s[2])), nil)
	if err := rd.r.CountNodes(countNodes(mm)); err != nil {
		return located(e.line, "%v", err)
	}
	// The mesh model's nodes are copied (they get their own parents),
	// their meshes shared.
	type item struct {
		src    *models.Node
		parent *models.Node
	}
	stack := []item{}
	for i := len(mm.Roots) - 1; i >= 0; i-- {
		stack = append(stack, item{mm.Roots[i], top})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c := m.AddNode(it.parent, it.src.Name, it.src.Local, rd.recolor(it.src.Mesh, mat))
		for i := len(it.src.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{it.src.Children[i], c})
		}
	}
	return nil
}

func countNodes(m *models.Model) int {
	_, _, n := m.Counts()
	return n
}

// recolor returns mesh with mat in place of the materials its file gave
// no colour (named "default"); the same mesh and material give the same
// copy, sharing the geometry.
func (rd *reader) recolor(mesh *models.Mesh, mat *models.Material) *models.Mesh {
	if mesh == nil || mat == nil {
		return mesh
	}
	needs := false
	for _, p := range mesh.Primitives {
		needs = needs || p.Material != nil && p.Material.Name == "default"
	}
	if !needs {
		return mesh
	}
	k := recolorKey{mesh, mat}
	if c, ok := rd.recolored[k]; ok {
		return c
	}
	c := &models.Mesh{Name: mesh.Name}
	for _, p := range mesh.Primitives {
		if p.Material != nil && p.Material.Name == "default" {
			cp := *p
			cp.Material = mat
			p = &cp
		}
		c.Primitives = append(c.Primitives, p)
	}
	rd.recolored[k] = c
	return c
}
