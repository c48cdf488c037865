package elements

import (
	"fmt"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterElement("scan", newScan) }

// scan draws a range sensor's latest returns as points (and, with
// beams="true", the beams from the sensor to them): the paper's
// visualization of a live scan (Fig. 4). The points come from the sensor
// itself, through the scene, every time the sensor renders
// (Scene.PublishReturns), whichever command renders it. The points
// stay where the beams hit in the world, whatever moves afterwards, until the
// sensor renders again. Sensors never see them: the element is always
// sensed="false".
//
// Its one parameter is point_size (default 0.04 m).
//
// Bounds: max_points (default 20000) points are kept; a sensor with more
// returns is drawn decimated evenly (every k-th return), documented rather
// than silently truncated at one end.
type scan struct {
	*cubePoints
	sep    *scene.Node
	beams  *lineSet
	world  []mgl64.Vec3 // the latest returns, world
	origin mgl64.Vec3
	fresh  bool       // new returns since the last Prepare
	drawn  mgl64.Mat4 // the separator's world transform the buffers were made for
}

func newScan(ctx *scene.Context) (scene.Element, error) {
	c := ctx.Command
	name, err := c.Required("sensor")
	if err != nil {
		return nil, err
	}
	var se *scene.SensorEntry
	for _, x := range ctx.Scene.Sensors() {
		if x.Name == name {
			se = x
		}
	}
	if se == nil {
		return nil, c.Errorf("sensor", "no sensor %q declared before this element (declare the sensor first)", name)
	}
	if r, ok := se.Sensor.(scene.Ranger); !ok || !r.HasReturns() {
		return nil, c.Errorf("sensor", "sensor %q is a %s; a scan draws the returns of a range sensor (one whose frames carry returns, as laser, laser3d and psd do)", name, se.Type)
	}
	if c.Has("sensed") && ctx.Sensed() {
		return nil, c.Errorf("sensed", "a scan overlay is never seen by sensors; leave sensed out")
	}
	e := &scan{}
	max, err := c.Int("max_points", 20000, 1, 1000000)
	if err != nil {
		return nil, err
	}
	col, err := readRGB(c, "color", [3]float64{1, 0.1, 0.1})
	if err != nil {
		return nil, err
	}
	withBeams, err := c.Bool("beams", false)
	if err != nil {
		return nil, err
	}
	if withBeams {
		beamCol, err := readRGB(c, "beam_color", [3]float64{1, 0.6, 0.2})
		if err != nil {
			return nil, err
		}
		e.beams = newLineSet(max, beamCol, 1)
	}

	e.cubePoints = newCubePoints(max, 0, col) // point_size comes with Apply

	e.sep = ctx.InsertSeparator(mgl64.Ident4())
	ctx.Scene.SetSensed(e.sep, false)
	e.sep.G3N().Add(e.mesh)
	if e.beams != nil {
		e.sep.G3N().Add(e.beams.graphic)
	}
	ctx.SubscribeReturns(name, e.receive)
	return e, nil
}

// Params: point_size, the points' edge in meters (a viewer may enlarge
// them live); the points themselves come from the sensor, not the table.
func (e *scan) Params() []scene.Param { return []scene.Param{{Name: "point_size", Default: 0.04}} }

func (e *scan) Apply(v []float64) error {
	if !(v[0] >= 0.001 && v[0] <= 10) {
		return fmt.Errorf("point_size = %g m: want 0.001 to 10", v[0])
	}
	if half := float32(v[0] / 2); half != e.half {
		e.half, e.fresh = half, true // rebuilt by the next Prepare
	}
	return nil
}

// receive keeps a copy of the sensor's returns (decimated to max_points).
func (e *scan) receive(r *scene.Returns) {
	e.world = e.world[:0]
	step := 1
	if len(r.Points) > e.max {
		step = (len(r.Points) + e.max - 1) / e.max
	}
	for i := 0; i < len(r.Points); i += step {
		e.world = append(e.world, r.Points[i])
	}
	e.origin = r.Origin
	e.fresh = true
}

// Prepare implements scene.Preparer: the points are world positions, drawn
// under a separator that may move (an overlay inserted on the robot), so the
// buffers are rebuilt in the separator's frame when either changed.
func (e *scan) Prepare() {
	w := e.sep.World()
	if !e.fresh && w == e.drawn {
		return
	}
	e.fresh, e.drawn = false, w
	inv, ok := scene.InvertAffine(w)
	if !ok {
		e.mesh.SetRenderable(false)
		return
	}
	buf := e.posBuf[:0]
	for _, p := range e.world {
		q := inv.Mul4x1(p.Vec4(1))
		buf = e.add(buf, [3]float32{float32(q[0]), float32(q[1]), float32(q[2])})
	}
	e.set(buf)
	if e.beams != nil {
		o := inv.Mul4x1(e.origin.Vec4(1))
		lb := e.beams.buffer()
		for i := range e.world {
			c := 24 * i
			lb = append(lb, float32(o[0]), float32(o[1]), float32(o[2]),
				buf[c]+e.half, buf[c+1]+e.half, buf[c+2]+e.half)
		}
		e.beams.set(lb)
	}
}
