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
	"github.com/simvis/simvis/sensors/raycast"
)

// How range sensors measure. They do not read ranges from a depth buffer:
// the GPU renders, for every pixel, which mesh (draw) and triangle is seen
// there, and each beam is then intersected exactly, in float64, with the
// meshes seen in the 3x3 pixels around the pixel its own direction falls
// in (through each mesh's bounding volume hierarchy). The nearest hit is
// the beam's range: exact on any surface, wherever the beam falls in the
// pixel (a depth image gives the range of the pixel center's ray instead),
// and at a depth edge a beam returns the one surface it really meets, never
// a mix. A mesh is found if it covers a pixel center near the beam, so the
// views have several pixels per beam spacing (oversample). If no nearby
// mesh is hit, the beam takes the plane of the triangle seen in its own
// pixel. The depth buffer only decides what is in front; it is reversed-Z
// float (near at 1, infinity at 0) where GL 4.5 allows.
//
// Depth cameras measure the pixel center's ray itself, so their shader
// writes the depth of the interpolated position, which lies exactly on the
// triangle and on that ray.

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

// Float channels hold integers exactly up to 2^24: draws and triangles per
// draw stay far below.
const idFragmentShader = `
precision highp float;
uniform float DrawID;
in vec3 P;
out vec4 ID;
void main() {
    ID = vec4(DrawID, float(gl_PrimitiveID), 0.0, 0.0);
}
`

const depthFragmentShader = `
precision highp float;
in vec3 P;
out vec4 Depth;
void main() {
    Depth = vec4(P.x, 0.0, 0.0, 0.0);
}
`

const (
	idProgram    = "simvis_triangle_id"
	depthProgram = "simvis_depth"
)

// surfaceMode selects what a surface render writes per pixel.
type surfaceMode int

