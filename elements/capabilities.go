package elements

import (
	"github.com/g3n/engine/math32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// What the built-in elements declare about themselves for viewers and
// transports (scene's capability interfaces), so that those never list
// element type names.
var (
	_ scene.Kinematic = (*pose)(nil)
	_ scene.Kinematic = (*rotation)(nil)
	_ scene.Kinematic = (*translation)(nil)
	_ scene.Kinematic = (*scale)(nil)
	_ scene.Kinematic = (*scan)(nil)
	_ scene.Mobile    = (*pose)(nil)
	_ scene.Overlayer = (*pointCloud)(nil)
	_ scene.Overlayer = (*lines)(nil)
	_ scene.Overlayer = (*graph)(nil)
	_ scene.Overlayer = (*label)(nil)
)

// Kinematic implements scene.Kinematic: a pose only moves what follows it.
func (p *pose) Kinematic() bool { return true }

// Mobile implements scene.Mobile: a pose moves a robot through the world.
func (p *pose) Mobile() bool { return true }

// Kinematic implements scene.Kinematic: a joint only moves what follows it.
func (r *rotation) Kinematic() bool { return true }

// Kinematic implements scene.Kinematic.
func (t *translation) Kinematic() bool { return true }

// Kinematic implements scene.Kinematic.
func (s *scale) Kinematic() bool { return true }

// Kinematic: a URDF joint's position only moves the meshes below it, so
// the viewer's still-mesh cache keeps the rest while an arm moves.
func (j *joint) Kinematic() bool { return true }

// Kinematic implements scene.Kinematic: a scan's one value (point_size)
// changes only its own overlay, never a still mesh.
func (s *scan) Kinematic() bool { return true }

// The overlays' primitives read the parameter table leniently (a count
// beyond the values given draws what there is), as a transport gets the
// table whether or not the element accepted it.

// count is an overlay's count parameter as far as v holds values.
func count(v []float64) int {
	if len(v) > 0 && v[0] >= 0 {
		return int(min(v[0], float64(len(v))))
	}
	return 0
}

func rgb3(c math32.Color) [3]float32 { return [3]float32{c.R, c.G, c.B} }

// Overlay implements scene.Overlayer: a cube per point.
func (p *pointCloud) Overlay(v []float64) scene.Overlay {
	var o scene.Overlay
	for i := 0; i < count(v) && 3+3*i < len(v); i++ {
		o.Cubes = append(o.Cubes, scene.OverlayCube{Center: mgl64.Vec3{v[1+3*i], v[2+3*i], v[3+3*i]}, Size: p.size, Color: rgb3(p.color)})
	}
	return o
}

// Overlay implements scene.Overlayer: one line list.
func (l *lines) Overlay(v []float64) scene.Overlay {
	ls := scene.OverlayLines{Width: l.width, Color: rgb3(l.color)}
	for i := 0; i < 2*count(v) && 3+3*i < len(v); i++ {
		ls.Points = append(ls.Points, mgl64.Vec3{v[1+3*i], v[2+3*i], v[3+3*i]})
	}
	return scene.Overlay{Lines: []scene.OverlayLines{ls}}
}

// Overlay implements scene.Overlayer: a cube per node and a line list of
// the edges.
func (g *graph) Overlay(v []float64) scene.Overlay {
	var o scene.Overlay
	for i := 0; 3*i+2 < len(v); i++ {
		o.Cubes = append(o.Cubes, scene.OverlayCube{Center: mgl64.Vec3{v[3*i], v[3*i+1], v[3*i+2]}, Size: g.size, Color: rgb3(g.nodeColor)})
	}
	ls := scene.OverlayLines{Width: g.width, Color: rgb3(g.edgeColor)}
	for _, e := range g.edges {
		if 3*max(e[0], e[1])+2 >= len(v) {
			continue // not the element's run of the table
		}
		for _, n := range e {
			ls.Points = append(ls.Points, mgl64.Vec3{v[3*n], v[3*n+1], v[3*n+2]})
		}
	}
	o.Lines = []scene.OverlayLines{ls}
	return o
}

// Overlay implements scene.Overlayer: the text at x y z, size meters tall.
func (l *label) Overlay(v []float64) scene.Overlay {
	if len(v) < 4 {
		return scene.Overlay{}
	}
	return scene.Overlay{Texts: []scene.OverlayText{{At: mgl64.Vec3{v[0], v[1], v[2]}, Height: v[3], Color: rgb3(l.color), Text: l.text}}}
}
