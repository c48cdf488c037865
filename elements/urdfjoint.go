package elements

import (
	"math"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterElement("joint", newJoint) }

// joint is a URDF joint (models/urdf writes one per revolute, continuous
// and prismatic joint): one parameter, position, in radians (revolute,
// continuous) or meters (prismatic), about or along a fixed axis through
// the insertion point's origin. A joint with a mimic attribute has no
// parameter: it follows its leader, position = multiplier·leader + offset,
// whatever its own limits.
type joint struct {
	name      string // as the URDF names it: the element's name without its part's prefix
	transform *scene.Node
	kind      string
	axis      mgl64.Vec3
	limits    limits
	unit      string
	followers []follower
	position  float64
}

type follower struct {
	j                  *joint
	multiplier, offset float64
}

func newJoint(ctx *scene.Context) (scene.Element, error) {
	c := ctx.Command
	// Embedded commands are named PART/JOINT; ROS tools know the joint by
	// its URDF name alone.
	j := &joint{name: ctx.Name[strings.LastIndex(ctx.Name, "/")+1:]}
	var err error
	j.kind, err = c.Required("kind")
	if err != nil {
		return nil, err
	}
	switch j.kind {
	case "revolute", "continuous":
		j.unit = " rad"
	case "prismatic":
		j.unit = " m"
	default:
		return nil, c.Errorf("kind", "%q is not a joint kind (want revolute, continuous or prismatic)", j.kind)
	}
	if j.axis, err = readAxis(c, "axis", mgl64.Vec3{1, 0, 0}); err != nil {
		return nil, err
	}
	if j.kind == "continuous" {
		if c.Has("min") || c.Has("max") {
			return nil, c.Errorf("", "a continuous joint has no limits (min, max)")
		}
		j.limits = limits{math.Inf(-1), math.Inf(1)}
	} else if j.limits, err = readLimits(c, j.unit); err != nil {
		return nil, err
	}
	j.transform = ctx.InsertTransform(mgl64.Ident4())
	leaderName, ok := c.Attr("mimic")
	if !ok {
		if c.Has("multiplier") || c.Has("offset") {
			return nil, c.Errorf("", "multiplier and offset need mimic")
		}
		return j, nil
	}
	var f follower
	if f.multiplier, err = c.Float("multiplier", 1); err != nil {
		return nil, err
	}
	if f.offset, err = c.Float("offset", 0); err != nil {
		return nil, err
	}
	// Names in a model's embedded commands resolve in the part first.
	var entry *scene.ElementEntry
	if i := strings.LastIndex(ctx.Name, "/"); i >= 0 {
		entry, ok = ctx.Scene.Element(ctx.Name[:i+1] + leaderName)
	}
	if !ok {
		entry, ok = ctx.Scene.Element(leaderName)
	}
	if !ok {
		return nil, c.Errorf("mimic", "no element %q", leaderName)
	}
	var leader *joint
	switch e := entry.Element.(type) {
	case *joint:
		leader = e
	case *mimic:
		leader = e.joint
	default:
		return nil, c.Errorf("mimic", "element %q is a %s, not a joint", entry.Name, entry.Type)
	}
	f.j = j
	leader.followers = append(leader.followers, f)
	ctx.OnUndo(func() { leader.followers = leader.followers[:len(leader.followers)-1] })
	j.set(f.multiplier*leader.position + f.offset)
	return &mimic{j}, nil
}

func (j *joint) Params() []scene.Param { return []scene.Param{{Name: "position"}} }

func (j *joint) Apply(v []float64) error {
	if err := j.limits.check("position", v[0], j.unit); err != nil {
		return err
	}
	j.set(v[0])
	return nil
}

// JointState gives the joint's URDF name and position (scene.JointStater);
// a mimic joint inherits it with the position it follows.
func (j *joint) JointState() (string, float64) { return j.name, j.position }

// set moves the joint and those that mimic it.
func (j *joint) set(q float64) {
	j.position = q
	if j.kind == "prismatic" {
		d := j.axis.Mul(q)
		j.transform.SetLocal(mgl64.Translate3D(d[0], d[1], d[2]))
	} else {
		j.transform.SetLocal(mgl64.HomogRotate3D(q, j.axis))
	}
	for _, f := range j.followers {
		f.j.set(f.multiplier*q + f.offset)
	}
}

// mimic is a joint that follows another: it has no parameter of its own.
type mimic struct{ *joint }

func (m *mimic) Params() []scene.Param { return nil }

func (m *mimic) Apply([]float64) error { return nil }
