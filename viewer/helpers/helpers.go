// Package helpers draws what helps people read a scene in simvis's
// viewers, the desktop window and the page in a browser alike: the ground
// grid, and the axes of the world, the parts and the sensors with their
// names. It is g3n's scene graph only, nothing of the GL context, so that
// the page's WebAssembly program draws the same.
package helpers

import (
	"math"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/gui"
	"github.com/g3n/engine/math32"
	"github.com/g3n/engine/util/helper"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// Helpers are the ground grid and the named frame axes.
type Helpers struct {
	Node    *core.Node // the grid and the axes, in the world
	Labels  *core.Node // the frames' names, gui labels at their projections (screen space)
	labelOf []*gui.Label
	axes    []*helper.Axes
	frames  []*scene.Node
}

// New builds the helpers of the scene's frames as they are now.
func New(s *scene.Scene) *Helpers {
	h := &Helpers{Node: core.NewNode(), Labels: core.NewNode()}
	grid := helper.NewGrid(20, 1, &math32.Color{R: 0.25, G: 0.3, B: 0.45})
	grid.SetRotationX(math.Pi / 2) // g3n's grid lies in x-z; the ground here is x-y
	grid.SetPosition(0, 0, 0.003)  // just above a floor at z = 0, which would hide it
	h.Node.Add(grid)
	add := func(name string, n *scene.Node, size float32) {
		a := helper.NewAxes(size)
		h.Node.Add(a)
		h.axes = append(h.axes, a)
		h.frames = append(h.frames, n)
		l := gui.NewLabel(name)
		l.SetFontSize(12)
		l.SetColor(&math32.Color{R: 0.1, G: 0.1, B: 0.3})
		h.Labels.Add(l)
		h.labelOf = append(h.labelOf, l)
	}
	add(scene.WorldFrame, nil, 1)
	for _, p := range s.Parts() {
		add(p.Name, p.Node, 0.5)
	}
	for _, se := range s.Sensors() {
		add(se.Name, se.Frame, 0.25)
	}
	return h
}

// View is the pinhole the labels are placed for: the eye's world pose
// (x forward, z up), its horizontal field of view in degrees, the near
// plane and the picture's size in pixels.
type View struct {
	Pose          mgl64.Mat4
	HFOV, Near    float64
	Width, Height int
}

// Update places the axes at their frames' current poses and the names at
// their projections in v.
func (h *Helpers) Update(view View) {
	for i, a := range h.axes {
		m := mgl64.Ident4()
		if h.frames[i] != nil {
			m = h.frames[i].World()
		}
		SetMatrix(&a.Node, m)
		x, y, ok := Project(view, m.Col(3).Vec3())
		l := h.labelOf[i]
		l.SetVisible(ok && x > -50 && y > -50 && x < float64(view.Width) && y < float64(view.Height))
		l.SetPosition(float32(x)+4, float32(y)+2)
	}
}

// Project returns the window pixel of a world point in the view, and
// whether it is in front of the eye.
func Project(view View, p mgl64.Vec3) (x, y float64, ok bool) {
	inv, okInv := scene.InvertAffine(view.Pose)
	if !okInv {
		return 0, 0, false
	}
	q := inv.Mul4x1(p.Vec4(1))
	if q[0] <= view.Near {
		return 0, 0, false
	}
	f := float64(view.Width) / (2 * math.Tan(mgl64.DegToRad(view.HFOV)/2))
	return float64(view.Width)/2 - f*q[1]/q[0], float64(view.Height)/2 - f*q[2]/q[0], true
}

// SetMatrix sets a g3n node's local matrix from a float64 one.
func SetMatrix(n *core.Node, m mgl64.Mat4) {
	var g math32.Matrix4
	for k := range m {
		g[k] = float32(m[k])
	}
	n.SetMatrix(&g)
}
