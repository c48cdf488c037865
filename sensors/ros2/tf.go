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

// SceneTransforms returns the scene's tf tree at its current state: one
// transform per named frame (insertion points and sensors, as `simvis
// frames` names them) from its nearest named ancestor ("world" for the
// top), and for every camera, depth camera and segmentation sensor NAME the
// optical frame NAME_optical under it. Moving are the transforms an
// element can change (an element's transform or node lies between the
// frame and its parent): publish them on /tf every cycle; static the rest,
// for /tf_static once. Frames are rigid: a scale in the chain is not
// carried (tf has none).
func SceneTransforms(s *scene.Scene) (static, moving []Transform, err error) {
	if err := s.Update(); err != nil {
		return nil, nil, err
	}
	named := map[*scene.Node]string{}
	type entry struct {
		name string
		node *scene.Node
	}
	var frames []entry
	for _, name := range s.InsertionPoints() {
		n, ok := s.InsertionPoint(name)
		if !ok || named[n] != "" {
			continue
		}
		named[n] = name
		frames = append(frames, entry{name, n})
	}
	for _, se := range s.Sensors() {
		named[se.Frame] = se.Name
		frames = append(frames, entry{se.Name, se.Frame})
	}
	for _, f := range frames {
		parent, movable := scene.WorldFrame, false
		var pn *scene.Node
		for n := f.node; n != nil; n = n.Parent() {
			if n != f.node {
				if name, ok := named[n]; ok {
					parent, pn = name, n
					break
				}
			}
			if n.Kind == scene.KindTransform || n.Kind == scene.KindCustom {
				movable = true
			}
		}
		m := f.node.World()
		if pn != nil {
			inv, ok := scene.InvertAffine(pn.World())
			if !ok {
				return nil, nil, fmt.Errorf("ros2: frame %q: its parent frame %q has no inverse (scaled to nothing?)", f.name, parent)
			}
			m = inv.Mul4(m)
		}
		t := Transform{Parent: FrameID(parent), Child: FrameID(f.name), Matrix: m}
		if movable {
			moving = append(moving, t)
		} else {
			static = append(static, t)
		}
	}
	for _, se := range s.Sensors() {
		if _, ok := se.Sensor.(interface{ Intrinsics() sensors.Intrinsics }); ok {
			static = append(static, Transform{Parent: FrameID(se.Name), Child: OpticalFrame(se.Name), Matrix: sensors.OpticalInBody()})
		}
	}
	return static, moving, nil
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
