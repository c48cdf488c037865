package scene

import (
	"math"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/light"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// lookAlongX turns a glTF camera's or light's direction (its node's +y in
// z-up, -Z in glTF) onto a simvis frame's +x, keeping +z up.
var lookAlongX = mgl64.HomogRotate3DZ(-math.Pi / 2)

// Export returns the composed scene as one model, as the scene shows it
// with the current element values applied: every node keeps its name and
// local transform, meshes are shared as in the scene, switched-off subtrees
// are left out, color overrides are applied to the materials, lights become
// KHR_lights_punctual lights and sensors that see as cameras
// (CameraExporter: the built-in camera, depth, segmentation) glTF
// perspective cameras, so other tools can check what
// simvis built. Ambient lights and the default lights have no glTF
// counterpart and are not written; other sensors stay named nodes.
func (s *Scene) Export() (*models.Model, error) {
	if err := s.Update(); err != nil {
		return nil, err
	}
	sensorAt := map[*Node]*SensorEntry{}
	for _, se := range s.sensors {
		sensorAt[se.Frame] = se
	}
	styled := map[styledKey]*models.Material{}
	meshes := map[styledMesh]*models.Mesh{}
	out := models.NewModel("simvis scene")
	var walk func(n *Node, parent *models.Node, color *[4]float32)
	walk = func(n *Node, parent *models.Node, color *[4]float32) {
		shown, color := n.style(color)
		if !shown {
			return // switched off: not in the picture
		}
		name := n.Name
		if n.Kind == KindGroup {
			name = "scene"
		}
		mesh := n.mesh
		if mesh != nil && color != nil {
			mesh = recolored(mesh, color, styled, meshes)
		}
		mn := out.AddNode(parent, name, n.local, mesh)
		if se := sensorAt[n]; se != nil {
			if ce, ok := se.Sensor.(CameraExporter); ok {
				if cam := ce.ExportCamera(); cam != nil {
					out.AddNode(mn, name+" camera", lookAlongX, nil).Camera = cam
				}
			}
		}
		for _, g := range n.g3n.Children() {
			if l := exportLight(g); l != nil {
				out.AddNode(mn, name+" light", lookAlongX, nil).Light = l
			}
		}
		for _, c := range n.children {
			walk(c, mn, color)
		}
	}
	walk(s.top, nil, nil)
	return out, nil
}

// style applies n's own switch and color override to what its parent
// passes down: the rule Export, the renderers and Appearance share. shown
// is false where n is switched off; color is the innermost override.
func (n *Node) style(inherited *[4]float32) (shown bool, color *[4]float32) {
	if n.hidden {
		return false, inherited
	}
	if n.color != nil {
		return true, n.color
	}
	return true, inherited
}

// Appearance reports how the scene shows n's meshes, as Export writes
// them: shown is false where n or one of its ancestors is switched off,
// color is the innermost color override on the way from the root (nil:
// the materials' own colors). It walks up to the root; transports that
// describe one part at a time (the Foxglove server) use it.
func (n *Node) Appearance() (shown bool, color *[4]float32) {
	var path []*Node
	for p := n; p != nil; p = p.parent {
		path = append(path, p)
	}
	shown = true
	for i := len(path) - 1; i >= 0 && shown; i-- {
		shown, color = path[i].style(color)
	}
	if !shown {
		return false, nil
	}
	return true, color
}

// Recolor returns a copy of m as Export writes it under the color
// override: every material's base color and opacity replaced (textures
// still multiply it), blended where the opacity is below 1. Geometry and
// textures are shared with m, which is not changed.
func Recolor(m *models.Model, color [4]float32) *models.Model {
	mats := map[styledKey]*models.Material{}
	meshes := map[styledMesh]*models.Mesh{}
	out := &models.Model{Path: m.Path, Name: m.Name, Commands: m.Commands}
	for _, mesh := range m.Meshes {
		out.Meshes = append(out.Meshes, recolored(mesh, &color, mats, meshes))
	}
	for _, mat := range m.Materials {
		if c, ok := mats[styledKey{mat, color}]; ok {
			out.Materials = append(out.Materials, c)
		}
	}
	var copyNode func(n *models.Node) *models.Node
	copyNode = func(n *models.Node) *models.Node {
		c := *n
		if n.Mesh != nil {
			c.Mesh = recolored(n.Mesh, &color, mats, meshes)
		}
		c.Children = nil
		for _, ch := range n.Children {
			c.Children = append(c.Children, copyNode(ch))
		}
		return &c
	}
	for _, r := range m.Roots {
		out.Roots = append(out.Roots, copyNode(r))
	}
	return out
}

// styledMesh identifies a mesh under a color override.
type styledMesh struct {
	mesh  *models.Mesh
	color [4]float32
}

// recolored returns mesh with its materials under the color override, as
// the renderers draw it: base color and opacity replaced (textures still
// multiply it), blended where the opacity is below 1. Meshes and materials
// made here are shared like the scene's.
func recolored(mesh *models.Mesh, color *[4]float32, mats map[styledKey]*models.Material, meshes map[styledMesh]*models.Mesh) *models.Mesh {
	if m, ok := meshes[styledMesh{mesh, *color}]; ok {
		return m
	}
	m := &models.Mesh{Name: mesh.Name}
	for _, p := range mesh.Primitives {
		q := *p
		if p.Material != nil {
			k := styledKey{p.Material, *color}
			mat, ok := mats[k]
			if !ok {
				c := *p.Material
				c.BaseColor = *color
				if color[3] < 1 {
					c.AlphaMode = models.AlphaBlend
				}
				mat = &c
				mats[k] = mat
			}
			q.Material = mat
		}
		m.Primitives = append(m.Primitives, &q)
	}
	meshes[styledMesh{mesh, *color}] = m
	return m
}

// exportLight returns the punctual light a light element placed as g, or
// nil where g is no such light (ambient lights have no glTF counterpart).
func exportLight(g core.INode) *models.Light {
	rgb := func(r, g, b float32) [3]float64 { return [3]float64{float64(r), float64(g), float64(b)} }
	switch l := g.(type) {
	case *light.Directional:
		c := l.Color()
		return &models.Light{Kind: models.LightDirectional, Color: rgb(c.R, c.G, c.B), Intensity: float64(l.Intensity())}
	case *light.Point:
		c := l.Color()
		return &models.Light{Kind: models.LightPoint, Color: rgb(c.R, c.G, c.B), Intensity: float64(l.Intensity())}
	case *light.Spot:
		c := l.Color()
		outer := min(float64(l.CutoffAngle())*math.Pi/180, math.Pi/2)
		if !(outer > 0) {
			return nil
		}
		return &models.Light{Kind: models.LightSpot, Color: rgb(c.R, c.G, c.B), Intensity: float64(l.Intensity()), OuterCone: outer}
	}
	return nil
}
