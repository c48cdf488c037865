package sensors

import (
	"fmt"
	"image"
	"math"
	"strings"

	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/math32"
	"github.com/g3n/engine/renderer"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/scene"
)

// Renderer draws scenes offscreen on one GL context (an EGL device on a GPU
// machine, Mesa llvmpipe without one). All GL work runs on the context's own
// thread; Renderer's methods may be called from any goroutine.
type Renderer struct {
	ctx  *gpu.Context
	g3n  *renderer.Renderer
	fbos map[fboKey]*gpu.Framebuffer

	surf   *surfaceState // range-sensor rendering, made on first use
	shadow *shadowState  // camera shadow maps, made on first use
	// meshes are the sensed primitives' meshes the renderer's own passes
	// draw (meshes.go), by geometry key; g3n keeps its own for cameras.
	meshes map[[32]byte]*primMesh
	// anisotropy is the most texture samples anisotropic filtering may
	// take (0: the GL has none).
	anisotropy float32
	// reversedZ: the context takes [0, 1] clip depth, so float depth can be
	// reversed (read once, at creation).
	reversedZ bool
	caster    casterState  // the CPU backend of range sensors
	compute   computeState // the GPU backend's compute caster (under caster's lock)
	pictures  pictureList  // reads started and not yet finished
	worlds    placedWorlds // whose g3n world matrices are up to date (GL thread)
}

type fboKey struct {
	w, h  int
	color gpu.ColorFormat
}

// NewRenderer creates the GL context and the g3n renderer.
func NewRenderer() (*Renderer, error) {
	ctx, err := gpu.New()
	if err != nil {
		return nil, err
	}
	r, err := NewRendererOn(ctx)
	if err != nil {
		ctx.Close()
		return nil, err
	}
	return r, nil
}

// initGL makes the g3n renderer and reads what the renderer needs to know
// of the GL, on the context's thread: every constructor of a Renderer
// calls it.
func (r *Renderer) initGL(gs *gls.GLS) error {
	r.g3n = renderer.NewRenderer(gs)
	if err := r.g3n.AddDefaultShaders(); err != nil {
		return fmt.Errorf("sensors: compiling shaders: %w", err)
	}
	// Standard materials draw with our shader: shadows, alpha test,
	// unclamped radiance (shading.go).
	r.g3n.AddShader("standard_vertex", litVertexShader)
	r.g3n.AddShader("standard_fragment", litFragmentShader)
	r.anisotropy = gpu.MaxAnisotropy(gs)
	if softwareRasterizer(r.ctx.Info()) {
		// Mesa's llvmpipe filters every texel on the CPU: its 16x
		// anisotropic filtering more than doubled the RAVON stereo pair's
		// cost (45 -> 100 ms of CPU a pair), so software rasterizers get
		// trilinear mipmaps only; GPUs get the most they offer.
		r.anisotropy = min(r.anisotropy, 1)
	}
	// Sorting only matters for blending; transparent materials are
	// sorted by g3n regardless, opaque ones rely on the depth test.
	r.g3n.SetObjectSorting(true)
	r.reversedZ = gpu.HasZeroToOneDepth(gs)
	return nil
}

// softwareRasterizer tells whether the GL draws on the CPU (Mesa's
// llvmpipe, softpipe or swrast).
func softwareRasterizer(info gpu.Info) bool {
	for _, name := range []string{"llvmpipe", "softpipe", "swrast"} {
		if strings.Contains(info.Renderer, name) {
			return true
		}
	}
	return info.Device == "software"
}

// Info describes the GL context in use.
func (r *Renderer) Info() gpu.Info { return r.ctx.Info() }

// Close releases the GL context.
func (r *Renderer) Close() error { return r.ctx.Close() }

// Stats returns g3n's count of GL objects alive (vertex arrays, buffers,
// textures): the figures that show shared meshes uploaded once.
func (r *Renderer) Stats() (st gls.Stats, err error) {
	err = r.ctx.Do(func(gs *gls.GLS) error {
		gs.Stats(&st)
		return nil
	})
	return st, err
}

// View is a pinhole view: a world pose in the sensor convention (looking
// along +x, +z up) and a symmetric frustum.
type View struct {
	Pose          mgl64.Mat4 // sensor frame -> world
	Width, Height int
	HFOV          float64 // horizontal field of view, degrees
	Near, Far     float64 // meters
	Background    [3]float32
	// Viewer marks a render for people rather than for a simulated sensor:
	// it also draws geometry marked sensed="false".
	Viewer bool
	// Shadows draws the shadows of the lights that cast them
	// (scene.ShadowCaster): cameras set it; depth and range views never
	// have shadows.
	Shadows bool
}

// VFOV returns the vertical field of view in degrees implied by HFOV and the
// aspect ratio (square pixels).
func (v View) VFOV() float64 {
	t := math.Tan(mgl64.DegToRad(v.HFOV)/2) * float64(v.Height) / float64(v.Width)
	return mgl64.RadToDeg(2 * math.Atan(t))
}

// sensorToGL turns the sensor convention (x forward, y left, z up) into the
// GL camera's (x right, y up, looking along -z).
var sensorToGL = mgl64.Mat4{
	0, -1, 0, 0, // GL x axis (right) = sensor -y
	0, 0, 1, 0, // GL y axis (up) = sensor +z
	-1, 0, 0, 0, // GL z axis (back) = sensor -x
	0, 0, 0, 1,
}

// glCamera implements g3n's camera.ICamera with matrices computed in float64.
type glCamera struct{ view, proj math32.Matrix4 }

func (c *glCamera) ViewMatrix(m *math32.Matrix4) { *m = c.view }
func (c *glCamera) ProjMatrix(m *math32.Matrix4) { *m = c.proj }

func (v View) camera() *glCamera {
	view := v.Pose.Mul4(sensorToGL).Inv()
	proj := mgl64.Perspective(mgl64.DegToRad(v.VFOV()), float64(v.Width)/float64(v.Height), v.Near, v.Far)
	c := &glCamera{}
	for i := range view {
		c.view[i] = float32(view[i])
		c.proj[i] = float32(proj[i])
	}
	return c
}

// RenderRGBA draws the scene as seen from v into an RGBA image.
func (r *Renderer) RenderRGBA(s *scene.Scene, v View) (*image.RGBA, error) {
	p, img, err := r.startRGBA(s, v, nil)
	if err == nil {
		err = p.wait()
	}
	if err != nil {
		return nil, err
	}
	return img, nil
}

// RenderRadiance draws the scene as seen from v into a float RGBA target
// and returns its pixels, 4 floats each, rows top-down: the linear
// radiance the shading computes, not clamped at 1 (the background is its
// color). Alpha is what blending left.
func (r *Renderer) RenderRadiance(s *scene.Scene, v View) ([]float32, error) {
	p, pix, err := r.startRadiance(s, v, nil)
	if err == nil {
		err = p.wait()
	}
	if err != nil {
		return nil, err
	}
	return pix, nil
}

// framebuffer returns a cached offscreen target of the size and format.
func (r *Renderer) framebuffer(gs *gls.GLS, w, h int, color gpu.ColorFormat) (*gpu.Framebuffer, error) {
	key := fboKey{w, h, color}
	if fb, ok := r.fbos[key]; ok {
		return fb, nil
	}
	fb, err := gpu.NewFramebuffer(gs, w, h, color)
	if err != nil {
		return nil, err
	}
	r.fbos[key] = fb
	return fb, nil
}
