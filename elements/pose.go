package elements

import "github.com/simvis/simvis/scene"

func init() { scene.RegisterElement("pose", newPose) }

// pose inserts one transformation right before its insertion point and
// exports it as x y z (meters) roll pitch yaw (degrees), composed like
// pose_offset: R = Rz(yaw)·Ry(pitch)·Rx(roll). Everything attached at the
// insertion point afterwards, and the part's model, moves with it.
type pose struct {
	transform *scene.Node
}

var poseParams = []scene.Param{{Name: "x"}, {Name: "y"}, {Name: "z"}, {Name: "roll"}, {Name: "pitch"}, {Name: "yaw"}}

func newPose(ctx *scene.Context) (scene.Element, error) {
	return &pose{transform: ctx.InsertTransform(scene.Pose{}.Matrix())}, nil
}

func (p *pose) Params() []scene.Param { return poseParams }

func (p *pose) Apply(v []float64) error {
	p.transform.SetLocal(scene.Pose{X: v[0], Y: v[1], Z: v[2], Roll: v[3], Pitch: v[4], Yaw: v[5]}.Matrix())
	return nil
}
