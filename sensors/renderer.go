package sensors

import (
	"fmt"
	"image"
	"math"
	"strings"
	"unsafe"

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
	p, err := r.startRGBA(s, v)
	if err != nil {
		return nil, err
	}
	return p.rgba()
}

// RenderRadiance draws the scene as seen from v into a float RGBA target
// and returns its pixels, 4 floats each, rows top-down: the linear
// radiance the shading computes, not clamped at 1 (the background is its
// color). Alpha is what blending left.
func (r *Renderer) RenderRadiance(s *scene.Scene, v View) ([]float32, error) {
	p, err := r.startRadiance(s, v)
	if err != nil {
		return nil, err
	}
	return p.radiance()
}

// pendingPicture is a picture drawn whose read-back is under way
// (gpu.Framebuffer.StartRead): a cycle's cameras are all drawn before the
// first is waited for, so that no sensor stalls the GPU on its own.
type pendingPicture struct {
	r    *Renderer
	read *gpu.PendingRead
	w, h int
}

// startRGBA draws v into an 8-bit target and starts reading it; see rgba.
func (r *Renderer) startRGBA(s *scene.Scene, v View) (pendingPicture, error) {
	return r.startRender(s, v, gpu.ColorRGBA8)
}

// startRadiance draws v into a float target and starts reading it; see
// radiance.
func (r *Renderer) startRadiance(s *scene.Scene, v View) (pendingPicture, error) {
	return r.startRender(s, v, gpu.ColorRGBA32F)
}

// rgba waits for a picture of startRGBA.
func (p pendingPicture) rgba() (*image.RGBA, error) {
	img := image.NewRGBA(image.Rect(0, 0, p.w, p.h))
	// Blended drawing (transparent materials, label text) leaves alpha
	// below 1 where it blends; a camera picture is opaque. Setting it in
	// the copy out of the read costs next to nothing; a color-masked clear
	// on llvmpipe cost more than a loop of its own.
	err := p.r.ctx.Do(func(gs *gls.GLS) error { return p.read.FinishOpaque(gs, img.Pix) })
	if err != nil {
		return nil, err
	}
	return img, nil
}

// radiance waits for a picture of startRadiance.
func (p pendingPicture) radiance() ([]float32, error) {
	pix := make([]float32, 4*p.w*p.h)
	return pix, p.finish(unsafe.Slice((*byte)(unsafe.Pointer(&pix[0])), 4*len(pix)))
}

// finish waits for the read and fills dst.
func (p pendingPicture) finish(dst []byte) error {
	return p.r.ctx.Do(func(gs *gls.GLS) error { return p.read.Finish(gs, dst) })
}

// startRender draws the scene as seen from v into a cached target of the
// format and starts reading it back, on the GL thread.
func (r *Renderer) startRender(s *scene.Scene, v View, format gpu.ColorFormat) (pendingPicture, error) {
	if v.Width <= 0 || v.Height <= 0 {
		return pendingPicture{}, fmt.Errorf("sensors: image size %dx%d", v.Width, v.Height)
	}
	if err := s.PrepareRender(v.Viewer); err != nil {
		return pendingPicture{}, err
	}
	s.SetAnisotropy(r.anisotropy)
	cam := v.camera()
	camView := v.Pose.Mul4(sensorToGL).Inv()
	p := pendingPicture{r: r, w: v.Width, h: v.Height}
	err := r.ctx.Do(func(gs *gls.GLS) error {
		if err := r.prepareShadows(gs, s, v.Shadows, camView); err != nil {
			return err
		}
		fb, err := r.framebuffer(gs, v.Width, v.Height, format)
		if err != nil {
			return err
		}
		fb.Bind(gs)
		fb.Clear(gs, v.Background[0], v.Background[1], v.Background[2], 1)
		if err := r.g3n.Render(s.G3N(), cam); err != nil {
			return fmt.Errorf("sensors: render: %w", err)
		}
		p.read, err = fb.StartRead(gs)
		return err
	})
	return p, err
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