const (
	modeIDs   surfaceMode = iota // draw index + 1 and triangle index (RGBA32F); 0 where nothing was hit
	modeDepth                    // depth along the view's x (R32F); 0 where nothing was hit
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

// surfaceImage is a rendered view, top row first: in modeIDs four floats
// per pixel, in modeDepth one.
type surfaceImage struct {
	view   surfaceView
	pixels []float32
}

// drawRecord is one primitive drawn in a surface frame.
type drawRecord struct {
	prim            *models.Primitive
	sensorFromModel mgl64.Mat4
	modelFromSensor mgl64.Mat4
	geom            *raycast.Geometry // for exact beams (modeIDs only)
}

// surfaceFrame is what one sensor's render needs between the render and
// reading its pixels; each sensor owns one, so sensors may render from
// different goroutines.
type surfaceFrame struct {
	meshes []scene.MeshInstance
	draws  []drawRecord
	images []*surfaceImage
	drawn  int // triangles drawn in the last render, all views (after culling)
	total  int // triangles of the sensed meshes
}

// triangle returns triangle i of a draw in the sensor frame.
func (d *drawRecord) triangle(i int) (v0, v1, v2 mgl64.Vec3, ok bool) {
	idx := d.prim.Indices
	if 3*i+2 >= len(idx) {
		return v0, v1, v2, false
	}
	at := func(k uint32) mgl64.Vec3 {
		p := d.prim.Positions[k]
		return d.sensorFromModel.Mul4x1(mgl64.Vec4{float64(p[0]), float64(p[1]), float64(p[2]), 1}).Vec3()
	}
	return at(idx[3*i]), at(idx[3*i+1]), at(idx[3*i+2]), true
}

// rangeAlong returns the range along the unit direction b (sensor frame),
// +Inf where nothing was seen, and whether one of the views sees b.
func (f *surfaceFrame) rangeAlong(b mgl64.Vec3) (float64, bool) {
	for _, im := range f.images {
		d := im.view.rot.Transpose().Mul4x1(b.Vec4(0)).Vec3()
		u, v, ok := im.view.project(d)
		w, h := im.view.w, im.view.h
		if !ok || u < 0 || v < 0 || u > float64(w) || v > float64(h) {
			continue
		}
		ox, oy := min(int(u), w-1), min(int(v), h-1)
		best := math.Inf(1)
		var tried [9]float32
		n := 0
		for py := max(oy-1, 0); py <= min(oy+1, h-1); py++ {
			for px := max(ox-1, 0); px <= min(ox+1, w-1); px++ {
				id := im.pixels[4*(py*w+px)]
				if id == 0 || containsID(tried[:n], id) {
					continue
				}
				tried[n] = id
				n++
				dr := &f.draws[int(id)-1]
				o := dr.modelFromSensor.Col(3).Vec3()
				dir := dr.modelFromSensor.Mul4x1(b.Vec4(0)).Vec3()
				if t, hit := dr.geom.Intersect(o, dir, best); hit {
					best = t
				}
			}
		}
		if !math.IsInf(best, 1) {
			return best, true
		}
		k := 4 * (oy*w + ox)
		if im.pixels[k] == 0 {
			return math.Inf(1), true
		}
		// A sliver too thin for the hierarchy's hit test at the pixel's own
		// triangle: take that triangle's plane.
		if v0, v1, v2, ok := f.draws[int(im.pixels[k])-1].triangle(int(im.pixels[k+1])); ok {
			if t := planeHit(b, v0, v1, v2); t > 0 {
				return t, true
			}
		}
		return math.Inf(1), true
	}
	return 0, false
}

// planeHit returns the distance along b from the sensor origin to the plane
// of a triangle (+Inf if parallel).
func planeHit(b, v0, v1, v2 mgl64.Vec3) float64 {
	n := v1.Sub(v0).Cross(v2.Sub(v0))
	c := n.Dot(b)
	if c == 0 {
		return math.Inf(1)
	}
	return n.Dot(v0) / c
}

func containsID(ids []float32, id float32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
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
	drawID     gls.Uniform
	geoms      map[[32]byte]*gpuGeometry
}

func (r *Renderer) surfaces(gs *gls.GLS) *surfaceState {
	if r.surf != nil {
		return r.surf
	}
	st := &surfaceState{geoms: map[[32]byte]*gpuGeometry{}, reversedZ: gpu.HasZeroToOneDepth(gs)}
	st.sensorFrom.Init("SensorFromModel")
	st.clipFrom.Init("ClipFromSensor")
	st.drawID.Init("DrawID")
	r.g3n.AddShader("simvis_surface_vertex", surfaceVertexShader)
	r.g3n.AddShader(idProgram+"_fragment", idFragmentShader)
	r.g3n.AddShader(depthProgram+"_fragment", depthFragmentShader)
	r.g3n.AddProgram(idProgram, "simvis_surface_vertex", idProgram+"_fragment")
	r.g3n.AddProgram(depthProgram, "simvis_surface_vertex", depthProgram+"_fragment")
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

// renderSurfaces renders each view of a sensor at sensorWorld into
// f.images (one per view, reused between frames when sizes match). The
// scene must be up to date (Scene.Update).
func (r *Renderer) renderSurfaces(s *scene.Scene, sensorWorld mgl64.Mat4, views []surfaceView, f *surfaceFrame, mode surfaceMode) error {
	f.meshes = s.SensedMeshes(f.meshes[:0])
	f.draws = f.draws[:0]
	f.drawn, f.total = 0, 0
	sensorFromWorld := sensorWorld.Inv()
	for _, m := range f.meshes {
		sensorFromModel := sensorFromWorld.Mul4(m.World)
		modelFromSensor := sensorFromModel.Inv()
		for _, p := range m.Mesh.Primitives {
			if len(p.Indices) < 3 {
				continue
			}
			f.total += len(p.Indices) / 3
			d := drawRecord{prim: p, sensorFromModel: sensorFromModel, modelFromSensor: modelFromSensor}
			if mode == modeIDs {
				d.geom = r.beamGeometry(p)
			}
			f.draws = append(f.draws, d)
		}
	}
	program, format, channels := idProgram, gpu.ColorRGBA32F, 4
	if mode == modeDepth {
		program, format, channels = depthProgram, gpu.ColorR32F, 1
	}
	for len(f.images) < len(views) {
		f.images = append(f.images, &surfaceImage{})
	}
	f.images = f.images[:len(views)]
	for i, v := range views {
		if len(f.images[i].pixels) != channels*v.w*v.h {
			f.images[i].pixels = make([]float32, channels*v.w*v.h)
		}
		f.images[i].view = v
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
			viewFromSensor := v.rot.Transpose()
			clip := mat32(v.projection(st.reversedZ).Mul4(glFromSensor).Mul4(viewFromSensor))
			gs.UniformMatrix4fv(st.clipFrom.Location(gs), 1, false, &clip[0])
			planes := v.frustumPlanes()
			for di := range f.draws {
				d := &f.draws[di]
				g := st.geometry(gs, d.prim)
				c := viewFromSensor.Mul4(d.sensorFromModel).Mul4x1(g.center.Vec4(1)).Vec3()
				if outside(planes, c, g.radius*maxScale(d.sensorFromModel)) {
					continue
				}
				m32 := mat32(d.sensorFromModel)
				gs.UniformMatrix4fv(st.sensorFrom.Location(gs), 1, false, &m32[0])
				if mode == modeIDs {
					gs.Uniform1f(st.drawID.Location(gs), float32(di+1))
				}
				gs.BindVertexArray(g.vao)
				gs.DrawElements(gls.TRIANGLES, g.count, gls.UNSIGNED_INT, 0)
				f.drawn += int(g.count) / 3
			}
			gs.BindVertexArray(0)
			if err := fb.ReadFloat(gs, f.images[i].pixels); err != nil {
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
// frame as (normal, offset), inside where normal·p >= offset.
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

// outside reports whether a sphere lies entirely outside one of the planes.
func outside(planes [6]mgl64.Vec4, c mgl64.Vec3, radius float64) bool {
	for _, p := range planes {
		if p.Vec3().Dot(c)-p[3] < -radius {
			return true
		}
	}
	return false
}

// maxScale bounds how much m stretches lengths: the largest of its axes'
// lengths (exact for the rotations and axis scales elements make).
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
