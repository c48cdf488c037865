package elements

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/g3n/engine/geometry"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/graphic"
	"github.com/g3n/engine/material"
	"github.com/g3n/engine/math32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

func init() {
	scene.RegisterElement("pointcloud", newPointCloud)
	scene.RegisterElement("lines", newLines)
}

// readRGB reads an "r g b" attribute with components in 0..1 as a g3n color.
func readRGB(c *scene.Command, name string, def [3]float64) (math32.Color, error) {
	v, err := c.RGB(name, def)
	return math32.Color{R: v[0], G: v[1], B: v[2]}, err
}

// pointParams names count, then x0 y0 z0 x1 ... for n points, with the
// initial positions of the optional "points" attribute as defaults, so a
// scene file can give a whole cloud in one attribute.
func pointParams(c *scene.Command, n int, countPer int) ([]scene.Param, error) {
	ps := make([]scene.Param, 1+3*n)
	ps[0] = scene.Param{Name: "count"}
	for i := 0; i < n; i++ {
		s := strconv.Itoa(i)
		ps[1+3*i] = scene.Param{Name: "x" + s}
		ps[2+3*i] = scene.Param{Name: "y" + s}
		ps[3+3*i] = scene.Param{Name: "z" + s}
	}
	fields, ok, err := c.FloatList("points")
	if err != nil || !ok {
		return ps, err
	}
	if len(fields)%(3*countPer) != 0 || len(fields)/3 > n {
		return nil, c.Errorf("points", "want up to %d points as x y z triples (in groups of %d), got %d numbers", n, countPer, len(fields))
	}
	for i, x := range fields {
		ps[1+i].Default = x
	}
	ps[0].Default = float64(len(fields) / 3 / countPer)
	return ps, nil
}

// checkCount validates a count parameter against the element's capacity.
func checkCount(v float64, max int, what string) (int, error) {
	if v != math.Trunc(v) || v < 0 || v > float64(max) {
		return 0, fmt.Errorf("count = %g: want a whole number of %s from 0 to %d (max_%s)", v, what, max, what)
	}
	return int(v), nil
}

// pointCloud draws up to max_points points as small cubes of point_size
// meters, unlit in one color, at positions given as parameters in the
// insertion point's frame. Optional gaussian noise (noise = sigma in
// meters, seed) is added to what is drawn, not to the parameter table.
type pointCloud struct {
	*cubePoints
	params []scene.Param
	noise  float64
	rng    *rand.Rand
	size   float64      // point_size, for Overlay
	color  math32.Color // for Overlay
}

// cubeCorners and cubeTriangles draw one point; both sides of the faces are
// drawn, so winding does not matter.
var cubeCorners = [8][3]float32{{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1}, {-1, -1, 1}, {1, -1, 1}, {1, 1, 1}, {-1, 1, 1}}

var cubeTriangles = [36]uint32{
	0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
	1, 2, 6, 1, 6, 5, 2, 3, 7, 2, 7, 6, 3, 0, 4, 3, 4, 7,
}

// cubePoints draws up to max points as cubes of edge 2 half, unlit in one
// color: the pointcloud and scan elements' points.
type cubePoints struct {
	max       int
	half      float32
	mesh      *graphic.Mesh
	geom      *geometry.Geometry
	positions *gls.VBO
	colors    *gls.VBO
	posBuf    math32.ArrayF32
	colBuf    math32.ArrayF32
	indices   math32.ArrayU32
}

func newCubePoints(max int, half float32, col math32.Color) *cubePoints {
	cp := &cubePoints{max: max, half: half, posBuf: make(math32.ArrayF32, 0, 24*max),
		colBuf: make(math32.ArrayF32, 24*max), indices: make(math32.ArrayU32, 36*max)}
	for i := 0; i < 8*max; i++ {
		cp.colBuf[3*i], cp.colBuf[3*i+1], cp.colBuf[3*i+2] = col.R, col.G, col.B
	}
	for i := 0; i < max; i++ {
		for j, k := range cubeTriangles {
			cp.indices[36*i+j] = uint32(8*i) + k
		}
	}
	cp.geom = geometry.NewGeometry()
	cp.positions = gls.NewVBO(cp.posBuf).AddAttrib(gls.VertexPosition)
	cp.positions.SetUsage(gls.DYNAMIC_DRAW)
	cp.colors = gls.NewVBO(cp.colBuf).AddAttrib(gls.VertexColor)
	cp.geom.AddVBO(cp.positions)
	cp.geom.AddVBO(cp.colors)
	mat := material.NewBasic()
	mat.SetSide(material.SideDouble)
	cp.mesh = graphic.NewMesh(cp.geom, mat)
	// The bounds change with every update; g3n caches them for culling.
	cp.mesh.SetCullable(false)
	cp.mesh.SetRenderable(false)
	return cp
}

// add appends the cube of center c to buf (from cp.posBuf[:0]).
func (cp *cubePoints) add(buf math32.ArrayF32, c [3]float32) math32.ArrayF32 {
	for _, d := range cubeCorners {
		buf = append(buf, c[0]+cp.half*d[0], c[1]+cp.half*d[1], c[2]+cp.half*d[2])
	}
	return buf
}

// set draws the cubes buf holds.
func (cp *cubePoints) set(buf math32.ArrayF32) {
	cp.posBuf = buf
	cp.positions.SetBuffer(buf)
	cp.colors.SetBuffer(cp.colBuf[:len(buf)])
	cp.geom.SetIndices(cp.indices[:36*(len(buf)/24)])
	cp.mesh.SetRenderable(len(buf) > 0)
}

