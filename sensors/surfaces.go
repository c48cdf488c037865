package sensors

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/renderer"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/raycast"
)

// How the GPU backend of range sensors measures. A range has one
// definition, the same on every backend: the distance to the nearest
// sensed triangle that the beam meets at a texel its material does not
// cut away (models.Cutout), in float64, as the exact caster
// (sensors/raycast) finds it. The GPU proposes, the caster decides:
//
//   - the GPU renders, for every pixel, which mesh (draw) and triangle is
//     seen there and at what range, and each beam is intersected exactly
//     with the meshes seen in the 3x3 pixels around the pixel its own
//     direction falls in: the nearest such hit is the beam's candidate
//     (+Inf where none is seen);
//   - the exact caster then casts the beam looking only nearer than the
//     candidate (a bound that prunes most of the hierarchy), and its hit is
//     the range; where it finds none (the candidate was no hit after all:
//     a rounding apart, or a depth camera's float32 depth), the beam is
//     cast again unbounded.
//
// So nothing the rasterizer misses (a sliver whose fragments cover no
// pixel near the beam, which no drawing of edges makes certain) and
// nothing it draws that is not there (a leaf card's cut-away texels) can
// change a range: the GPU only saves the caster work. Surfaces in front of
// the views' near plane are clipped from the render: the beam's stretch in
// front of it is intersected with the few meshes that reach into it. The
// ID render also draws every triangle's edges as lines and its corners as
// points (edges.go), so that thin surfaces leave candidates, and the views
// have several pixels per beam spacing (oversample). The depth buffer only
// decides what is in front; it is reversed-Z float (near at 1, infinity at
// 0) where GL 4.5 allows.
//
// Depth cameras' GPU backend proposes each pixel's candidate from the
// depth its shader writes (the interpolated position's, on the triangle
// and on the pixel center's ray to float32), with a margin for float32.

const surfaceVertexShader = `
layout(location = 0) in vec3 VertexPosition;
layout(location = 1) in vec2 VertexTexcoord;
uniform mat4 SensorFromModel;
uniform mat4 ClipFromSensor;
out vec3 P;
out vec2 UV;
void main() {
    vec4 p = SensorFromModel * vec4(VertexPosition, 1.0);
    P = p.xyz;
    UV = VertexTexcoord;
    gl_Position = ClipFromSensor * p;
}
`

// cutoutTest discards what a masked or blended material cuts away
// (models.Cutout): its alpha at level 0, by the magnification filter,
// below MinAlpha (0: the material cuts nothing). Segmentation sees the
// holes this way; for range sensors and depth cameras it only spares the
// exact caster candidates it would overrule.
const cutoutTest = `
uniform sampler2D CutAlpha;
uniform float MinAlpha;
in vec2 UV;
void cutout() {
    if (MinAlpha > 0.0 && textureLod(CutAlpha, UV, 0.0).r < MinAlpha) discard;
}
`

// Float channels hold integers exactly up to 2^24 (exactIDs): draws and
// triangles per draw stay far below; a primitive of over 5.6 million
// triangles gets no corner points, whose numbers would not fit.
//
// Besides the filled triangles (Kind 0), the ID render draws the edges of
// the triangles as lines (1: primitive k is the edge set's line k) and
// their corners as points (2: primitive k is index k, of triangle k / 3).
const idFragmentShader = `
precision highp float;
uniform float DrawID;
uniform float Kind;
in vec3 P;
out vec4 ID;
` + cutoutTest + `
void main() {
    cutout();
    ID = vec4(DrawID, float(gl_PrimitiveID), length(P), Kind);
}
`

