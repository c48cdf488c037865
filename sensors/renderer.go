package sensors

import (
	"fmt"
	"image"
	"math"

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

	surf *surfaceState // range-sensor rendering, made on first use
	// reversedZ: the context takes [0, 1] clip depth, so float depth can be
	// reversed (read once, at creation).
	reversedZ bool
	caster    casterState // the CPU backend of range sensors
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
	if v.Width <= 0 || v.Height <= 0 {
		return nil, fmt.Errorf("sensors: image size %dx%d", v.Width, v.Height)
	}
	if err := s.PrepareRender(v.Viewer); err != nil {
		return nil, err
	}
	img := image.NewRGBA(image.Rect(0, 0, v.Width, v.Height))
	cam := v.camera()
	err := r.ctx.Do(func(gs *gls.GLS) error {
		fb, err := r.framebuffer(gs, v.Width, v.Height, gpu.ColorRGBA8)
		if err != nil {
			return err
		}
		fb.Bind(gs)
		fb.Clear(gs, v.Background[0], v.Background[1], v.Background[2], 1)
		if err := r.g3n.Render(s.G3N(), cam); err != nil {
			return fmt.Errorf("sensors: render: %w", err)
		}
		return fb.ReadRGBA(gs, img)
	})
	if err != nil {
		return nil, err
	}
	// Blended drawing (transparent materials, label text) leaves alpha
	// below 1 where it blends; a camera picture is opaque. Measured on
	// llvmpipe, this loop costs less than a color-masked clear on the GPU.
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	return img, nil
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
