package elements

import (
	"fmt"
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

func init() {
	scene.RegisterElement("rotation", newRotation)
	scene.RegisterElement("translation", newTranslation)
	scene.RegisterElement("scale", newScale)
}

// limits is an optional [min, max] range on a joint's one parameter.
type limits struct{ min, max float64 }

func readLimits(c *scene.Command, unit string) (limits, error) {
	l := limits{math.Inf(-1), math.Inf(1)}
	var err error
	if l.min, err = c.Float("min", l.min); err != nil {
		return l, err
	}
	if l.max, err = c.Float("max", l.max); err != nil {
		return l, err
	}
	if l.min > l.max {
		return l, c.Errorf("max", "%g%s is below min (%g%s)", l.max, unit, l.min, unit)
	}
	return l, nil
}

func (l limits) check(name string, v float64, unit string) error {
	if v < l.min || v > l.max {
		return fmt.Errorf("%s = %g%s is outside the joint's limits [%g, %g]%s", name, v, unit, l.min, l.max, unit)
	}
	return nil
}

// readAxis reads a direction attribute and normalises it.
func readAxis(c *scene.Command, name string, def mgl64.Vec3) (mgl64.Vec3, error) {
	v, err := c.Floats(name, 3, def[:])
	if err != nil {
		return mgl64.Vec3{}, err
	}
	axis := mgl64.Vec3{v[0], v[1], v[2]}
	if axis.Len() < 1e-9 {
		return mgl64.Vec3{}, c.Errorf(name, "the axis has zero length")
	}
	return axis.Normalize(), nil
}

func readPoint(c *scene.Command, name string) (mgl64.Vec3, error) {
	v, err := c.Floats(name, 3, []float64{0, 0, 0})
	if err != nil {
		return mgl64.Vec3{}, err
	}
	return mgl64.Vec3{v[0], v[1], v[2]}, nil
}

// rotation is a revolute joint: one angle (degrees) about a fixed axis
// through a fixed center, both in the insertion point's frame.
type rotation struct {
	transform *scene.Node
	axis      mgl64.Vec3
	center    mgl64.Vec3
	limits    limits
}

func newRotation(ctx *scene.Context) (scene.Element, error) {
	c := ctx.Command
	r := &rotation{}
	var err error
	if r.axis, err = readAxis(c, "axis", mgl64.Vec3{0, 0, 1}); err != nil {
		return nil, err
	}
	if r.center, err = readPoint(c, "center"); err != nil {
		return nil, err
	}
	if r.limits, err = readLimits(c, "°"); err != nil {
		return nil, err
	}
	r.transform = ctx.InsertTransform(mgl64.Ident4())
	return r, nil
}

func (r *rotation) Params() []scene.Param { return []scene.Param{{Name: "angle"}} }

// Apply sets T(center)·R(axis, angle)·T(-center).
func (r *rotation) Apply(v []float64) error {
	if err := r.limits.check("angle", v[0], "°"); err != nil {
		return err
	}
	c := r.center
	turn := mgl64.HomogRotate3D(mgl64.DegToRad(v[0]), r.axis)
	r.transform.SetLocal(mgl64.Translate3D(c[0], c[1], c[2]).Mul4(turn).Mul4(mgl64.Translate3D(-c[0], -c[1], -c[2])))
	return nil
}

// translation is a prismatic joint: one offset (meters) along a fixed axis.
type translation struct {
	transform *scene.Node
	axis      mgl64.Vec3
	limits    limits
}

func newTranslation(ctx *scene.Context) (scene.Element, error) {
	c := ctx.Command
	t := &translation{}
	var err error
	if t.axis, err = readAxis(c, "axis", mgl64.Vec3{1, 0, 0}); err != nil {
		return nil, err
	}
	if t.limits, err = readLimits(c, " m"); err != nil {
		return nil, err
	}
	t.transform = ctx.InsertTransform(mgl64.Ident4())
	return t, nil
}

func (t *translation) Params() []scene.Param { return []scene.Param{{Name: "offset"}} }

func (t *translation) Apply(v []float64) error {
	if err := t.limits.check("offset", v[0], " m"); err != nil {
		return err
	}
	d := t.axis.Mul(v[0])
	t.transform.SetLocal(mgl64.Translate3D(d[0], d[1], d[2]))
	return nil
}

// scale scales what follows it along the insertion point's axes.
type scale struct{ transform *scene.Node }

func newScale(ctx *scene.Context) (scene.Element, error) {
	return &scale{transform: ctx.InsertTransform(mgl64.Ident4())}, nil
}

func (s *scale) Params() []scene.Param {
	return []scene.Param{{Name: "sx", Default: 1}, {Name: "sy", Default: 1}, {Name: "sz", Default: 1}}
}

// Apply refuses factors <= 0: zero makes frames below singular (no pose to
// report) and a negative factor mirrors the geometry, turning its faces
// inside out for back-face culling.
func (s *scale) Apply(v []float64) error {
	for i, f := range v {
		if f <= 0 {
			return fmt.Errorf("%s = %g: scale factors must be > 0", s.Params()[i].Name, f)
		}
	}
	s.transform.SetLocal(mgl64.Scale3D(v[0], v[1], v[2]))
	return nil
}
