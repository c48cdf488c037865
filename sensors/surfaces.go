package sensors

import (
	"fmt"
	"math"

	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/renderer"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// Range sensors do not read the depth buffer. They render, for every pixel,
// the plane of the surface seen there (unit normal n and offset d, n·p = d,
// in the sensor's frame), and then intersect each beam's exact direction b
// with the plane of the pixel the beam falls in: range = d / n·b. On a flat
// surface this is exact to float rounding wherever the beam falls in the
// pixel, where a depth image gives the range of the pixel center's ray; and
// a beam always takes one surface's plane, so there are no mixed pixels at
// depth edges. The depth buffer only decides which surface is in front; it
// is reversed-Z float (near at 1, infinity at 0) where GL 4.5 allows.

const surfaceVertexShader = `
layout(location = 0) in vec3 VertexPosition;
uniform mat4 SensorFromModel;
uniform mat4 ClipFromSensor;
out vec3 P;
void main() {
    vec4 p = SensorFromModel * vec4(VertexPosition, 1.0);
    P = p.xyz;
    gl_Position = ClipFromSensor * p;
}
`

// The derivatives of the interpolated position span the triangle's plane:
// P is linear over a triangle, and a 2x2 quad's helper pixels extrapolate
// the same triangle.
const surfaceFragmentShader = `
precision highp float;
in vec3 P;
out vec4 Plane;
void main() {
    vec3 c = cross(dFdx(P), dFdy(P));
    float l = length(c);
    vec3 n = l > 0.0 ? c / l : -normalize(P);
    float d = dot(n, P);
    if (d < 0.0) {
        n = -n;
        d = -d;
    }
    Plane = vec4(n, d);
}
`

// The depth program writes the depth along the view's axis (+x) of the
// point seen at each pixel center: the interpolated position there lies
// exactly on the triangle, on that pixel's ray.
const depthFragmentShader = `
precision highp float;
in vec3 P;
out vec4 Depth;
void main() {
    Depth = vec4(P.x, 0.0, 0.0, 0.0);
}
`

const (
	surfaceProgram = "simvis_surface"
	depthProgram   = "simvis_depth"
)

// surfaceMode selects what a surface render writes per pixel.
type surfaceMode int

const (
	modePlanes surfaceMode = iota // nx ny nz d (RGBA32F)
	modeDepth                     // depth along the view's x (R32F), 0 where nothing was hit
)

// surfaceView is one pinhole view of a range sensor. It looks along the +x
// of its frame, rot (view frame -> sensor frame), with +z up; u runs to the
// right (-y), v down (-z).
type surfaceView struct {
	rot        mgl64.Mat4
	w, h       int
	tanX, tanY float64 // tangents of the half fields of view
	near, far  float64 // far only bounds culling: the projection is infinite
}

// project returns the continuous pixel position (0..w, 0..h) of a direction
// given in the view frame; ok is false behind the view.
func (v *surfaceView) project(d mgl64.Vec3) (u, vv float64, ok bool) {
	if d[0] <= 0 {
		return 0, 0, false
	}
	u = float64(v.w) / 2 * (1 - d[1]/d[0]/v.tanX)
	vv = float64(v.h) / 2 * (1 - d[2]/d[0]/v.tanY)
	return u, vv, true
}

// surfaceImage is a rendered view, top row first: in modePlanes four floats
// (nx ny nz d) per pixel, n = 0 where nothing was hit; in modeDepth one.
type surfaceImage struct {
	view   surfaceView
	planes []float32
}

// rangeAt returns the range along the unit direction b (sensor frame) from
// the plane of the pixel at (px, py), +Inf where the pixel saw nothing.
func (im *surfaceImage) rangeAt(px, py int, b mgl64.Vec3) float64 {
	i := 4 * (py*im.view.w + px)
	p := im.planes[i : i+4 : i+4]
	n := mgl64.Vec3{float64(p[0]), float64(p[1]), float64(p[2])}
	if n[0] == 0 && n[1] == 0 && n[2] == 0 {
		return math.Inf(1)
	}
	cos := n.Dot(b)
	if cos <= 1e-6 {
		// The beam grazes the pixel's plane; fall back to the range of the
		// pixel center's ray, which the pixel did see.
		c := im.view.rot.Mul4x1(im.view.pixelDir(px, py).Vec4(0)).Vec3()
		cos = n.Dot(c)
		if cos <= 1e-12 {
			return math.Inf(1)
		}
		return float64(p[3]) / cos
	}
	return float64(p[3]) / cos
}

// pixelDir returns the unit direction of pixel (px, py)'s center in the view frame.
func (v *surfaceView) pixelDir(px, py int) mgl64.Vec3 {
	y := (1 - (float64(px)+0.5)*2/float64(v.w)) * v.tanX
	z := (1 - (float64(py)+0.5)*2/float64(v.h)) * v.tanY
	return mgl64.Vec3{1, y, z}.Normalize()
}

// rangeAlong returns the range along the unit direction b (sensor frame)
// from the first of the views that sees it, and whether one does.
func rangeAlong(images []*surfaceImage, b mgl64.Vec3) (float64, bool) {
	for _, im := range images {
		d := im.view.rot.Transpose().Mul4x1(b.Vec4(0)).Vec3()
		u, v, ok := im.view.project(d)
		if !ok || u < 0 || v < 0 || u > float64(im.view.w) || v > float64(im.view.h) {
			continue
		}
		px := min(int(u), im.view.w-1)
		py := min(int(v), im.view.h-1)
		return im.rangeAt(px, py, b), true
	}
	return 0, false
}

// gpuGeometry is one primitive's triangles uploaded for surface rendering.
type gpuGeometry struct {
	vao, vbo, ebo uint32
	count         int32
	center        mgl64.Vec3 // bounding sphere, primitive coordinates
	radius        float64
}

// surfaceState is the renderer's GL state for surface rendering, made on
// first use on the context's thread.
type surfaceState struct {
	reversedZ  bool
	sensorFrom gls.Uniform
	clipFrom   gls.Uniform
	geoms      map[[32]byte]*gpuGeometry
}

func (r *Renderer) surfaces(gs *gls.GLS) *surfaceState {
	if r.surf != nil {
		return r.surf
	}
	st := &surfaceState{geoms: map[[32]byte]*gpuGeometry{}, reversedZ: gpu.HasZeroToOneDepth(gs)}
	st.sensorFrom.Init("SensorFromModel")
	st.clipFrom.Init("ClipFromSensor")
	r.g3n.AddShader(surfaceProgram+"_vertex", surfaceVertexShader)
	r.g3n.AddShader(surfaceProgram+"_fragment", surfaceFragmentShader)
	r.g3n.AddShader(depthProgram+"_fragment", depthFragmentShader)
	r.g3n.AddProgram(surfaceProgram, surfaceProgram+"_vertex", surfaceProgram+"_fragment")
	r.g3n.AddProgram(depthProgram, surfaceProgram+"_vertex", depthProgram+"_fragment")
	r.surf = st
	return st
}

func (st *surfaceState) geometry(gs *gls.GLS, p *models.Primitive) *gpuGeometry {
	if g, ok := st.geoms[p.Key]; ok {
		return g
	}
	pos := make([]float32, 0, 3*len(p.Positions))
	var lo, hi mgl64.Vec3
	for i, q := range p.Positions {
		pos = append(pos, q[0], q[1], q[2])
		v := mgl64.Vec3{float64(q[0]), float64(q[1]), float64(q[2])}
		if i == 0 {
			lo, hi = v, v
		}
		for k := 0; k < 3; k++ {
			lo[k], hi[k] = math.Min(lo[k], v[k]), math.Max(hi[k], v[k])
		}
	}
	g := &gpuGeometry{count: int32(len(p.Indices))}
	g.center = lo.Add(hi).Mul(0.5)
	g.radius = hi.Sub(lo).Len() / 2
	g.vao = gs.GenVertexArray()
	gs.BindVertexArray(g.vao)
	g.vbo = gs.GenBuffer()
	gs.BindBuffer(gls.ARRAY_BUFFER, g.vbo)
	gs.BufferData(gls.ARRAY_BUFFER, 4*len(pos), pos, gls.STATIC_DRAW)
	gs.VertexAttribPointer(0, 3, gls.FLOAT, false, 0, 0)
	gs.EnableVertexAttribArray(0)
	g.ebo = gs.GenBuffer()
	gs.BindBuffer(gls.ELEMENT_ARRAY_BUFFER, g.ebo)
	gs.BufferData(gls.ELEMENT_ARRAY_BUFFER, 4*len(p.Indices), p.Indices, gls.STATIC_DRAW)
	gs.BindVertexArray(0)
	st.geoms[p.Key] = g
	return g
}

// renderSurfaces renders each view of a sensor at sensorWorld into out
// (one image per view, reused between calls when sizes match). The scene
// must be up to date (Scene.Update).
func (r *Renderer) renderSurfaces(s *scene.Scene, sensorWorld mgl64.Mat4, views []surfaceView, out []*surfaceImage, mode surfaceMode) error {
	r.meshBuf = s.SensedMeshes(r.meshBuf[:0])
	sensorFromWorld := sensorWorld.Inv()
	program, format, channels := surfaceProgram, gpu.ColorRGBA32F, 4
	if mode == modeDepth {
		program, format, channels = depthProgram, gpu.ColorR32F, 1
	}
	for i, v := range views {
		if len(out[i].planes) != channels*v.w*v.h {
			out[i].planes = make([]float32, channels*v.w*v.h)
		}
		out[i].view = v
	}
	return r.ctx.Do(func(gs *gls.GLS) error {
		st := r.surfaces(gs)
		if _, err := r.g3n.SetProgram(&renderer.ShaderSpecs{Name: program, ShaderUnique: true}); err != nil {
			return fmt.Errorf("sensors: %s shader: %w", program, err)
		}
		if st.reversedZ {
			gpu.SetZeroToOneDepth(gs, true)
			defer gpu.SetZeroToOneDepth(gs, false)
		}
		gs.Disable(gls.BLEND)
		gs.Disable(gls.CULL_FACE) // surfaces are seen from both sides
		gs.Enable(gls.DEPTH_TEST)
		gs.DepthMask(true)
		gs.PolygonMode(gls.FRONT_AND_BACK, gls.FILL)
		for i, v := range views {
			fb, err := r.framebuffer(gs, v.w, v.h, format)
			if err != nil {
				return err
			}
			fb.Bind(gs)
			gs.ClearColor(0, 0, 0, 0)
			if st.reversedZ {
				gs.ClearDepth(0)
				gs.DepthFunc(gls.GREATER)
			} else {
				gs.ClearDepth(1)
				gs.DepthFunc(gls.LESS)
			}
			gs.Clear(gls.COLOR_BUFFER_BIT | gls.DEPTH_BUFFER_BIT)
			clipFromSensor := v.projection(st.reversedZ).Mul4(glFromSensor).Mul4(v.rot.Transpose())
			clip32 := mat32(clipFromSensor)
			gs.UniformMatrix4fv(st.clipFrom.Location(gs), 1, false, &clip32[0])
			planes := v.frustumPlanes()
			for _, m := range r.meshBuf {
				sensorFromModel := sensorFromWorld.Mul4(m.World)
				viewFromModel := v.rot.Transpose().Mul4(sensorFromModel)
				scale := maxScale(m.World)
				for _, p := range m.Mesh.Primitives {
					if len(p.Indices) < 3 {
						continue
					}
					g := st.geometry(gs, p)
					c := viewFromModel.Mul4x1(g.center.Vec4(1)).Vec3()
					if outside(planes, c, g.radius*scale) {
						continue
					}
					m32 := mat32(sensorFromModel)
					gs.UniformMatrix4fv(st.sensorFrom.Location(gs), 1, false, &m32[0])
					gs.BindVertexArray(g.vao)
					gs.DrawElements(gls.TRIANGLES, g.count, gls.UNSIGNED_INT, 0)
				}
			}
			gs.BindVertexArray(0)
			if err := fb.ReadFloat(gs, out[i].planes); err != nil {
				return err
			}
		}
		return nil
	})
}

// glFromSensor maps the sensor convention (x forward, y left, z up) to GL
// eye coordinates (x right, y up, looking along -z).
var glFromSensor = sensorToGL.Inv()

// projection returns the view's infinite perspective projection: reversed-Z
// for [0, 1] clip depth (near -> 1, infinity -> 0), else the classic form
// with near -> -1 and infinity -> 1.
func (v *surfaceView) projection(reversed bool) mgl64.Mat4 {
	sx, sy, n := 1/v.tanX, 1/v.tanY, v.near
	if reversed {
		return mgl64.Mat4{sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, 0, -1, 0, 0, n, 0}
	}
	return mgl64.Mat4{sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, -1, -1, 0, 0, -2 * n, 0}
}

// frustumPlanes returns the view's side, near and far planes in the view
// frame as (normal, offset) with inside where normal·p >= offset.
func (v *surfaceView) frustumPlanes() [6]mgl64.Vec4 {
	left := mgl64.Vec3{v.tanX, -1, 0}.Normalize() // inside: y <= x tanX
	right := mgl64.Vec3{v.tanX, 1, 0}.Normalize()
	top := mgl64.Vec3{v.tanY, 0, -1}.Normalize()
	bottom := mgl64.Vec3{v.tanY, 0, 1}.Normalize()
	return [6]mgl64.Vec4{
		left.Vec4(0), right.Vec4(0), top.Vec4(0), bottom.Vec4(0),
		{1, 0, 0, v.near}, {-1, 0, 0, -v.far},
	}
}

func outside(planes [6]mgl64.Vec4, c mgl64.Vec3, radius float64) bool {
	for _, p := range planes {
		if p.Vec3().Dot(c)-p[3] < -radius {
			return true
		}
	}
	return false
}

// maxScale bounds how much m stretches lengths (the largest column norm
// times sqrt 3 would be safe for any shear; scale elements only scale axes).
func maxScale(m mgl64.Mat4) float64 {
	s := 0.0
	for c := 0; c < 3; c++ {
		s = math.Max(s, m.Col(c).Vec3().Len())
	}
	return s
}

func mat32(m mgl64.Mat4) [16]float32 {
	var r [16]float32
	for i := range m {
		r[i] = float32(m[i])
	}
	return r
}
