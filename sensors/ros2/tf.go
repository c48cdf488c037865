package ros2

import (
	"fmt"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// Transform is one edge of the tf tree: the pose of frame Child in frame
// Parent (Matrix maps Child coordinates to Parent coordinates).
type Transform struct {
	Parent, Child string // tf frame ids
	Matrix        mgl64.Mat4
}

// SceneTransforms returns the scene's tf tree at its current state, shaped
// like the scene: one transform per frame (insertion points and sensors,
// as `simvis frames` names them, ids by FrameID) from its parent frame, and
// for every camera, depth camera and segmentation sensor NAME the optical
// frame NAME_optical under it. A URDF robot's links are named by their
// link names where those are free (robots.go; FrameIDs gives every id):
// link LINK of part R is LINK, its parent the parent link's frame (the
// URDF tree: the joint's origin times its motion), the root link's the
// part's frame R.
//
// A sensor's parent is the insertion point it was inserted at (its
// insert_at). An insertion point's parent is the frame of the nearest
// node above it that anchors another insertion point: what is inserted at
// an insertion point becomes a sibling of it, so MARVIN/FRONT_SCANNER (a
// node of the part MARVIN's model) hangs below MARVIN, MARVIN below LAB
// (where the part was inserted), LAB below ROOT and ROOT below "world".
// Where several insertion points share a node the first anchors it.
//
// Moving are the transforms an element can change (an element's transform
// or node lies on the path between the frame and its parent, such as a
// pose element or a rotation of a tilt unit): publish them on /tf; static
// the rest, for /tf_static. Frames are rigid: a scale in the chain is not
// carried (tf has none). Two frames whose ids collide are an error naming
// both.
func SceneTransforms(s *scene.Scene) (static, moving []Transform, err error) {
	edges, err := SceneTree(s)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range edges {
		if e.Moving {
			moving = append(moving, e.Transform)
		} else {
			static = append(static, e.Transform)
		}
	}
	return static, moving, nil
}

// Edge is one transform of the tf tree and whether an element can move it.
type Edge struct {
	Transform
	Moving bool
	// Frame is the simvis frame (insertion point or sensor name) of Child;
	// for an optical frame, its sensor's name.
	Frame string
}

// SceneTree returns the edges SceneTransforms splits into static and
// moving, in the order of `simvis frames` (insertion points in traversal
// order, then sensors), optical frames last.
func SceneTree(s *scene.Scene) ([]Edge, error) {
	if err := s.Update(); err != nil {
		return nil, err
	}
	type frame struct {
		name string
		node *scene.Node
	}
	var frames []frame
	seen := map[*scene.Node]bool{}
	anchor := map[*scene.Node]*scene.Node{} // a node's first insertion point child
	byNode := map[*scene.Node]string{}
	for _, name := range s.InsertionPoints() {
		n, ok := s.InsertionPoint(name)
		if !ok || seen[n] {
			continue
		}
		seen[n] = true
		byNode[n] = name
		frames = append(frames, frame{name, n})
		if p := n.Parent(); p != nil && anchor[p] == nil {
			anchor[p] = n
		}
	}
	// parentIP is the insertion point a node hangs below: the anchor of its
	// nearest ancestor anchored by another insertion point than self.
	parentIP := func(n, self *scene.Node) *scene.Node {
		for p := n.Parent(); p != nil; p = p.Parent() {
			if a := anchor[p]; a != nil && a != self {
				return a
			}
		}
		return nil
	}
	nm := nameFrames(s)
	ids := map[string]string{scene.WorldFrame: scene.WorldFrame}
	var out []Edge
	add := func(name string, n, pn *scene.Node) error {
		id := nm.id(name)
		if other, ok := ids[id]; ok {
			return fmt.Errorf("ros2: frames %q and %q both map to the tf frame id %q: rename one", other, name, id)
		}
		ids[id] = name
		parent, m := scene.WorldFrame, n.World()
		if pn != nil {
			parent = nm.id(byNode[pn])
			// Composed from the common ancestor down, not from the world
			// transforms: a static edge is then the same bits whatever
			// the elements above it do.
			lca := commonAncestor(n, pn)
			inv, ok := scene.InvertAffine(below(pn, lca))
			if !ok {
				return fmt.Errorf("ros2: frame %q: its parent frame %q has no inverse (scaled to nothing?)", name, byNode[pn])
			}
			m = inv.Mul4(below(n, lca))
		}
		out = append(out, Edge{Transform: Transform{Parent: parent, Child: id, Matrix: m}, Moving: movable(n, pn), Frame: name})
		return nil
	}
	for _, f := range frames {
		if err := add(f.name, f.node, parentIP(f.node, f.node)); err != nil {
			return nil, err
		}
	}
	for _, se := range s.Sensors() {
		pn, ok := s.InsertionPoint(se.At)
		if !ok || !seen[pn] {
			pn = parentIP(se.Frame, nil)
		}
		if err := add(se.Name, se.Frame, pn); err != nil {
			return nil, err
		}
	}
	for _, se := range s.Sensors() {
		if _, ok := se.Sensor.(interface{ Intrinsics() sensors.Intrinsics }); ok {
			id := OpticalFrame(se.Name)
			if other, ok := ids[id]; ok {
				return nil, fmt.Errorf("ros2: frames %q and %q both map to the tf frame id %q: rename one", other, se.Name+" (optical)", id)
			}
			ids[id] = se.Name
			out = append(out, Edge{Transform: Transform{Parent: FrameID(se.Name), Child: id, Matrix: sensors.OpticalInBody()}, Frame: se.Name})
		}
	}
	return out, nil
}

// commonAncestor returns the lowest node above or at both a and b.
func commonAncestor(a, b *scene.Node) *scene.Node {
	above := map[*scene.Node]bool{}
	for p := b; p != nil; p = p.Parent() {
		above[p] = true
	}
	for k := a; k != nil; k = k.Parent() {
		if above[k] {
			return k
		}
	}
	return nil
}

// below composes the local transforms from just under top down to n, as
// Node.World composes them from the root.
func below(n, top *scene.Node) mgl64.Mat4 {
	var chain []*scene.Node
	for k := n; k != nil && k != top; k = k.Parent() {
		chain = append(chain, k)
	}
	m := mgl64.Ident4()
	for i := len(chain) - 1; i >= 0; i-- {
		m = m.Mul4(chain[i].Local())
	}
	return m
}

// movable reports whether an element's transform or node lies on the path
// from n up to its common ancestor with parent (nil: the top).
func movable(n, parent *scene.Node) bool {
	above := map[*scene.Node]bool{}
	for p := parent; p != nil; p = p.Parent() {
		above[p] = true
	}
	moves := func(k *scene.Node) bool { return k.Kind == scene.KindTransform || k.Kind == scene.KindCustom }
	var lca *scene.Node
	for k := n; k != nil; k = k.Parent() {
		if above[k] {
			lca = k
			break
		}
		if moves(k) {
			return true
		}
	}
	for p := parent; p != nil && p != lca; p = p.Parent() {
		if moves(p) {
			return true
		}
	}
	return false
}

// TF returns the transforms as a TFMessage stamped stamp: translation and
// the unit quaternion of each matrix's rotation (scale removed).
func TF(ts []Transform, stamp Time) TFMessage {
	out := TFMessage{Transforms: make([]TransformStamped, len(ts))}
	for i, t := range ts {
		m := t.Matrix
		var r mgl64.Mat3
		for c := 0; c < 3; c++ {
			col := mgl64.Vec3{m.At(0, c), m.At(1, c), m.At(2, c)}
			if l := col.Len(); l > 0 {
				col = col.Mul(1 / l)
			}
			r.SetCol(c, col)
		}
		q := mgl64.Mat4ToQuat(r.Mat4()).Normalize()
		if q.W < 0 { // one of the two equal quaternions, w >= 0, for stable output
			q = q.Scale(-1)
		}
		out.Transforms[i] = TransformStamped{
			Header:       Header{Stamp: stamp, FrameID: t.Parent},
			ChildFrameID: t.Child,
			Translation:  [3]float64{m.At(0, 3), m.At(1, 3), m.At(2, 3)},
			Rotation:     [4]float64{q.V[0], q.V[1], q.V[2], q.W},
		}
	}
	return out
}
