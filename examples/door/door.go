package door

import (
	"fmt"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterElement("door", newDoor) }

type door struct {
	swing    *scene.Node // the transformation inserted before the insertion point
	hinge    mgl64.Vec3
	maxAngle float64 // degrees
}

func newDoor(ctx *scene.Context) (scene.Element, error) {
	d := &door{}
	// The hinge's x y in meters; the typed readers' errors name the file,
	// line and attribute.
	hinge, err := ctx.Command.Floats("hinge", 2, []float64{0, 0})
	if err != nil {
		return nil, err
	}
	d.hinge = mgl64.Vec3{hinge[0], hinge[1], 0}
	if d.maxAngle, err = ctx.Command.FloatIn("max_angle", 90, -180, 180); err != nil {
		return nil, err
	}
	d.swing = ctx.InsertTransform(mgl64.Ident4())
	return d, nil
}

// Params implements scene.Element: one parameter, the opening fraction.
func (d *door) Params() []scene.Param { return []scene.Param{{Name: "open"}} }

// Apply turns the door about its hinge: T(hinge) * Rz(open * max_angle) * T(-hinge).
func (d *door) Apply(v []float64) error {
	open := v[0]
	if open < 0 || open > 1 {
		return fmt.Errorf("open = %v: want 0 (closed) to 1 (open)", open)
	}
	turn := mgl64.HomogRotate3DZ(mgl64.DegToRad(open * d.maxAngle))
	h := d.hinge
	d.swing.SetLocal(mgl64.Translate3D(h[0], h[1], h[2]).Mul4(turn).Mul4(mgl64.Translate3D(-h[0], -h[1], -h[2])))
	return nil
}