// centers returns the drawn cubes' centers.
func (cp *cubePoints) centers() []mgl64.Vec3 {
	out := make([]mgl64.Vec3, len(cp.posBuf)/24)
	for i := range out {
		// The first corner is center - half.
		out[i] = mgl64.Vec3{float64(cp.posBuf[24*i] + cp.half), float64(cp.posBuf[24*i+1] + cp.half), float64(cp.posBuf[24*i+2] + cp.half)}
	}
	return out
}

func newPointCloud(ctx *scene.Context) (scene.Element, error) {
	c := ctx.Command
	p := &pointCloud{}
	max, err := c.Int("max_points", 1000, 1, 100000)
	if err != nil {
		return nil, err
	}
	if p.params, err = pointParams(c, max, 1); err != nil {
		return nil, err
	}
	size, err := c.Float("point_size", 0.03)
	if err != nil {
		return nil, err
	}
	if size <= 0 || size > 10 {
		return nil, c.Errorf("point_size", "%g m is not in (0, 10]", size)
	}
	color, err := readRGB(c, "color", [3]float64{1, 0.1, 0.1})
	if err != nil {
		return nil, err
	}
	if p.noise, err = c.FloatIn("noise", 0, 0, 100); err != nil {
		return nil, err
	}
	if _, p.rng, err = c.Rand("seed", 0x5eed); err != nil {
		return nil, err
	}
	p.size, p.color = size, color
	p.cubePoints = newCubePoints(max, float32(size/2), color)
	sep := ctx.InsertSeparator(mgl64.Ident4())
	sep.G3N().Add(p.mesh)
	return p, nil
}

func (p *pointCloud) Params() []scene.Param { return p.params }

func (p *pointCloud) Apply(v []float64) error {
	n, err := checkCount(v[0], p.max, "points")
	if err != nil {
		return err
	}
	buf := p.posBuf[:0]
	for i := 0; i < n; i++ {
		var c [3]float32
		for k := range c {
			x := v[1+3*i+k]
			if p.noise > 0 {
				x += p.noise * p.rng.NormFloat64()
			}
			c[k] = float32(x)
		}
		buf = p.add(buf, c)
	}
	p.set(buf)
	return nil
}

// lines draws up to max_lines segments (laser beams, paths) in one color and
// a width in pixels. Segment i runs from point 2i to point 2i+1, given as
// parameters x0 y0 z0 x1 y1 z1 ... in the insertion point's frame.
type lines struct {
	params []scene.Param
	max    int
	set    *lineSet
	width  float64      // for Overlay
	color  math32.Color // for Overlay
}

func newLines(ctx *scene.Context) (scene.Element, error) {
	c := ctx.Command
	l := &lines{}
	var err error
	if l.max, err = c.Int("max_lines", 100, 1, 100000); err != nil {
		return nil, err
	}
	if l.params, err = pointParams(c, 2*l.max, 2); err != nil {
		return nil, err
	}
	col, err := readRGB(c, "color", [3]float64{0.1, 0.9, 0.1})
	if err != nil {
		return nil, err
	}
	width, err := c.FloatIn("width", 1, 1, 32)
	if err != nil {
		return nil, err
	}
	l.width, l.color = width, col
	l.set = newLineSet(l.max, col, float32(width))
	sep := ctx.InsertSeparator(mgl64.Ident4())
	sep.G3N().Add(l.set.graphic)
	return l, nil
}

func (l *lines) Params() []scene.Param { return l.params }

func (l *lines) Apply(v []float64) error {
	n, err := checkCount(v[0], l.max, "lines")
	if err != nil {
		return err
	}
	buf := l.set.buffer()
	for _, x := range v[1 : 1+6*n] {
		buf = append(buf, float32(x))
	}
	l.set.set(buf)
	return nil
}

// lineSet is a g3n line graphic of up to a fixed number of segments in one
// color, whose segments are replaced on every update.
type lineSet struct {
	graphic   *graphic.Lines
	positions *gls.VBO
	colors    *gls.VBO
	posBuf    math32.ArrayF32
	colBuf    math32.ArrayF32
}

func newLineSet(maxSegments int, col math32.Color, width float32) *lineSet {
	l := &lineSet{
		posBuf: make(math32.ArrayF32, 0, 6*maxSegments),
		colBuf: make(math32.ArrayF32, 6*maxSegments),
	}
	for i := 0; i < 2*maxSegments; i++ {
		l.colBuf[3*i], l.colBuf[3*i+1], l.colBuf[3*i+2] = col.R, col.G, col.B
	}
	geom := geometry.NewGeometry()
	l.positions = gls.NewVBO(l.posBuf).AddAttrib(gls.VertexPosition)
	l.positions.SetUsage(gls.DYNAMIC_DRAW)
	l.colors = gls.NewVBO(l.colBuf).AddAttrib(gls.VertexColor)
	geom.AddVBO(l.positions)
	geom.AddVBO(l.colors)
	mat := material.NewBasic()
	mat.SetLineWidth(width)
	l.graphic = graphic.NewLines(geom, mat)
	// The bounds change with every update; g3n caches them for culling.
	l.graphic.SetCullable(false)
	l.graphic.SetRenderable(false)
	return l
}

// buffer returns the empty position buffer to fill with 6 floats a segment.
func (l *lineSet) buffer() math32.ArrayF32 { return l.posBuf[:0] }

// set draws the segments in buf.
func (l *lineSet) set(buf math32.ArrayF32) {
	l.posBuf = buf
	l.positions.SetBuffer(buf)
	l.colors.SetBuffer(l.colBuf[:len(buf)])
	l.graphic.SetRenderable(len(buf) > 0)
}