const depthFragmentShader = `
precision highp float;
in vec3 P;
out vec4 Depth;
` + cutoutTest + `
void main() {
    cutout();
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
	modeIDs   surfaceMode = iota // draw index + 1, triangle index and range (RGBA32F); 0 where nothing was hit
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
	world           mgl64.Mat4 // the mesh's world transform
	sensorFromModel mgl64.Mat4
	modelFromSensor mgl64.Mat4
	geom            *raycast.Geometry // for exact beams (modeIDs only)
	edges           *edgeSet          // modeIDs only
}

// pixelTriangles returns the triangle an ID pixel's primitive belongs to,
// and for an edge between two triangles the other one (else -1).
func (d *drawRecord) pixelTriangles(prim, kind float32) (int, int) {
	k := int(prim)
	switch kind {
	case 1:
		if k < 0 || k >= len(d.edges.tri) {
			return -1, -1
		}
		return int(d.edges.tri[k][0]), int(d.edges.tri[k][1])
	case 2:
		return k / 3, -1
	}
	return k, -1
}

// surfaceFrame is what one sensor's render needs between the render and
// reading its pixels; each sensor owns one, so sensors may render from
// different goroutines.
type surfaceFrame struct {
	meshes  []scene.MeshInstance
	version uint64 // the scene version meshes were read at (0: none)
	draws   []drawRecord
	images  []*surfaceImage
	drawn   int   // triangles drawn in the last render, all views (after culling)
	visible []int // draws inside the view being rendered
	total   int   // triangles of the sensed meshes

	nearDraws []int // draws whose bounds reach into the views' near region
}

// localRay returns the sensor-frame ray from the origin along b in the
// draw's model coordinates (t keeps sensor-frame meters).
func (d *drawRecord) localRay(b mgl64.Vec3) (o, dir mgl64.Vec3) {
	return d.modelFromSensor.Col(3).Vec3(), d.modelFromSensor.Mul4x1(b.Vec4(0)).Vec3()
}

// beamsPerWorker is the fewest beams worth a goroutine of their own.
const beamsPerWorker = 2048

// rangesAlong writes every beam's candidate range (unit directions,
// sensor frame; see seenHit) into out, on all cores for large scans; it returns the first beam that no view
// sees, or -1.
func (f *surfaceFrame) rangesAlong(dirs []mgl64.Vec3, out []float64) int {
	workers := max(1, min(runtime.GOMAXPROCS(0), len(dirs)/beamsPerWorker))
	if workers == 1 { // a scan: no goroutine, no allocation
		for i, b := range dirs {
			rg, ok := f.rangeAlong(b)
			if !ok {
				return i
			}
			out[i] = rg
		}
		return -1
	}
	chunk := (len(dirs) + workers - 1) / workers
	bad := make([]int, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(dirs))
		bad[w] = -1
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				rg, ok := f.rangeAlong(dirs[i])
				if !ok {
					bad[w] = i
					return
				}
				out[i] = rg
			}
		}()
	}
	wg.Wait()
	for _, i := range bad {
		if i >= 0 {
			return i
		}
	}
	return -1
}

// rangeAlong returns the candidate range along the unit direction b
// (sensor frame), +Inf where nothing is seen hit, and whether one of the
// views sees b.
func (f *surfaceFrame) rangeAlong(b mgl64.Vec3) (float64, bool) {
	for _, im := range f.images {
		d := im.view.rot.Transpose().Mul4x1(b.Vec4(0)).Vec3()
		u, v, ok := im.view.project(d)
		w, h := im.view.w, im.view.h
		if !ok || u < 0 || v < 0 || u > float64(w) || v > float64(h) {
			continue
		}
		// The render clipped whatever lies in front of the near plane;
		// that stretch of the beam is intersected with the few meshes near
		// enough to reach into it. A margin beyond the plane covers float32
		// clipping: any hit found here is exact all the same.
		if t, hit := f.nearHit(b, 1.01*im.view.near/d[0]); hit {
			return t, true
		}
		return f.seenHit(im, min(int(u), w-1), min(int(v), h-1), b), true
	}
	return 0, false
}

// seenHit returns the candidate range along b, whose direction falls in
// pixel (ox, oy) of im: the nearest exact hit on the meshes seen in the
// 3x3 pixels around it (on that one triangle where all nine saw the same),
// +Inf where none is hit. The exact caster confirms or overrules it.
func (f *surfaceFrame) seenHit(im *surfaceImage, ox, oy int, b mgl64.Vec3) float64 {
	w, h := im.view.w, im.view.h
	var draws [9]int
	n := 0
	firstDraw, firstTri, _, _ := f.pixel(im, ox, oy)
	uniform := firstDraw >= 0
	for py := max(oy-1, 0); py <= min(oy+1, h-1); py++ {
		for px := max(ox-1, 0); px <= min(ox+1, w-1); px++ {
			di, tri, _, _ := f.pixel(im, px, py)
			if di != firstDraw || tri != firstTri {
				uniform = false
			}
			if di >= 0 && !slices.Contains(draws[:n], di) {
				draws[n] = di
				n++
			}
		}
	}
	if n == 0 {
		return math.Inf(1)
	}
	if uniform {
		dr := &f.draws[firstDraw]
		o, dir := dr.localRay(b)
		if t, hit := dr.geom.IntersectTriangle(firstTri, o, dir, math.Inf(1)); hit {
			return t
		}
	}
	best := math.Inf(1)
	for _, di := range draws[:n] {
		dr := &f.draws[di]
		o, dir := dr.localRay(b)
		if t, hit := dr.geom.Intersect(o, dir, best); hit {
			best = t
		}
	}
	return best
}

// pixel returns the draw (-1 for none) and triangle an ID pixel saw (and
// on an edge, the other triangle there, else -1), and the range there.
func (f *surfaceFrame) pixel(im *surfaceImage, px, py int) (draw, tri, tri2 int, r float64) {
	k := 4 * (py*im.view.w + px)
	id := int(im.pixels[k])
	if id <= 0 || id > len(f.draws) {
		return -1, -1, -1, 0
	}
	tri, tri2 = f.draws[id-1].pixelTriangles(im.pixels[k+1], im.pixels[k+3])
	return id - 1, tri, tri2, float64(im.pixels[k+2])
}

// nearHit intersects the beam's first tmax meters with the meshes that
// reach into the near region.
func (f *surfaceFrame) nearHit(b mgl64.Vec3, tmax float64) (float64, bool) {
	best, hit := tmax, false
	for _, di := range f.nearDraws {
		dr := &f.draws[di]
		o, dir := dr.localRay(b)
		if t, ok := dr.geom.Intersect(o, dir, best); ok {
			best, hit = t, true
		}
	}
	return best, hit
}

// findNearDraws lists the draws whose bounds reach within radius of the
// sensor: the distance from the sensor to a draw's box (in its model's
// coordinates) is at most the norm of modelFromSensor (bounded by its
// Frobenius norm, which holds for any scale or shear) times the distance
// in the sensor frame.
func (f *surfaceFrame) findNearDraws(radius float64) {
	f.nearDraws = f.nearDraws[:0]
	for i := range f.draws {
		d := &f.draws[i]
		lo, hi := d.geom.Bounds()
		o := d.modelFromSensor.Col(3).Vec3()
		var gap mgl64.Vec3
		for k := 0; k < 3; k++ {
			gap[k] = math.Max(0, math.Max(lo[k]-o[k], o[k]-hi[k]))
		}
		norm := 0.0
		for c := 0; c < 3; c++ {
			norm += d.modelFromSensor.Col(c).Vec3().LenSqr()
		}
		// A box around the sensor (its own robot's body) is common; its
		// triangles rarely come that close, and testing every beam or
		// pixel against them would cost more than the render.
		if r := radius * math.Sqrt(norm); gap.Len() < r && d.geom.Near(o, r) {
			f.nearDraws = append(f.nearDraws, i)
		}
	}
}

// beginSurfacePass makes program current and sets the state every surface
// pass draws with (opaque, both faces, depth tested: gpu.SetSolidState),
// with reversed-Z and [0, 1] clip depth where the context has them;
// restore puts the clip depth back.
func (r *Renderer) beginSurfacePass(gs *gls.GLS, program string) (st *surfaceState, restore func(), err error) {
	st = r.surfaces(gs)
	if _, err := r.g3n.SetProgram(&renderer.ShaderSpecs{Name: program, ShaderUnique: true}); err != nil {
		return nil, nil, fmt.Errorf("sensors: %s shader: %w", program, err)
	}
	restore = func() {}
	if r.reversedZ {
		gpu.SetZeroToOneDepth(gs, true)
		restore = func() { gpu.SetZeroToOneDepth(gs, false) }
	}
	gpu.SetSolidState(gs, r.reversedZ) // surfaces are seen from both sides
	return st, restore, nil
}

// clearedTarget binds a w x h framebuffer and clears it: color 0 (nothing
// seen) and the farthest depth, reversed-Z where the context has it.
func (r *Renderer) clearedTarget(gs *gls.GLS, w, h int, format gpu.ColorFormat) (*gpu.Framebuffer, error) {
	fb, err := r.framebuffer(gs, w, h, format)
	if err != nil {
		return nil, err
	}
	far := float32(1)
	if r.reversedZ {
		far = 0
	}
	fb.ClearTo(gs, 0, 0, 0, 0, far)
	return fb, nil
}

// reversedZNear is the near plane of depth views where the context has
// reversed-Z float depth.
const reversedZNear = 1e-3

// depthViews returns depth views with their near plane at reversedZNear
// where the context has reversed-Z float depth. A depth view's values are
// interpolated, not read from the depth buffer, which only decides what is
// in front; with float depth reversed, its precision hardly depends on the
// near plane, so it can sit 1 mm ahead: the candidates of pixels behind
// a robot's own body around its camera are then the body, not what lies
// beyond it (the caster finds what the near plane clipped either way, but
// a near candidate bounds its search tighter).
func (r *Renderer) depthViews(views []surfaceView) []surfaceView {
	if !r.reversedZ {
		return views
	}
	out := make([]surfaceView, len(views))
	for i, v := range views {
		v.near = math.Min(v.near, reversedZNear)
		out[i] = v
	}
	return out
}

// surfaceState is the renderer's GL state for surface rendering, made on
// first use on the context's thread.
type surfaceState struct {
	sensorFrom gls.Uniform
	clipFrom   gls.Uniform
	drawID     gls.Uniform
	kind       gls.Uniform
	cutAlpha   gls.Uniform
	minAlpha   gls.Uniform
	cuts       map[*models.Material]cutState
}

// cutState is a material's cut-out as uploaded: its alpha texture and the
// least alpha kept (0: it cuts nothing), or all: it cuts everything away.
type cutState struct {
	tex      *gpu.Texture
	minAlpha float32
	all      bool
}

// cutoutUnit is the texture unit of the cut-outs' alpha in surface passes.
const cutoutUnit = 12

// cut returns the cut-out state of a primitive's material, uploaded on
// first use.
func (st *surfaceState) cut(gs *gls.GLS, m *models.Material) (cutState, error) {
	if m == nil || m.AlphaMode == models.AlphaOpaque {
		return cutState{}, nil
	}
	if c, ok := st.cuts[m]; ok {
		return c, nil
	}
	var c cutState
	if co := m.Cutout(); co != nil {
		if co.Everywhere() {
			c.all = true
		} else {
			ct := co.Texture()
			c.minAlpha = ct.MinAlpha
			sampling := gpu.Sampling{Filter: gpu.Linear, WrapS: scene.GLWrap(ct.WrapS), WrapT: scene.GLWrap(ct.WrapT)}
			if ct.Nearest {
				sampling.Filter = gpu.Nearest
			}
			var err error
			if c.tex, err = gpu.NewTextureR8(gs, ct.Width, ct.Height, ct.Alpha, sampling); err != nil {
				return c, fmt.Errorf("sensors: cut-out of a material: %w", err)
			}
		}
	}
	st.cuts[m] = c
	return c, nil
}

// useCut sets the cut-out uniforms for a primitive's draw; false where
// its material cuts it all away (nothing to draw).
func (st *surfaceState) useCut(gs *gls.GLS, p *models.Primitive) (bool, error) {
	c, err := st.cut(gs, p.Material)
	if err != nil || c.all {
		return false, err
	}
	gs.Uniform1f(st.minAlpha.Location(gs), c.minAlpha)
	if c.minAlpha > 0 {
		c.tex.Bind(gs, cutoutUnit)
	}
	return true, nil
}

func (r *Renderer) surfaces(gs *gls.GLS) *surfaceState {
	if r.surf != nil {
		return r.surf
	}
	st := &surfaceState{cuts: map[*models.Material]cutState{}}
	st.cutAlpha.Init("CutAlpha")
	st.minAlpha.Init("MinAlpha")
	st.sensorFrom.Init("SensorFromModel")
	st.clipFrom.Init("ClipFromSensor")
	st.drawID.Init("DrawID")
	st.kind.Init("Kind")
	r.g3n.AddShader("simvis_surface_vertex", surfaceVertexShader)
	r.g3n.AddShader(idProgram+"_fragment", idFragmentShader)
	r.g3n.AddShader(depthProgram+"_fragment", depthFragmentShader)
	r.g3n.AddProgram(idProgram, "simvis_surface_vertex", idProgram+"_fragment")
	r.g3n.AddProgram(depthProgram, "simvis_surface_vertex", depthProgram+"_fragment")
	r.surf = st
	return st
}

// renderSurfaces renders each view of a sensor at sensorWorld into
// f.images (one per view, reused between frames when sizes match). The
// scene must be up to date (Scene.Update).
func (r *Renderer) renderSurfaces(s *scene.Scene, sensorWorld mgl64.Mat4, views []surfaceView, f *surfaceFrame, mode surfaceMode) error {
	// An unchanged scene (scene.Scene.Version) is not walked again.
	if v := s.Version(); v != f.version {
		f.meshes = s.SensedMeshes(f.meshes[:0])
		f.version = v
	}
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
			d := drawRecord{prim: p, world: m.World, sensorFromModel: sensorFromModel, modelFromSensor: modelFromSensor}
			// Depth views need the geometry too, for surfaces in front of
			// the near plane (cached per primitive: built once).
			d.geom, d.edges = r.beamGeometry(p)
			f.draws = append(f.draws, d)
		}
	}
	if mode == modeDepth {
		views = r.depthViews(views)
	}
	reach := 0.0
	for _, v := range views {
		reach = math.Max(reach, 1.01*v.near*math.Sqrt(1+v.tanX*v.tanX+v.tanY*v.tanY))
	}
	if mode == modeIDs {
		f.findNearDraws(reach)
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
		st, restore, err := r.beginSurfacePass(gs, program)
		if err != nil {
			return err
		}
		defer restore()
		gs.Uniform1i(st.cutAlpha.Location(gs), cutoutUnit)
		for i, v := range views {
			fb, err := r.clearedTarget(gs, v.w, v.h, format)
			if err != nil {
				return err
			}
			viewFromSensor := v.rot.Transpose()
			clip := mat32(v.projection(r.reversedZ).Mul4(glFromSensor).Mul4(viewFromSensor))
			gs.UniformMatrix4fv(st.clipFrom.Location(gs), 1, false, &clip[0])
			planes := v.frustumPlanes()
			f.visible = f.visible[:0]
			for di := range f.draws {
				d := &f.draws[di]
				g, err := r.mesh(gs, d.prim, d.edges)
				if err != nil {
					return err
				}
				// Two matrix-vector products, not a matrix product per draw.
				c := viewFromSensor.Mul4x1(d.sensorFromModel.Mul4x1(g.center.Vec4(1))).Vec3()
				if !outside(planes, c, g.radius*maxScale(d.sensorFromModel)) {
					f.visible = append(f.visible, di)
					f.drawn += g.Indices() / 3
				}
			}
			// Beams also need what covers no pixel center: every
			// triangle's edges and corners are drawn too, so that a
			// surface thinner than a pixel leaves its draw and triangle
			// within a pixel of any beam that hits it (GL rasterizes a line
			// in every column or row it crosses, a point in its pixel).
			allPasses := [3]gpu.Primitive{gpu.Triangles, gpu.Edges, gpu.Corners}
			passes := allPasses[:1]
			if mode == modeIDs {
				passes = allPasses[:]
			}
			for _, prim := range passes {
				if mode == modeIDs {
					gs.Uniform1f(st.kind.Location(gs), kindOf[prim])
				}
				for _, di := range f.visible {
					d := &f.draws[di]
					g, err := r.mesh(gs, d.prim, d.edges)
					if err != nil {
						return err
					}
					if ok, err := st.useCut(gs, d.prim); !ok {
						if err != nil {
							return err
						}
						continue
					}
					m32 := mat32(d.sensorFromModel)
					gs.UniformMatrix4fv(st.sensorFrom.Location(gs), 1, false, &m32[0])
					if mode == modeIDs {
						gs.Uniform1f(st.drawID.Location(gs), float32(di+1))
					}
					if prim == gpu.Corners && g.Indices() >= exactIDs {
						continue
					}
					g.Draw(gs, prim)
				}
			}
			gpu.UnbindMesh(gs)
			if err := fb.ReadFloat(gs, f.images[i].pixels); err != nil {
				return err
			}
		}
		return nil
	})
}

// exactIDs bounds the primitive numbers a float32 channel holds exactly.
const exactIDs = 1 << 24

// kindOf is the Kind each pass of the ID render writes.
var kindOf = [...]float32{gpu.Triangles: 0, gpu.Edges: 1, gpu.Corners: 2}

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
