package gpu

import (
	"errors"
	"fmt"
	"image"
	"runtime"

	"github.com/g3n/engine/gls"
)

// PlatformWindow is Info.Platform for a Context made by NewExternal: the GL
// context of a window (GLX through GLFW), not an EGL one.
const PlatformWindow = "window"

// NewExternal starts a Context whose GL context is not made here but by
// open, which runs on the Context's own locked thread and must leave a
// context current there and return g3n's state for it (a window's:
// window.Init makes a GLX context current and calls gls.New). closeFn, run
// on the same thread when the Context closes, destroys it.
//
// Why one context for a window and the sensors: GLFW's GLX context and an
// EGL surfaceless context are different context families that cannot share
// textures or buffers (share lists work only within one API), and making
// two contexts current in turn on one thread would upload every mesh twice
// and flush the pipeline at each switch. With NewExternal the window's
// context serves both: sensors draw into offscreen framebuffers in it, the
// window into its default framebuffer, one thread runs all GL work, and the
// scene's meshes exist once.
func NewExternal(open func() (*gls.GLS, error), closeFn func()) (*Context, error) {
	if open == nil {
		return nil, errors.New("gpu: NewExternal: nil open function")
	}
	c := &Context{
		jobs:    make(chan *job),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	ready := make(chan error, 1)
	go c.loopExternal(open, closeFn, ready)
	if err := <-ready; err != nil {
		<-c.stopped
		return nil, err
	}
	return c, nil
}

func (c *Context) loopExternal(open func() (*gls.GLS, error), closeFn func(), ready chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread leaves with the goroutine
	defer close(c.stopped)
	fail := func(err error) {
		if closeFn != nil {
			closeFn()
		}
		ready <- err
	}
	glsMu.Lock()
	(&gls.GLS{}).SetCheckErrors(false) // see setup: g3n exits on GL errors otherwise
	gs, err := open()
	glsMu.Unlock()
	if err != nil {
		fail(err)
		return
	}
	if gs == nil {
		fail(errors.New("gpu: NewExternal: open returned no GL state"))
		return
	}
	gs.SetCheckErrors(false)
	// The private entry points (framebuffer objects) are resolved through
	// eglGetProcAddress: with glvnd they are dispatch stubs that serve the
	// current context whatever its window-system API, GLX included.
	if err := loadEGL(); err != nil {
		fail(fmt.Errorf("gpu: EGL library (for GL entry points): %w", err))
		return
	}
	if err := loadGL(); err != nil {
		fail(fmt.Errorf("gpu: %w", err))
		return
	}
	drainGLErrors()
	c.gs = gs
	c.info = Info{
		Platform: PlatformWindow,
		Vendor:   gs.GetString(gls.VENDOR),
		Renderer: gs.GetString(gls.RENDERER),
		Version:  gs.GetString(gls.VERSION),
	}
	ready <- nil
	for {
		select {
		case j := <-c.jobs:
			c.run(j)
			j.done <- struct{}{}
		case <-c.quit:
			c.gs = nil
			if closeFn != nil {
				closeFn()
			}
			return
		}
	}
}

// ReadBackBuffer reads the default framebuffer's back buffer (a window's
// picture before it is swapped) as 8-bit RGBA into dst, top row first.
func ReadBackBuffer(gs *gls.GLS, dst *image.RGBA) error {
	b := dst.Bounds()
	if b.Dx() <= 0 || b.Dy() <= 0 || dst.Stride != 4*b.Dx() {
		return fmt.Errorf("gpu: ReadBackBuffer: want a whole, contiguous image, got %v stride %d", b, dst.Stride)
	}
	f := &Framebuffer{Width: b.Dx(), Height: b.Dy(), color: ColorRGBA8} // fbo 0: the default framebuffer
	glBindFramebuffer(gls.READ_FRAMEBUFFER, 0)
	glReadBuffer(gls.BACK)
	return f.read(dst.Pix, gls.RGBA, gls.UNSIGNED_BYTE, 4*f.Width, "ReadBackBuffer")
}

// Samples returns the bound draw framebuffer's samples per pixel (a
// window's multisampling; 0 for none).
func Samples(gs *gls.GLS) int { return int(glGetInteger(gls.SAMPLES)) }
