package elements

import (
	"fmt"
	"slices"

	"github.com/g3n/engine/geometry"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/graphic"
	"github.com/g3n/engine/material"
	"github.com/g3n/engine/math32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterElement("scan", newScan) }

// rangeSensorTypes are the sensor types whose frames carry returns.
var rangeSensorTypes = []string{"laser", "laser3d", "psd"}

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
	sep    *scene.Node
	max    int
	half   float32
	beams  *lineSet
	world  []mgl64.Vec3 // the latest returns, world
	origin mgl64.Vec3
	fresh  bool       // new returns since the last Prepare
	drawn  mgl64.Mat4 // the separator's world transform the buffers were made for

	mesh      *graphic.Mesh
	geom      *geometry.Geometry
	positions *gls.VBO
	colors    *gls.VBO
	posBuf    math32.ArrayF32
	colBuf    math32.ArrayF32
	indices   math32.ArrayU32
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
	if !slices.Contains(rangeSensorTypes, se.Type) {
		return nil, c.Errorf("sensor", "sensor %q is a %s; a scan draws the returns of a range sensor (%v)", name, se.Type, rangeSensorTypes)
	}
	if c.Has("sensed") && ctx.Sensed() {
		return nil, c.Errorf("sensed", "a scan overlay is never seen by sensors; leave sensed out")
	}
	e := &scan{}
	if e.max, err = c.Int("max_points", 20000, 1, 1000000); err != nil {
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
		e.beams = newLineSet(e.max, beamCol, 1)
	}

	e.posBuf = make(math32.ArrayF32, 0, 24*e.max)
	e.colBuf = make(math32.ArrayF32, 24*e.max)
	for i := 0; i < 8*e.max; i++ {
		e.colBuf[3*i], e.colBuf[3*i+1], e.colBuf[3*i+2] = col.R, col.G, col.B
	}
	e.indices = make(math32.ArrayU32, 36*e.max)
	for i := 0; i < e.max; i++ {
		for j, k := range cubeTriangles {
			e.indices[36*i+j] = uint32(8*i) + k
		}
	}
	e.geom = geometry.NewGeometry()
	e.positions = gls.NewVBO(e.posBuf).AddAttrib(gls.VertexPosition)
	e.positions.SetUsage(gls.DYNAMIC_DRAW)
	e.colors = gls.NewVBO(e.colBuf).AddAttrib(gls.VertexColor)
	e.geom.AddVBO(e.positions)
	e.geom.AddVBO(e.colors)
	mat := material.NewBasic()
	mat.SetSide(material.SideDouble)
	e.mesh = graphic.NewMesh(e.geom, mat)
	e.mesh.SetCullable(false) // the bounds change with every scan
	e.mesh.SetRenderable(false)

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
		c := [3]float32{float32(q[0]), float32(q[1]), float32(q[2])}
		for _, d := range cubeCorners {
			buf = append(buf, c[0]+e.half*d[0], c[1]+e.half*d[1], c[2]+e.half*d[2])
		}
	}
	e.posBuf = buf
	e.positions.SetBuffer(buf)
	e.colors.SetBuffer(e.colBuf[:len(buf)])
	e.geom.SetIndices(e.indices[:36*len(e.world)])
	e.mesh.SetRenderable(len(e.world) > 0)
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

// centers returns the drawn point centers in the separator's frame.
func (e *scan) centers() []mgl64.Vec3 {
	out := make([]mgl64.Vec3, len(e.posBuf)/24)
	for i := range out {
		out[i] = mgl64.Vec3{float64(e.posBuf[24*i] + e.half), float64(e.posBuf[24*i+1] + e.half), float64(e.posBuf[24*i+2] + e.half)}
	}
	return out
}
