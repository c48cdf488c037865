package scene

import (
	"fmt"
	"math"

	"github.com/g3n/engine/graphic"
)

// Elements change how a subtree is drawn through the scene, not the g3n
// nodes, so that the scene can combine overrides (a switch inside a color
// inside a sensed="false" part) and apply them in one place before a render.

// SetColor overrides the base color of every model mesh in n's subtree:
// r, g, b in 0..1 replace the materials' base color factor (textures still
// multiply it, as in glTF), a is the opacity (1 opaque, 0 invisible).
// The innermost override wins. Materials stay shared: parts with the same
// material and the same override use one material.
func (s *Scene) SetColor(n *Node, rgba [4]float32) error {
	for i, v := range rgba {
		if math.IsNaN(float64(v)) || v < 0 || v > 1 {
			return fmt.Errorf("color component %q = %v is outside 0..1", "rgba"[i:i+1], v)
		}
	}
	n.color = &rgba
	s.stylesDirty = true
	s.touch()
	return nil
}

// ClearColor removes n's color override.
func (s *Scene) ClearColor(n *Node) {
	n.color = nil
	s.stylesDirty = true
	s.touch()
}

// SetVisible switches n's subtree on or off (the switch element).
func (s *Scene) SetVisible(n *Node, on bool) {
	n.hidden = !on
	s.flagged[n] = true
	s.touch()
}

// SetSensed marks n's subtree as seen by sensors (the default) or as drawn
// only for viewers (sensed="false": laser beams, scan points, labels that
// must not disturb the simulated sensors).
func (s *Scene) SetSensed(n *Node, sensed bool) {
	n.unsensed = !sensed
	s.flagged[n] = true
	s.touch()
}

// Visible reports whether n is switched on (it may still be hidden by an
// ancestor).
func (n *Node) Visible() bool { return !n.hidden }

// Sensed reports whether sensors see n (false for sensed="false" subtrees).
func (n *Node) Sensed() bool { return !n.unsensed }

// PrepareRender brings the g3n graph up to date for one render: it applies
// changed parameters (Update), resolves color overrides, and shows or hides
// the switched and sensed="false" subtrees. viewer is true for renders meant
// for people, which show sensed="false" geometry; sensor renders pass false.
func (s *Scene) PrepareRender(viewer bool) error {
	err := s.Update()
	for _, e := range s.elements {
		if p, ok := e.Element.(Preparer); ok {
			p.Prepare()
		}
	}
	if s.stylesDirty {
		s.resolveColors()
		s.stylesDirty = false
	}
	for n := range s.flagged {
		if n.parent == nil && n != s.top {
			delete(s.flagged, n) // removed from the graph
			continue
		}
		n.g3n.SetVisible(!n.hidden && (viewer || !n.unsensed))
	}
	return err
}

// resolveColors gives every model mesh the material its innermost color
// override asks for.
func (s *Scene) resolveColors() {
	var walk func(n *Node, color *[4]float32)
	walk = func(n *Node, color *[4]float32) {
		if n.color != nil {
			color = n.color
		}
		if n.mesh != nil {
			for i, g := range n.meshG3N {
				g.(*graphic.Mesh).SetMaterial(s.meshes.styled(n.mesh.Primitives[i].Material, color))
			}
		}
		for _, c := range n.children {
			walk(c, color)
		}
	}
	walk(s.top, nil)
}

// ShadowCaster, as the user data of a g3n directional or spot light
// (core.Node.SetUserData), marks a light whose shadows camera images show:
// light elements set it unless told not to; the scene's default lights,
// which stand for no real source, cast none. Renderers give each marked
// light one shadow map of MapSize x MapSize texels (0: the renderer's
// default); range sensors never see shadows.
type ShadowCaster struct{ MapSize int }
